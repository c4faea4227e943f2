// `npm test` (`node web/scripts/test.mjs [suite-prefix ...]` runs only the suites whose names start so): every test suite in turn (doctest host tests via ctest, the sanitizer build's host tests and a short
// libFuzzer run of each fuzz target, Node unit tests, Chromium, Firefox and WebKitGTK end-to-end tests, every
// benchmark at its tiny size), then one closing line with the totals and every skipped test by name.
//
// A suite cannot pass without running: one that reports no counts fails; ctest must hold exactly one entry per doctest
// test case, each running one test case; and on a machine where everything can run (root, every browser installed), a
// test skipped for want of its environment fails the run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineMissing, ENGINES } from '../cli/browsers.mjs';
import { repoRoot } from '../stack/paths.mjs';
import { webkitMissing } from '../launch/webkit.mjs';
import { runSuite } from './runSuite.mjs';
import { CLICKHOUSE_ENGINE_ENV } from '../launch/clickhouse.mjs';

const HOST_TESTS = path.join(repoRoot, 'build/native/h3probe_host_tests');
const FILE_TIMES = path.join(repoRoot, 'web/scripts/fileTimes.mjs');
const BENCH_TIMEOUT_MS = 5 * 60_000; // a tiny bench takes under a minute; five is a hang on a loaded machine

// A skip reason that names a missing environment (root, a browser, a build) rather than a case a browser cannot express.
const ENVIRONMENT_SKIP = /unavailable|not found|needs root|needs the native build|missing/i;
const environmentGaps = [
  ...(process.platform === 'linux' && process.getuid?.() === 0 ? [] : ['not root on Linux']),
  ...ENGINES.map(engineMissing).filter(Boolean),
  ...[webkitMissing()].filter(Boolean),
];

// The unit test files that take their ClickHouse from web/test/chdb/lane.mjs (and so can run on either engine).
function chdbLaneFiles() {
  const dir = path.join(repoRoot, 'web/test/unit');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.test.mjs')
    && fs.readFileSync(path.join(dir, f), 'utf8').includes("from '../chdb/lane.mjs'")).map((f) => `web/test/unit/${f}`);
  if (files.length === 0) throw new Error('no unit test takes its ClickHouse from web/test/chdb/lane.mjs');
  return files;
}

// A node --test suite: TAP on stdout (counted by parseTap), and each file's wall time (fileTimes.mjs) into a file of its own.
function nodeTest(name, paths, env = {}) {
  const times = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-file-times-')), 'times.ndjson');
  return {
    name, cmd: process.execPath, env, parse: parseTap, times,
    args: ['--test', '--test-reporter=tap', '--test-reporter-destination=stdout', `--test-reporter=${FILE_TIMES}`,
      `--test-reporter-destination=${times}`, '--test-concurrency=1', ...paths],
  };
}

const benches = Object.keys(JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts)
  .filter((name) => name.startsWith('bench:'));

const suites = [
  {
    name: 'host (doctest via ctest)', cmd: 'ctest', args: ['--test-dir', 'build/native', '-V'], parse: parseCtest,
    echo: (line) => !/^\d+: /.test(line), // the per-test output is shown for failures only (below)
  },
  // The same host tests and each fuzz target built with ASan + UBSan; each target one test: it passes if a bounded run
  // (seconds per target, from the committed seeds) finds no crash and no broken invariant.
  { name: 'sanitizers (host tests; libFuzzer, 15 s per target)', cmd: 'bash', args: ['web/scripts/fuzz.sh', '--host-tests', '15'], parse: parseFuzz },
  nodeTest('unit (node --test)', ['web/test/unit/']),
  // The ClickHouse tests once more on the current engine (chdb, ClickHouse 26.x; web/test/chdb/lane.mjs): every unit
  // test file that takes its servers from the lane.
  nodeTest('unit, ClickHouse tests on the current engine (chdb)', chdbLaneFiles(), { [CLICKHOUSE_ENGINE_ENV]: 'chdb' }),
  nodeTest('end-to-end (Chromium, Firefox, WebKitGTK + Caddy + SQLite)', ['web/test/e2e/']),
  // The lab's own tests (lab/test/): its settings and field profiles, then the lab itself (network namespaces, the
  // relay, the stack's Caddy and Chromium in them; root). Its C++ (the delay line) runs in the host suite.
  nodeTest('lab (namespaces, relay, Caddy, Chromium)', ['lab/test/']),
  ...benches.map((name) => ({
    // A tiny bench checks that the bench's path runs, not its figures. One that hangs is ended, diagnosed, and run once
    // more; the closing lines say so. (bench:report hung at start in 1 run of 23 until the core compiled synchronously,
    // h3probeNode.mjs; the same Node deadlock can still strike a process as it exits: docs/record/platform-notes.md.)
    name: `${name} --tiny`, cmd: 'npm', args: ['run', '--silent', name, '--', '--tiny'], timeoutMs: BENCH_TIMEOUT_MS, againAfterTimeout: true,
    parse: (out, code) => ({ passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: [] }),
  })),
];

