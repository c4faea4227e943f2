// docs/troubleshooting.md's recipe (<!-- trial-db -->), followed as written from the folder of a built site whose
// worker.js is missing: `npx h3probe` is this checkout's command, every other word is the page's. The site is the demo
// page (web/page) with the recipe's own --h2, --h3 and --beacon as its config, as a user's build has its own, and the
// package's files beside it but worker.js. The trial exits 1 naming the reason and the module's error text, its --db
// stays, and the report and the export read it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { distRoot, pageRoot, repoRoot } from '../../stack/paths.mjs';
import { runTrial } from './trialRun.mjs';

const DOC = fs.readFileSync(path.join(repoRoot, 'docs/troubleshooting.md'), 'utf8');
const BIN = path.join(repoRoot, 'web/bin/h3probe.mjs');
let dir;

/** The recipe's commands, one per line once the shell's line continuations are joined. */
function recipe() {
  const at = DOC.indexOf('<!-- trial-db -->');
  assert.ok(at >= 0, 'docs/troubleshooting.md has its <!-- trial-db --> block');
  const block = /```sh\n([\s\S]*?)\n```/.exec(DOC.slice(at))[1];
  return block.replace(/\\\n\s*/g, '').split('\n').filter(Boolean);
}

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-trial-test-'));
  const site = path.join(dir, 'dist');
  fs.cpSync(pageRoot, site, { recursive: true });
  fs.cpSync(distRoot, path.join(site, 'h3probe'), { recursive: true });
  fs.rmSync(path.join(site, 'h3probe', 'worker.js'));
  // The built page's config: the names the recipe gives the trial, every load sampled.
  const [trial] = recipe();
  const flag = (name) => new RegExp(`--${name} (\\S+)`).exec(trial)[1];
  const config = { h2Origin: flag('h2'), h3Origin: new URL(flag('h3')).origin, beaconUrl: flag('beacon'), sampleRate: 1 };
  const search = path.join(site, 'search.js');
  const code = fs.readFileSync(search, 'utf8');
  assert.ok(code.includes('const config = {};'), 'the demo page starts from an empty config');
  fs.writeFileSync(search, code.replace('const config = {};', `const config = ${JSON.stringify(config)};`));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the recipe: the trial names worker_import and its error text, and the kept database is read by report and export', { timeout: 300_000 }, async () => {
  const lines = recipe();
  assert.equal(lines.length, 3, lines.join('\n'));
  const run = (line) => runTrial('sh', ['-c', line.replace(/^npx h3probe /, `"${process.execPath}" "${BIN}" `)], { cwd: dir });
  const missing = 'worker_import: start: Failed to fetch dynamically imported module: https://localhost:\\d+/h3probe/worker\\.js';

  const trial = await run(lines[0]);
  assert.equal(trial.code, 1, trial.stderr);
  assert.match(trial.stderr, new RegExp(`page load 10 of 10: beacon stored, outcome load_error \\(${missing}\\)`));
  assert.ok(fs.existsSync(path.join(dir, 'trial.sqlite')), 'the database is kept');

  const report = await run(lines[1]);
  assert.equal(report.code, 0, report.stderr);
  assert.match(report.stdout, new RegExp(`^load errors: 10 \\(worker_import 10\\)\\n  ${missing}$`, 'm'));

  const exported = await run(lines[2]);
  assert.equal(exported.code, 0, exported.stderr);
  const rows = fs.readFileSync(path.join(dir, 'trial.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.length, 10);
  assert.ok(rows.every((r) => r.outcome === 'load_error' && r.reason === 'worker_import'), JSON.stringify(rows[0]));
});
