// `h3probe trial` with the bundled demo page (web/page, the package's web/dist beside it): 10 headless loads through
// the real Caddy origins and collector, the report counting 10 runs with requests on both arms; a --search script; a
// page that never calls searchCompleted(), and one whose worker.js is missing, fail by name; Ctrl-C (SIGINT) leaves no process and no temporary folder.
// The pages built by the recipes of docs/embedding.md are tried from the installed package in package.test.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { repoRoot, pageRoot, distRoot } from '../../stack/paths.mjs';
import { CHROMIUM_PATH } from '../../cli/chromiumArgs.mjs';
import { overallCounts, runTrial } from './trialRun.mjs';

const BIN = path.join(repoRoot, 'web/bin/h3probe.mjs');
const ORIGINS = { h2Origin: 'https://h2-test.example.com:8443', h3Origin: 'https://h3-test.example.com', beaconUrl: 'https://beacon.example.com/beacon' };
// The demo page reads its config from the query string.
const PAGE = `/?${new URLSearchParams({ ...ORIGINS, sampleRate: '1' })}`;
const FLAGS = ['--h2', ORIGINS.h2Origin, '--h3', ORIGINS.h3Origin, '--beacon', ORIGINS.beaconUrl, '--page', PAGE];
let site;

before(() => {
  site = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-trial-test-'));
  fs.cpSync(pageRoot, site, { recursive: true });
  fs.cpSync(distRoot, path.join(site, 'h3probe'), { recursive: true });
});
after(() => fs.rmSync(site, { recursive: true, force: true }));

const trialDirs = () => new Set(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('h3probe-trial-') && !n.startsWith('h3probe-trial-test-')));
const added = (before, now) => [...now].filter((d) => !before.has(d));

// The live descendants of pid, from /proc (field 4 of stat is the parent; the name field may hold spaces).
function descendants(pid) {
  const parent = new Map();
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') parent.set(Number(p), Number(fields[1]));
    } catch { /* gone */ }
  }
  const out = [];
  for (const [p] of parent) for (let q = parent.get(p); q; q = parent.get(q)) if (q === pid) { out.push(p); break; }
  return out;
}
// A zombie has exited: only its parent (or init, once the parent is gone) has not reaped it yet.
const alive = (pids) => pids.filter((p) => {
  try { return fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1][0] !== 'Z'; } catch { return false; }
});

test('the demo page: 10 loads, each searching, and a report of 10 runs with requests on both arms', { timeout: 300_000 }, async () => {
  const dirs = trialDirs();
  const r = await runTrial(process.execPath, [BIN, 'trial', '--site', site, ...FLAGS, '--loads', '10', '--search', 'submit #query quarterly report']);
  assert.equal(r.code, 0, r.stderr);
  const counts = overallCounts(r.stdout);
  assert.ok(counts, r.stdout);
  assert.equal(counts.runs, 10);
  assert.deepEqual([counts.h2.runs, counts.h3.runs], [10, 10]);
  assert.ok(counts.h2.requests > 0 && counts.h3.requests > 0, JSON.stringify(counts));
  assert.equal(r.stderr.match(/beacon stored/g)?.length, 10, r.stderr);
  assert.deepEqual(added(dirs, trialDirs()), [], 'the temporary folder is removed');
});