function parseCtest(out) {
  const m = out.match(/tests passed, (\d+) tests failed out of (\d+)/);
  if (!m) return null;
  const total = Number(m[2]);
  const counts = { passed: total - Number(m[1]), failed: Number(m[1]), skipped: [], problems: [] };
  // Each entry's own doctest summary: "12: [doctest] test cases: 1 | 1 passed | 0 failed | 118 skipped".
  const perEntry = new Map();
  for (const line of out.matchAll(/^(\d+): \[doctest\] test cases: *(\d+)/gm)) perEntry.set(Number(line[1]), Number(line[2]));
  const notOne = [...perEntry].filter(([, ran]) => ran !== 1);
  if (perEntry.size !== total) counts.problems.push(`${total} ctest entries but ${perEntry.size} doctest summaries`);
  for (const [entry, ran] of notOne) counts.problems.push(`ctest entry ${entry} ran ${ran} test cases, not 1: ${nameOfEntry(out, entry)}`);
  const listed = spawnSync(HOST_TESTS, ['--count'], { encoding: 'utf8' });
  const own = Number(listed.stdout?.match(/test cases passing the current filters: (\d+)/)?.[1]);
  if (own !== total) counts.problems.push(`ctest has ${total} entries, doctest counts ${Number.isNaN(own) ? '?' : own} test cases`);
  // Show the output of failed entries only.
  const failedEntries = [...out.matchAll(/^\s*\d+\/\d+ Test +#(\d+): .*\*\*\*Failed/gm)].map((f) => Number(f[1]));
  for (const entry of failedEntries) {
    console.log(`--- output of ctest entry ${entry}:`);
    console.log(out.split('\n').filter((l) => l.startsWith(`${entry}: `)).join('\n'));
  }
  return counts;
}

function nameOfEntry(out, entry) {
  return out.match(new RegExp(`^${entry}: Test command: .*--test-case=(.*)$`, 'm'))?.[1].replace(/^"|"$/g, '') ?? '?';
}

function parseFuzz(out) {
  const fuzz = out.match(/^fuzz: (\d+) passed, (\d+) failed$/m);
  const host = out.match(/^sanitized host tests: (\d+) passed, (\d+) failed/m);
  if (!fuzz || !host) return null;
  return { passed: Number(fuzz[1]) + Number(host[1]), failed: Number(fuzz[2]) + Number(host[2]), skipped: [] };
}

function parseTap(out) {
  const pass = out.match(/^# pass (\d+)$/m);
  const fail = out.match(/^# fail (\d+)$/m);
  if (!pass || !fail) return null;
  // "ok 3 - name # SKIP reason", at any depth (a skipped describe is one line; its tests do not run).
  const skipped = [...out.matchAll(/^\s*ok \d+ - (.*?) # SKIP ?(.*)$/gm)].map((m) => ({ name: m[1], reason: m[2] }));
  return { passed: Number(pass[1]), failed: Number(fail[1]), skipped };
}

let passed = 0;
let failed = 0;
const lines = [];
const timedOutOnce = [];
const skips = [];
const only = process.argv.slice(2);
for (const suite of suites.filter((s) => !only.length || only.some((prefix) => s.name.startsWith(prefix)))) {
  console.log(`\n=== ${suite.name} === (${new Date().toISOString().slice(11, 19)} UTC, ${Math.round(performance.now() / 1000)} s into npm test)`);
  let { code, out, seconds } = await runSuite(suite);
  let again = '';
  if (suite.againAfterTimeout && String(code).startsWith('timeout')) {
    again = ` (the first try: ${code}, diagnosis above; this is the second)`;
    console.log(`\n=== ${suite.name}, once more after a ${code} ===`);
    ({ code, out, seconds } = await runSuite(suite));
    timedOutOnce.push(suite.name);
  }
  const counts = suite.parse(out, code);
  if (!counts) {
    failed += 1; // a suite that did not report is a failure, not zero tests
    lines.push(`${suite.name}: no result (exit ${code}, ${Math.round(seconds)} s)${again}`);
    continue;
  }
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  for (const problem of counts.problems ?? []) {
    counts.failed += 1;
    lines.push(`${suite.name}: ${problem}`);
  }
  passed += counts.passed;
  failed += counts.failed;
  skips.push(...counts.skipped.map((s) => ({ ...s, suite: suite.name })));
  lines.push(`${suite.name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped.length} skipped, ${Math.round(seconds)} s` +
    `${typeof code === 'string' ? ` (${code})` : ''}${again}`);
  if (suite.times) lines.push(...fileTimesLines(suite.times));
}

// The files of a node --test suite that took 10 s or more, slowest first, and what the others took together.
function fileTimesLines(file) {
  let entries = [];
  try {
    entries = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return ['  (no file times)'];
  }
  const slow = entries.filter((e) => e.seconds >= 10).sort((a, b) => b.seconds - a.seconds);
  const rest = entries.filter((e) => e.seconds < 10);
  return [...slow.map((e) => `  ${Math.round(e.seconds)} s  ${path.relative(repoRoot, e.file)} (${e.tests} tests)`),
    `  ${Math.round(rest.reduce((t, e) => t + e.seconds, 0))} s  the other ${rest.length} files`];
}

const wrongSkips = environmentGaps.length ? [] : skips.filter((s) => ENVIRONMENT_SKIP.test(s.reason));
failed += wrongSkips.length;
console.log(`\n${lines.join('\n')}`);
if (skips.length) {
  console.log(`\nskipped (${skips.length}):`);
  for (const s of skips) console.log(`  ${wrongSkips.includes(s) ? 'FAILED, should run here: ' : ''}${s.suite}: ${s.name}: ${s.reason}`);
}
if (environmentGaps.length) console.log(`\nthis machine cannot run everything: ${environmentGaps.join('; ')}`);
if (timedOutOnce.length) console.log(`\ntimed out once and run again: ${timedOutOnce.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skips.length} skipped` +
  `${timedOutOnce.length ? `, ${timedOutOnce.length} run twice after a timeout` : ''}`);
process.exit(failed === 0 ? 0 : 1);
