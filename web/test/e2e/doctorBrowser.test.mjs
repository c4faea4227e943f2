// `h3probe doctor --browser chromium|firefox` loads the page as a user's browser does (real Chromium and Firefox ESR, the page's own scripts
// and config, its search) and judges the beacon that load sends, against the local stack (real Caddy with HTTP/2 and
// HTTP/3, the real collector): the working demo page passes, with nothing stored but the doctor's test beacon; a
// stack whose module files answer 404 exits 1 naming the load_error, its reason and the module's own error text; a page
// whose config sends the module elsewhere at run time (no check that reads files can see it) fails only with
// --browser; and without a browser the files checked are those the page's moduleUrl names.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startStack } from '../../stack/stack.mjs';
import { distRoot, repoRoot } from '../../stack/paths.mjs';
import { DOCTOR_ID } from '../../cli/doctor.mjs';
import { ENGINES, engineMissing } from '../../cli/browsers.mjs';
import { MODULE_FILES } from '../../server/originRules.mjs';

const run = promisify(execFile);
let stack;
let broken;
let brokenDist;

before(async () => {
  // The package's files without the three the run needs: the gate and run.js load, the worker, glue and .wasm 404.
  brokenDist = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-doctor-dist-'));
  fs.cpSync(distRoot, brokenDist, { recursive: true });
  for (const rule of Object.values(MODULE_FILES)) fs.rmSync(path.join(brokenDist, rule.file));
  stack = await startStack({
    fixtures: {
      // A page whose script sets moduleUrl to a literal: the files are looked for there, not beside the gate.
      'app.html': '<!doctype html><title>app</title><script type="module" src="/fixtures/app.js"></script>',
      'app.js': "import { configure } from '/h3probe/h3probe.js';\nconfigure({ moduleUrl: '/elsewhere/h3probe_browser.mjs', sampleRate: 1 });\n",
    },
  });
  broken = await startStack({ roots: { module: brokenDist } });
});
after(async () => {
  await stack?.stop();
  await broken?.stop();
  fs.rmSync(brokenDist, { recursive: true, force: true });
});

// The demo page reads its config from the query string; a rate of 1 in 1,000, which the doctor's load still runs.
const pageUrl = (s, extra = {}) => `${s.urls.page}?${new URLSearchParams({ h2Origin: s.urls.h2Origin, h3Origin: s.urls.h3Origin,
  beaconUrl: s.urls.beacon, sampleRate: '0.001', ...extra })}`;

// The doctor as a user runs it (a process of its own), its exit status and JSON checks by name.
async function doctor(s, page, extra) {
  const args = [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'doctor', '--page', page, '--h2', s.urls.h2Origin, '--h3', s.urls.h3Origin,
    '--collector', s.urls.beacon, '--ca', s.certPath, '--json', '--timeout', '5000', ...s.resolveArgs, ...extra];
  const out = await run(process.execPath, args, { encoding: 'utf8', timeout: 150_000 }).catch((err) => err);
  const checks = JSON.parse(out.stdout);
  return { status: out.code ?? 0, checks, byName: Object.fromEntries(checks.map((c) => [c.check, c])),
    failed: checks.filter((c) => c.status === 'FAIL').map((c) => c.check) };
}
const BROWSER = ['--browser', 'chromium', '--search', 'submit #query doctor'];

for (const engine of ENGINES) {
  const browser = ['--browser', engine, '--search', 'submit #query doctor'];
  test(`${engine}: the working page passes over h2 and h3, the module files are those it requested, nothing is stored`,
    { timeout: 180_000, skip: engineMissing(engine) ?? false }, async () => {
      const r = await doctor(stack, pageUrl(stack), browser);
      assert.equal(r.status, 0, JSON.stringify(r.checks, null, 1));
      assert.deepEqual(r.failed, []);
      assert.equal(r.byName[`${engine} run`].status, 'PASS', JSON.stringify(r.byName[`${engine} run`]));
      assert.match(r.byName[`${engine} run`].detail, /^control ok\/h2×5; treatment ok\/h3×5$/);
      assert.match(r.byName['module worker worker.js'].detail, /^200, Content-Type \S+ \(as the page requested it\)$/);
      // The load's beacon was held in the browser: the collector has the doctor's test beacon and nothing else.
      assert.deepEqual(stack.store.db.prepare('SELECT run_id FROM runs').pluck().all(), [DOCTOR_ID]);
    });

  test(`${engine}: module files that answer 404 exit 1, the browser run naming the load_error, its reason and the module's error`,
    { timeout: 180_000, skip: engineMissing(engine) ?? false }, async () => {
      const r = await doctor(broken, pageUrl(broken), browser);
      assert.equal(r.status, 1);
      const run = r.byName[`${engine} run`];
      assert.equal(run.status, 'FAIL');
      // Each engine words the failed import its own way; both name the file, and the request its 404.
      assert.match(run.detail, /^load_error worker_import: start: [^;]*https:\/\/\S+\/h3probe\/worker\.js; requests that failed: .*\/h3probe\/worker\.js 404/);
      assert.match(run.fix, /^serve worker\.js where the page looks for it.*\(docs\/troubleshooting\.md#worker_import\)$/);
      assert.ok(r.failed.includes('module worker worker.js'), r.failed.join('; '));
      assert.deepEqual(broken.store.db.prepare('SELECT run_id FROM runs').pluck().all(), [DOCTOR_ID], 'only the doctor\'s test beacon is stored');
    });
}

test('a config that sends the module elsewhere at run time: only the browser run sees it, and fails', { timeout: 180_000 }, async () => {
  const page = pageUrl(stack, { moduleUrl: '/missing/h3probe_browser.mjs' });
  // Read as files, the page's scripts lead to the gate's own worker.js, which is served: no check can fail.
  const files = await doctor(stack, page, []);
  assert.deepEqual(files.failed, [], JSON.stringify(files.checks, null, 1));
  const r = await doctor(stack, page, BROWSER);
  assert.equal(r.status, 1);
  assert.match(r.byName['chromium run'].detail, /^load_error worker_import: start: Failed to fetch dynamically imported module: https:\/\/\S+\/missing\/worker\.js/);
  assert.match(r.byName['module worker worker.js'].detail, /\/missing\/worker\.js: 404 \(as the page requested it\)$/);
});

test('without a browser, the module files are those the moduleUrl a page\'s script sets names', { timeout: 180_000 }, async () => {
  const r = await doctor(stack, `${stack.urls.page}fixtures/app.html`, []);
  for (const [file, name] of [['glue', 'h3probe_browser.mjs'], ['worker', 'worker.js'], ['wasm', 'h3probe_browser.wasm']]) {
    const c = r.byName[`module ${file} ${name}`];
    assert.equal(c?.status, 'FAIL', JSON.stringify(r.checks, null, 1));
    assert.match(c.detail, new RegExp(`/elsewhere/${name.replace('.', '\\.')}: 404 \\(from the page's moduleUrl\\)$`));
  }
});