test('--search script FILE: the module is given each load\'s Playwright Page', { timeout: 180_000 }, async () => {
  const script = path.join(site, 'search.trial.mjs');
  fs.writeFileSync(script, `export default async (page) => {
  await page.fill('#query', 'from a script');
  await page.click('button[type=submit]');
  await page.waitForFunction(() => document.body.dataset.searches === '1');
};\n`);
  const r = await runTrial(process.execPath, [BIN, 'trial', '--site', site, ...FLAGS, '--loads', '2', '--search', `script ${script}`]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(overallCounts(r.stdout)?.runs, 2, r.stdout);
});

test('--open: Chromium started with the printed flags runs the page against the trial; Ctrl-C prints the report', { timeout: 180_000 }, async () => {
  const dirs = trialDirs();
  let opened = null;
  const r = await runTrial(process.execPath, [BIN, 'trial', '--open', '--site', site, ...FLAGS], {
    onStdout: (text, child) => {
      const line = /^\S*chromium .*$/m.exec(text)?.[0];
      if (!line || opened) return;
      // The quoted words: the flags, then the page's URL (the throwaway profile is left to playwright).
      const words = [...line.matchAll(/'([^']*)'/g)].map((m) => m[1]);
      opened = (async () => {
        const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: words.slice(0, -1) });
        try {
          const page = await browser.newPage();
          await page.goto(words.at(-1));
          await page.fill('#query', 'opened by hand');
          await page.press('#query', 'Enter');
          await page.waitForFunction(() => window.h3probeStatus?.().beaconQueued === true, null, { timeout: 30_000 });
          // The beacon reaches the collector once the worker's keepalive fetch is answered.
          await page.evaluate(() => window.h3probeDone());
        } finally {
          await browser.close();
        }
        child.kill('SIGINT');
      })().catch((err) => { child.kill('SIGKILL'); throw err; });
    },
  });
  assert.ok(opened, r.stdout);
  await opened;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(words(r.stdout), ['--enable-quic', '--origin-to-force-quic-on', '--ignore-certificate-errors-spki-list', '--host-resolver-rules']);
  const counts = overallCounts(r.stdout);
  assert.equal(counts?.runs, 1, r.stdout);
  assert.deepEqual([counts.h2.runs, counts.h3.runs], [1, 1]);
  assert.deepEqual(added(dirs, trialDirs()), []);
});
// The flags of the printed command line, by name.
const words = (text) => [.../^\S*chromium .*$/m.exec(text)[0].matchAll(/'(--[\w-]+)/g)].map((m) => m[1]);

test('a page that never calls searchCompleted(): exit status 1, naming it', { timeout: 120_000 }, async () => {
  // Clicking the heading searches nothing.
  const r = await runTrial(process.execPath, [BIN, 'trial', '--site', site, ...FLAGS, '--loads', '2', '--timeout', '10', '--search', 'click h1']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /page load 1 of 2: no beacon in 10 s, and the page never loaded the probe's run: it never called searchCompleted\(\) after --search "click h1"/);
  assert.equal(overallCounts(r.stdout), null, 'no report without a run');
});

// The demo site without worker.js (a bundle that left it out): every sampled load sends a load_error beacon.
function brokenSite() {
  const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-trial-test-'));
  fs.cpSync(site, broken, { recursive: true });
  fs.rmSync(path.join(broken, 'h3probe', 'worker.js'));
  return broken;
}
// The module's own words when worker.js is not there (Chromium's message for a module import that answered 404).
const WORKER_MISSING = 'start: Failed to fetch dynamically imported module: https://localhost:\\d+/h3probe/worker\\.js';

test('a site without worker.js: each load names the reason and the module\'s error text, the report too; --db keeps the store for report and export',
  { timeout: 180_000 }, async () => {
    const broken = brokenSite();
    const db = path.join(broken, 'kept', 'beacons.sqlite');
    fs.mkdirSync(path.dirname(db));
    try {
      const r = await runTrial(process.execPath, [BIN, 'trial', '--site', broken, ...FLAGS, '--loads', '2', '--search', 'submit #query', '--db', db]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`page load 1 of 2: beacon stored, outcome load_error \\(worker_import: ${WORKER_MISSING}\\)\n`));
      assert.match(r.stderr, new RegExp(`2 of 2 page loads sent a beacon without a complete run:\n  loads 1, 2: outcome load_error \\(worker_import: ${WORKER_MISSING}\\)\n`));
      assert.match(r.stderr, /docs\/troubleshooting\.md/);
      const reported = new RegExp(`^load errors: 2 \\(worker_import 2\\)\n  worker_import: ${WORKER_MISSING}$`, 'm');
      assert.match(r.stdout, reported, 'the report is printed, the error text under its reason');
      assert.match(r.stdout, new RegExp(`^The beacons are kept in ${db.replace(/[.]/g, '\\.')}: h3probe report --db `, 'm'));
      // The kept database, read by the report and the export as a user runs them.
      const report = await runTrial(process.execPath, [BIN, 'report', '--db', db]);
      assert.equal(report.code, 0, report.stderr);
      assert.match(report.stdout, reported);
      const exported = await runTrial(process.execPath, [BIN, 'export', '--db', db]);
      assert.equal(exported.code, 0, exported.stderr);
      const rows = exported.stdout.trim().split('\n').map((line) => JSON.parse(line));
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.deepEqual([row.outcome, row.reason], ['load_error', 'worker_import'], JSON.stringify(row));
        assert.match(row.error, new RegExp(`^${WORKER_MISSING}$`));
      }
      // A file that exists is refused: its runs would mix with the next trial's.
      const again = await runTrial(process.execPath, [BIN, 'trial', '--site', broken, ...FLAGS, '--db', db]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /--db must be a new file/);
    } finally {
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });

// trial --open on `dir`; runs the h3probe doctor line it prints while it serves, then stops it: { doctor, trial }.
async function doctorOfTrial(dir) {
  let doctor = null;
  const trial = await runTrial(process.execPath, [BIN, 'trial', '--open', '--site', dir, ...FLAGS, '--search', 'submit #query doctor'], {
    onStdout: (text, child) => {
      const line = /^h3probe doctor .*$/m.exec(text)?.[0];
      if (!line || doctor) return;
      // The line as printed, with the checkout's command for h3probe, through a shell (its quoting is the line's).
      doctor = runTrial('sh', ['-c', `"${process.execPath}" "${BIN}" ${line.slice('h3probe '.length)} --json`])
        .finally(() => child.kill('SIGINT'));
    },
  });
  assert.ok(doctor, trial.stdout);
  return { doctor: await doctor, trial };
}

test('trial --open prints an h3probe doctor line that checks the trial\'s page in Chromium: the demo page passes', { timeout: 180_000 }, async () => {
  const { doctor, trial } = await doctorOfTrial(site);
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
  const checks = Object.fromEntries(JSON.parse(doctor.stdout).map((c) => [c.check, c]));
  assert.match(checks['chromium run'].detail, /^control ok\/h2×5; treatment ok\/h3×5$/);
  assert.equal(trial.code, 0, trial.stderr);
});

test('the doctor line of a trial of a site without worker.js exits 1, naming the load_error and the module\'s error text', { timeout: 180_000 }, async () => {
  const broken = brokenSite();
  try {
    const { doctor } = await doctorOfTrial(broken);
    assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr);
    const run = JSON.parse(doctor.stdout).find((c) => c.check === 'chromium run');
    assert.equal(run.status, 'FAIL');
    assert.match(run.detail, new RegExp(`^load_error worker_import: ${WORKER_MISSING}`));
  } finally {
    fs.rmSync(broken, { recursive: true, force: true });
  }
});

test('a --site without the page: exit status 1 before any load, naming the status', { timeout: 60_000 }, async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-trial-test-'));
  try {
    const r = await runTrial(process.execPath, [BIN, 'trial', '--site', empty, ...FLAGS]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^h3probe trial: \/\?h2Origin=\S+ of --site \S+ answers 404: give the built folder/m);
    assert.doesNotMatch(r.stderr, /page load/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

test('a bad option: exit status 2 and every problem named', async () => {
  const r = await runTrial(process.execPath, [BIN, 'trial', '--site', path.join(site, 'nope'), '--h2', 'http://h2.example.com',
    '--h3', ORIGINS.h3Origin, '--beacon', ORIGINS.beaconUrl, '--search', 'tap #go', '--loads', '0']);
  assert.equal(r.code, 2);
  for (const flag of ['--h2', '--site', '--search', '--loads']) assert.match(r.stderr, new RegExp(`^(h3probe trial: )?${flag} `, 'm'), r.stderr);
});

test('Ctrl-C (SIGINT) during the loads: Caddy, Chromium and the temporary folder are gone', { timeout: 180_000 }, async () => {
  const dirs = trialDirs();
  let children = [];
  let sent = false;
  const r = await runTrial(process.execPath, [BIN, 'trial', '--site', site, ...FLAGS, '--loads', '50', '--search', 'submit #query'], {
    onStderr: (text, child) => {
      if (sent || !text.includes('page load 2 of 50: beacon stored')) return;
      sent = true;
      children = descendants(child.pid);
      child.kill('SIGINT');
    },
  });
  assert.ok(sent, r.stderr);
  assert.ok(children.length >= 2, `caddy and chromium ran: ${children}`);
  assert.match(r.stderr, /SIGINT, stopping/);
  assert.equal(r.code, 130, r.stderr);
  assert.deepEqual(alive(children), []);
  assert.deepEqual(added(dirs, trialDirs()), []);
});
