// Unit tests of the report on a small synthetic SQLite database written through the collector's store: what is read (counts,
// exclusions by reason, per-region groups, metric choice, --since, the paired within-run differences), the table and HTML
// the report command makes with the WASM statistics, and the NDJSON export command. (How a figure prints on a rounding
// boundary, without the build: numberText.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../server/store.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-report-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dbPath = path.join(tmp, 'report.sqlite');

function sample(phase, idx, protocol, networkMs, extra = {}) {
  return { phase, idx, origin: phase === 'control' ? 'h2' : 'h3', result: 'ok', http_status: 204, protocol, reused: true,
    network_ms: networkMs, queue_ms: 0.5, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: networkMs / 2, response_ms: 1,
    start_ms: 100, fetch_ms: networkMs + 1, ...extra };
}

// A run with h2 values hs, h3 values ts (each a number or [number, extra]), plus 3 pre-warm samples that never count.
function run(id, { order = 'h2-first', hs = [], ts = [], context = {} } = {}) {
  const prewarm = [sample('prewarm', 0, 'h2', 500), sample('prewarm', 1, 'h3', 400), sample('prewarm', 2, 'h2', 300)];
  const arm = (phase, protocol, list) => list.map((v, i) => (Array.isArray(v)
    ? sample(phase, i, protocol, v[0], v[1]) : sample(phase, i, protocol, v)));
  return { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'test', module_version: '0.1.0', order,
    arms: 'h2-h3', outcome: 'complete', error: '', context, samples: [...prewarm, ...arm('control', 'h2', hs), ...arm('treatment', 'h3', ts)] };
}

// Stored as the collector stores it: the beacon's text through the C++ decoder, then the store.
const store = (file) => openStore(file, core);
const insert = (st, beacon, meta) => {
  const decoded = core.decodeBeacon(JSON.stringify(beacon));
  assert.ok(decoded.ok, decoded.error);
  return st.insertBeacon(decoded, meta);
};

before(() => {
  const st = store(dbPath);
  const at = (day) => ({ receivedAt: `2024-05-${String(day).padStart(2, '0')}T12:00:00.000Z` });
  // Asia, 1 May: 2 runs, one in each order.
  insert(st, run('a1', { hs: [100, 110, 120], ts: [90, [95, { connect_ms: null }], 100], context: { run_context: 'worker' } }),
    { ...at(1), region: 'Asia', country: 'JP', browser: 'chromium', browserMajor: 130 });
  insert(st, run('a2', { order: 'h3-first', hs: [200, 210], ts: [150, [160, { protocol: 'h2' }]], context: { run_context: 'main' } }),
    { ...at(1), region: 'Asia', country: 'JP', browser: 'chromium', browserMajor: 131 });
  // Europe, 3 May: every exclusion reason once, and a run whose treatment arm is all fallbacks.
  insert(st, run('e1', {
    hs: [50, [51, { result: 'timeout', network_ms: null, protocol: '' }], [52, { result: 'http_error', http_status: 503 }],
      [53, { result: 'aborted', network_ms: null, protocol: '' }]],
    ts: [[40, { server_protocol: 'HTTP/3.0' }], [41, { result: 'timing_unavailable', network_ms: 0, protocol: '' }],
      [42, { result: 'network_error', network_ms: null, protocol: '' }], [43, { result: 'no_timing_entry', network_ms: null }],
      [44, { connect_ms: null }], [47, { server_protocol: 'HTTP/2.0' }]],
  }), { ...at(3), region: 'Europe', country: 'DE', browser: 'firefox', browserMajor: 128 });
  insert(st, run('e2', { hs: [60, 62], ts: [[45, { protocol: 'h2' }], [46, { protocol: 'h2' }]] }),
    { ...at(3), region: 'Europe', country: 'FR' });
  // No region stored (an older row): counted as unknown. 5 May.
  insert(st, run('u1', { order: 'h3-first', hs: [70], ts: [65] }), { ...at(5), region: null });
  // Sampled page loads that could not load the run: the gate's load_error beacons, 1 and 5 May.
  // Their error texts: the two wasm_type ones alike (the report names the most frequent text); the glue_import one none.
  for (const [id, reason, day, error] of [['l1', 'wasm_type', 1, 'start: the .wasm answered 200 text/plain'], ['l2', 'glue_import', 5, ''],
    ['l3', 'wasm_type', 5, 'start:  the .wasm answered\n200 text/plain']]) {
    insert(st, { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'test', outcome: 'load_error', reason,
      error, run_ms: 20, samples: [] }, { ...at(day), region: 'Asia', country: 'JP' });
  }
  st.close();
});

const report = async (opts = {}) => (await makeReport(core, { dbPath, ...opts })).report;
const group = (r, name) => r.groups.find((g) => g.name === name);

describe('report', () => {
  test('counts runs and measured requests overall and per region, pre-warm left out, biggest region first', async () => {
    const r = await report();
    assert.equal(r.storedRuns, 5);
    // Asia and Europe tie on runs: then by name.
    assert.deepEqual(r.groups.map((g) => [g.name, g.runs, g.requests]),
      [['overall', 5, 26], ['Asia', 2, 10], ['Europe', 2, 14], ['unknown', 1, 2]]);
  });

  test('each arm holds its requests as assigned, fallbacks included; where HTTP/3 worked, the runs without any', async () => {
    const r = await report();
    const asia = group(r, 'Asia');
    assert.equal(r.estimand, 'as_assigned');
    assert.deepEqual(asia.arms, { h2: { n: 5, runs: 2 }, h3: { n: 5, runs: 2 } });
    // p50 of 100, 110, 120, 200, 210 and of 90, 95, 100, 150, 160 (type 7): a2's fallback (160) stays in its arm.
    assert.equal(asia.analysis.rows[0].h2, 120);
    assert.equal(asia.analysis.rows[0].h3, 100);
    // Where HTTP/3 worked: a1 alone of Asia (a2 fell back), both arms; overall a1 and u1 of the 4 runs as assigned.
    const worked = r.h3Worked.groups.find((g) => g.name === 'Asia');
    assert.deepEqual(worked.arms, { h2: { n: 3, runs: 1 }, h3: { n: 3, runs: 1 } });
    assert.deepEqual([r.h3Worked.runs, r.h3Worked.of], [2, 4]);
    assert.equal(r.h3Worked.estimand, 'h3_worked');
  });

  test('a request that did not finish is slower than every finished one; an instrument fault drops its whole run', async () => {
    const r = await report();
    // e1 had a timing_unavailable and a no_timing_entry request: no value of it in either arm, its requests still counted.
    const europe = group(r, 'Europe');
    assert.deepEqual(europe.arms, { h2: { n: 2, runs: 1 }, h3: { n: 2, runs: 1 } });
    assert.equal(europe.requests, 14);
    const dir = fs.mkdtempSync(path.join(tmp, 'unfinished-'));
    const st = store(path.join(dir, 'u.sqlite'));
    // 12 runs whose HTTP/3 arm holds 2 finished requests and 3 timeouts each: its median and above reach them.
    for (let i = 0; i < 12; i++) {
      const timeout = { result: 'timeout', network_ms: null, protocol: '' };
      insert(st, run(`t${i}`, { hs: [50 + i, 51 + i, 52 + i, 53 + i, 54 + i], ts: [40 + i, 41 + i, [0, timeout], [0, timeout], [0, timeout]] }),
        { receivedAt: '2024-05-01T12:00:00.000Z', region: 'Asia' });
    }
    st.close();
    const u = (await makeReport(core, { dbPath: path.join(dir, 'u.sqlite') })).report;
    const rows = u.groups[0].analysis.rows;
    assert.deepEqual(u.groups[0].arms.h3, { n: 60, runs: 12 });
    for (const row of rows) {
      assert.equal(row.unfinished, true, `p${row.p}`);
      assert.equal(row.significant, false);
      assert.equal(row.h3, null);
      assert.deepEqual(row.ci_ms, [null, null]);
    }
    assert.match(u.verdict.text, /not estimable at p50, p75, p90, p95, p99 \(it reaches requests that did not finish\)/);
    assert.doesNotMatch(u.verdict.text, /faster|slower/);
  });

  test('counts every exclusion under the class the core stored, in the core order', async () => {
    const r = await report();
    const europe = group(r, 'Europe');
    assert.deepEqual(europe.excluded, {
      fallback: 2, protocol_unknown: 0, timing_unavailable: 1, timeout: 1, network_error: 1, http_error: 1, no_timing_entry: 1,
      aborted: 1, redirected: 0, cache_hit: 0, protocol_mismatch: 1, missing_metric: 0,
    });
    assert.deepEqual(Object.keys(europe.excluded), r.exclusions);
    assert.deepEqual(europe.arms.h3, { n: 2, runs: 1 });
    assert.equal(group(r, 'overall').excluded.fallback, 3);
  });

  test('the fallback rate is fallbacks over treatment requests with result ok', async () => {
    const r = await report();
    // e1's 40 and 44 (usable) and 47 (the origin saw h2: a mismatch, not a fallback), e2's 45 and 46 (both over h2).
    assert.deepEqual(group(r, 'Europe').fallback, { fallbacks: 2, rate: 0.4, completed: 5 });
    assert.deepEqual(group(r, 'Asia').fallback, { fallbacks: 1, rate: 1 / 5, completed: 5 });
    // A group without any fallback still knows its denominator.
    assert.deepEqual(group(r, 'unknown').fallback, { fallbacks: 0, rate: 0, completed: 1 });
  });

  test('--by splits the same runs another way; the regions stay known for the cautions', async () => {
    const names = (r) => r.groups.map((g) => [g.name, g.runs]);
    const byBrowser = await report({ by: 'browser' });
    assert.equal(byBrowser.by, 'browser');
    assert.deepEqual(names(byBrowser), [['overall', 5], ['chromium', 2], ['unknown', 2], ['firefox', 1]]);
    assert.deepEqual(byBrowser.regions, ['Asia', 'Europe', 'unknown']);
    // The overall group does not depend on the split.
    assert.deepEqual(byBrowser.groups[0].analysis, (await report()).groups[0].analysis);
    assert.deepEqual(names(await report({ by: 'browser_version' })),
      [['overall', 5], ['unknown', 2], ['chromium 130', 1], ['chromium 131', 1], ['firefox 128', 1]]);
    assert.deepEqual(names(await report({ by: 'day' })), [['overall', 5], ['2024-05-01', 2], ['2024-05-03', 2], ['2024-05-05', 1]]);
    assert.deepEqual(names(await report({ by: 'config' })), [['overall', 5], ['test', 5]]);
    assert.deepEqual(names(await report({ by: 'effective_type' })), [['overall', 5], ['unknown', 5]]);
    // Where the module ran its core, from the beacon's context.run_context; runs without it are unknown.
    assert.deepEqual(names(await report({ by: 'context' })), [['overall', 5], ['unknown', 3], ['main', 1], ['worker', 1]]);
    await assert.rejects(report({ by: 'user_id' }), /--by must be one of region, browser, browser_version, config, effective_type, context, day/);
  });

  test('the daily series: a group per day received, with Δ at p50, p90 and p95', async () => {
    const { report: r } = await makeReport(core, { dbPath, daily: true });
    assert.deepEqual(r.daily.percentiles, [0.5, 0.9, 0.95]);
    assert.deepEqual(r.daily.days.map((d) => [d.day, d.runs, d.rows.map((x) => x.p)]),
      [['2024-05-01', 2, [0.5, 0.9, 0.95]], ['2024-05-03', 2, [0.5, 0.9, 0.95]], ['2024-05-05', 1, [0.5, 0.9, 0.95]]]);
    // Asia's two runs are all of 1 May: the day's p50 Δ is Asia's.
    const asiaP50 = group(await report(), 'Asia').analysis.rows[0];
    assert.equal(r.daily.days[0].rows[0].diff_ms, asiaP50.diff_ms);
    assert.equal((await makeReport(core, { dbPath })).report.daily, undefined, 'not computed for a text-only report');
  });

  test('another metric changes the values and counts a usable request without it as missing_metric', async () => {
    const asia = group(await report({ metric: 'connect_ms' }), 'Asia');
    assert.equal(asia.arms.h3.n, 4);
    assert.equal(asia.excluded.missing_metric, 1);
    assert.equal(group(await report({ metric: 'fetch_ms' }), 'Asia').analysis.rows[0].h2, 121);
    await assert.rejects(report({ metric: 'run_id' }), /unknown metric/);
  });

  test('--since keeps runs received at or after the date', async () => {
    const r = await report({ since: '2024-05-02' });
    assert.equal(r.storedRuns, 3);
    assert.deepEqual(r.groups.map((g) => g.name).sort(), ['Europe', 'overall', 'unknown']);
    assert.equal(group(r, 'overall').runs, 3);
    assert.equal((await report({ since: '2024-05-05T12:00:00Z' })).groups[0].runs, 1);
    assert.equal((await report({ since: '2030-01-01' })).groups[0].runs, 0);
    await assert.rejects(report({ since: 'yesterday' }), /--since/);
  });

  test('paired differences: per run median(h3) - median(h2), tested for order only with both orders present', async () => {
    const r = await report();
    const asia = group(r, 'Asia');
    assert.equal(asia.paired.n, 2);
    assert.equal(asia.paired.mean, ((95 - 110) + (155 - 205)) / 2);
    assert.equal(asia.order, null);  // one run in each order: too few to test
    // e1 had an instrument fault, so 4 of the 5 runs pair (e2's fallbacks count in its arm).
    assert.equal(group(r, 'overall').paired.n, 4);
  });

  test('a database the collector did not write is refused with the reason', async () => {
    const old = path.join(tmp, 'v1.sqlite');
    const db = new Database(old);
    db.exec(`CREATE TABLE runs (run_id TEXT PRIMARY KEY, received_at TEXT, region TEXT, country TEXT, beacon_json TEXT);
      CREATE TABLE requests (run_id TEXT, phase TEXT, idx INTEGER, PRIMARY KEY (run_id, phase, idx));`);
    db.close();
    await assert.rejects(makeReport(core, { dbPath: old }), /not written by the h3probe collector/);
    const empty = path.join(tmp, 'empty.sqlite');
    new Database(empty).close();
    await assert.rejects(makeReport(core, { dbPath: empty }), /holds no h3probe store/);
  });

  test('the records of a run the core cannot read end the report with an error, not a wrong table', async () => {
    const copy = path.join(tmp, 'corrupt.sqlite');
    fs.copyFileSync(dbPath, copy);
    const db = new Database(copy);
    db.prepare("UPDATE arm_values SET arm_values = x'00' WHERE metric = 0 AND run = (SELECT rowid FROM runs WHERE run_id = 'a1')").run();
    db.close();
    await assert.rejects(makeReport(core, { dbPath: copy }), /do not read: run record/);
  });

  test('a run record of another format than the core\'s one is refused, not read as it (docs/architecture.md, step 12)', async () => {
    const copy = path.join(tmp, 'format1.sqlite');
    fs.copyFileSync(dbPath, copy);
    const db = new Database(copy);
    const current = core.schema().runRecordVersion;
    const other = current - 1;
    db.prepare(`UPDATE run_records SET arm_counts = x'${other.toString(16).padStart(2, '0')}' || substr(arm_counts, 2)
      WHERE run = (SELECT rowid FROM runs WHERE run_id = 'a1')`).run();
    db.close();
    await assert.rejects(makeReport(core, { dbPath: copy }), new RegExp(`run record \\d+ \\(byte \\d+\\) has format ${other}, not ${current}`));
  });
});

describe('export command', () => {
  test('writes one NDJSON line per stored run with its requests nested', async () => {
    const out = path.join(tmp, 'runs.ndjson');
    execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'export', '--db', dbPath, '--out', out], { stdio: 'pipe' });
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.run_id).sort(), ['a1', 'a2', 'e1', 'e2', 'l1', 'l2', 'l3', 'u1']);
    const l2 = lines.find((l) => l.run_id === 'l2');
    assert.deepEqual([l2.outcome, l2.reason, l2.requests.length], ['load_error', 'glue_import', 0]);
    const e1 = lines.find((l) => l.run_id === 'e1');
    assert.equal(e1.region, 'Europe');
    assert.equal(e1.country, 'DE');
    assert.equal(e1.requests.length, 3 + 4 + 6);
    assert.deepEqual(e1.requests.filter((q) => q.server_protocol).map((q) => [q.idx, q.server_protocol, q.request_class]),
      [[0, 'HTTP/3.0', 'usable_treatment'], [5, 'HTTP/2.0', 'protocol_mismatch']]);
    assert.ok(!('arm_counts' in e1));
    assert.equal(e1.requests.filter((q) => q.request_class === 'usable_control').length, 1);
  });

  test('the export and the report change nothing in the database they read, nor in one an older h3probe wrote', () => {
    const copy = path.join(tmp, 'older', 'beacons.sqlite');
    fs.mkdirSync(path.dirname(copy));
    fs.copyFileSync(dbPath, copy);
    const db = new Database(copy);
    db.pragma('journal_mode = DELETE');
    db.close();
    const state = () => JSON.stringify([fs.readdirSync(path.dirname(copy)), createHash('sha256').update(fs.readFileSync(copy)).digest('hex')]);
    const before = state();
    const cli = (...args) => execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), ...args], { encoding: 'utf8', stdio: 'pipe' });
    const lines = cli('export', '--db', copy).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, 8);
    assert.match(cli('report', '--db', copy, '--no-html'), /^h3probe report: network_ms, 5 stored runs/m);
    assert.equal(state(), before);
    // As a store of the same version an h3probe with another core wrote: refused by both, and left as it was.
    const other = new Database(copy);
    other.prepare("UPDATE store_layout SET layout = replace(layout, 'network_ms', 'network_time')").run();
    other.close();
    const older = state();
    for (const args of [['export', '--db', copy], ['report', '--db', copy, '--no-html']]) {
      assert.throws(() => cli(...args), /whose layout .* is not this h3probe's: export its runs with the h3probe that wrote it/);
    }
    assert.equal(state(), older);
  });

  test('to stdout without --out', async () => {
    const text = execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'export', '--db', dbPath], { encoding: 'utf8' });
    assert.equal(text.trim().split('\n').length, 8);
  });
});

describe('report command', () => {
  const script = path.join(repoRoot, 'web/bin/h3probe.mjs');
  const runReport = (...args) => spawnSync(process.execPath, [script, 'report', '--db', dbPath, ...args], { encoding: 'utf8' });

  test('prints the table overall and per region, with exclusions and CIs, and writes the HTML report', () => {
    const html = path.join(tmp, 'out', 'report.html');
    const { status, stdout, stderr } = runReport('--html', html);
    assert.equal(status, 0, stderr);
    assert.match(stdout, /^h3probe report: network_ms, 5 stored runs/m);
    assert.match(stdout, /^== overall: 5 runs \(every stored run read with a measured request\), 26 measured requests; used HTTP\/2 8 \(4 runs\), HTTP\/3 8 \(4 runs\)$/m);
    assert.match(stdout, /^== region Europe: 2 runs, 14 measured requests/m);
    assert.match(stdout, /^in their arms: fallback 2, timeout 1, network_error 1, http_error 1, aborted 1, protocol_mismatch 1; runs dropped \(instrument fault\): timing_unavailable 1, no_timing_entry 1$/m);
    assert.match(stdout, /^where HTTP\/3 worked \(2 of 4 runs, 50\.0%; both arms of those runs, 95% CI\): p50 no interval/m);
    assert.match(stdout, /^p50 /m);
    assert.match(stdout, /^p99 /m);
    assert.match(stdout, /^order effect: /m);
    assert.match(stdout, /^by region/m);
    assert.match(stdout, new RegExp(`HTML report: ${html.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const page = fs.readFileSync(html, 'utf8');
    assert.match(page, /Content-Security-Policy/);
    assert.doesNotMatch(page, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  test('honours --metric and --since', () => {
    const { status, stdout } = runReport('--no-html', '--metric', 'fetch_ms', '--since', '2024-05-02');
    assert.equal(status, 0);
    assert.match(stdout, /^h3probe report: fetch_ms, 3 stored runs received since 2024-05-02T00:00:00.000Z/m);
    assert.doesNotMatch(stdout, /^== region Asia/m);
    assert.doesNotMatch(stdout, /HTML report/);
  });

  test('fails with a message on a bad metric, method or missing database', () => {
    assert.match(runReport('--no-html', '--metric', 'run_id').stderr, /unknown metric "run_id"/);
    assert.match(runReport('--no-html', '--method', 'magic').stderr, /--method must be one of delta, bootstrap/);
    const missing = spawnSync(process.execPath, [script, 'report', '--db', path.join(tmp, 'nope.sqlite')], { encoding: 'utf8' });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no database at/);
  });
});

describe('arms modes', () => {
  const modesDb = path.join(tmp, 'modes.sqlite');
  // An A/A run: both arms ask the same protocol, the treatment arm on a second origin.
  function aaRun(id, arms, hs, ts) {
    const proto = arms.split('-')[0];
    const s = (phase, idx, v) => ({ ...sample(phase, idx, proto, v), origin: proto });
    return { ...run(id), arms, samples: [s('prewarm', 0, 300), ...hs.map((v, i) => s('control', i, v)),
      ...ts.map((v, i) => s('treatment', i, v))] };
  }
  before(() => {
    const st = store(modesDb);
    insert(st, run('ab1', { hs: [100, 110], ts: [90, 95] }));
    insert(st, { ...run('ab2', { hs: [120], ts: [80] }), arms: 'h2-h3' });
    for (let i = 0; i < 12; i++) insert(st, aaRun(`aa${i}`, 'h3-h3', [500 + i, 510 + i], [505 + i, 515 - i]));
    insert(st, aaRun('hh1', 'h2-h2', [700], [710]));
    st.close();
  });
  const modeReport = async (arms) => (await makeReport(core, { dbPath: modesDb, ...(arms ? { arms } : {}) })).report;

  test('the default report holds only the experiment\'s runs, never an A/A run\'s values', async () => {
    const r = await modeReport();
    assert.equal(r.arms, 'h2-h3');
    assert.equal(r.storedRuns, 2);
    assert.deepEqual(r.groups[0].arms, { h2: { n: 3, runs: 2 }, h3: { n: 3, runs: 2 } });
    assert.ok(r.groups[0].analysis.rows.every((row) => row.h2 <= 120 && row.h3 <= 95));
  });

  test('each A/A mode is reported alone, its arms both of its protocol', async () => {
    const h3 = await modeReport('h3-h3');
    assert.equal(h3.storedRuns, 12);
    assert.deepEqual(h3.groups[0].arms, { h2: { n: 24, runs: 12 }, h3: { n: 24, runs: 12 } });
    assert.ok(h3.groups[0].analysis.rows.every((row) => row.h2 >= 500 && row.h3 >= 500));
    const h2 = await modeReport('h2-h2');
    assert.equal(h2.storedRuns, 1);
    assert.equal(h2.groups[0].analysis.rows[0].h2, 700);
    await assert.rejects(modeReport('h3-h2'), /--arms must be one of h2-h3, h2-h2, h3-h3/);
  });

  test('an A/A report names its arms by role and protocol and says every interval should cover 0', () => {
    const html = path.join(tmp, 'out', 'aa.html');
    const { status, stdout, stderr } = spawnSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'),
      'report', '--db', modesDb, '--arms', 'h3-h3', '--html', html], { encoding: 'utf8' });
    assert.equal(status, 0, stderr);
    assert.match(stdout, /^h3probe report: network_ms, 12 stored runs with arms h3-h3;/m);
    assert.match(stdout, /^A\/A test: every interval should cover 0 /m);
    assert.match(stdout, /^Δ = treatment h3 − control h3 /m);
    assert.match(stdout, /^\s+control h3 ms\s+treatment h3 ms\s+Δ ms/m);
    assert.doesNotMatch(stdout, /HTTP\/[23]/);
    const page = fs.readFileSync(html, 'utf8');
    assert.match(page, /A\/A test: every interval should cover 0/);
    assert.match(page, /<th>control h3 ms<\/th><th>treatment h3 ms<\/th>/);
    assert.doesNotMatch(page, /HTTP\/[23]/);
  });
});

describe('verdict, JSON report, one-region table', () => {
  const script = path.join(repoRoot, 'web/bin/h3probe.mjs');

  test('the verdict comes first, with the runs and dates, and a caution when the runs are too few', () => {
    const { status, stdout, stderr } = spawnSync(process.execPath, [script, 'report', '--db', dbPath, '--no-html'], { encoding: 'utf8' });
    assert.equal(status, 0, stderr);
    const lines = stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('verdict ('));
    assert.ok(at > 0 && at < lines.findIndex((l) => l.startsWith('== overall')), 'the verdict precedes the tables');
    assert.match(lines[at], /^verdict \(5 runs, received 2024-05-01 to 2024-05-05; by the 95% interval of Δ\): no interval at p50, p75, p90, p95, p99$/);
    assert.match(stdout, /^CAUTION: 5 runs: too few for any interval \(at least 10 runs per arm\)$/m);
    assert.match(stdout, /runs per arm, 4 in the smaller arm so far|sample size .*: not enough data/);
  });

  test('--json writes the whole report: format, verdict, groups with estimates, intervals, counts and exclusions', () => {
    const out = path.join(tmp, 'out', 'report.json');
    const { status, stdout, stderr } = spawnSync(process.execPath, [script, 'report', '--db', dbPath, '--no-html', '--json', out],
      { encoding: 'utf8' });
    assert.equal(status, 0, stderr);
    assert.match(stdout, /^JSON report: /m);
    const j = JSON.parse(fs.readFileSync(out, 'utf8'));
    assert.equal(j.format, 'h3probe-report/3');
    assert.equal(j.storedRuns, 5);
    assert.deepEqual(j.received, { first: '2024-05-01T12:00:00.000Z', last: '2024-05-05T12:00:00.000Z' });
    assert.deepEqual(j.groups.map((g) => g.name), ['overall', 'Asia', 'Europe', 'unknown']);
    assert.equal(j.groups[0].excluded.fallback, 3); // one in Asia, two in Europe
    assert.deepEqual(j.groups[0].analysis.rows.map((r) => r.p), [0.5, 0.75, 0.9, 0.95, 0.99]);
    assert.ok(j.exclusions.includes('fallback') && j.exclusions.includes('missing_metric'));
    assert.deepEqual(j.verdict.percentiles.map((x) => x.verdict), Array(5).fill('no interval'));
    assert.equal(j.verdict.runs, 5);
  });

  test('a database of loopback runs only: the region table still shows, with a loud caution; enough runs give a verdict', async () => {
    const file = path.join(tmp, 'local.sqlite');
    const st = store(file);
    // 24 runs, HTTP/3 10 ms faster in every one: intervals at the lower percentiles, all "faster".
    for (let i = 0; i < 24; i++) {
      const hs = [30 + i, 31 + i, 32 + i, 33 + i, 34 + i];
      insert(st, run(`l${i}`, { hs, ts: hs.map((v) => v - 10) }), { receivedAt: `2024-06-0${1 + (i % 3)}T08:00:00.000Z`, region: 'local' });
    }
    st.close();
    const { text, report: r } = await makeReport(core, { dbPath: file });
    assert.match(text, /^verdict \(24 runs, received 2024-06-01 to 2024-06-03; by the 95% interval of Δ\): HTTP\/3 faster at p50 \(-10\.00 ms/m);
    assert.match(text, /^CAUTION: every run came from loopback \(region "local"\)/m);
    assert.match(text, /^by region/m);
    assert.match(text, /^local +24 /m);
    assert.equal(r.verdict.percentiles[0].verdict, 'faster');
    const html = (await import('../../report/renderReportHtml.mjs')).renderReportHtml(r);
    assert.match(html, /class="verdict"/);
    assert.match(html, /class="caution">Caution: every run came from loopback/);
  });
});

test('load_error beacons are counted by reason, apart from the runs: text, HTML and JSON', async () => {
  const htmlPath = path.join(tmp, 'load-errors.html');
  const jsonPath = path.join(tmp, 'load-errors.json');
  const made = await makeReport(core, { dbPath, htmlPath, jsonPath });
  // Two texts that differ only in white space are one text on one line; a reason whose beacons gave none has no line.
  const wasmText = 'start: the .wasm answered 200 text/plain';
  assert.deepEqual(made.report.loadErrors, { total: 3, byReason: [{ reason: 'wasm_type', n: 2, error: wasmText }, { reason: 'glue_import', n: 1, error: '' }] });
  assert.equal(made.report.storedRuns, 5, 'a load error is no stored run of any arms mode');
  assert.match(made.text, /^load errors: 3 \(wasm_type 2, glue_import 1\)\n {2}wasm_type: start: the \.wasm answered 200 text\/plain\n(?! {2}glue_import)/m);
  const html = fs.readFileSync(htmlPath, 'utf8');
  assert.match(html, /<p class="load-errors">load errors: 3 \(wasm_type 2, glue_import 1\)/);
  assert.match(html, /<ul class="load-errors"><li>wasm_type: start: the \.wasm answered 200 text\/plain<\/li><\/ul>/);
  assert.deepEqual(JSON.parse(fs.readFileSync(jsonPath, 'utf8')).loadErrors, made.report.loadErrors);
  const since = await report({ since: '2024-05-04' });
  assert.deepEqual(since.loadErrors, { total: 2, byReason: [{ reason: 'glue_import', n: 1, error: '' },
    { reason: 'wasm_type', n: 1, error: wasmText }] });
  // An A/A report counts them too: the gate that sends one knows no arms.
  assert.equal((await report({ arms: 'h3-h3' })).loadErrors.total, 3);
});

test('runs on the page\'s main thread: their share with the reasons in text, HTML and JSON, and a caution above 1 %', async () => {
  const file = path.join(tmp, 'main-thread.sqlite');
  const st = store(file);
  const at = { receivedAt: '2024-06-01T08:00:00.000Z', region: 'Europe' };
  // 200 runs in the Worker, 1 on the main thread (0.5 %): the line, no caution.
  for (let i = 0; i < 200; i++) insert(st, run(`w${i}`, { hs: [40 + (i % 7)], ts: [35 + (i % 5)], context: { run_context: 'worker' } }), at);
  insert(st, run('m0', { hs: [50], ts: [45], context: { run_context: 'main', worker_fallback: 'worker_load' } }), at);
  const below = await makeReport(core, { db: st.db });
  assert.deepEqual(below.report.mainThread, { runs: 201, main: 1, share: 1 / 201, byReason: [{ reason: 'worker_load', n: 1 }] });
  assert.match(below.text, /^main thread: 1 of 201 runs \(0\.5%\) ran on the page's main thread, not in the Worker \(worker_load 1\)$/m);
  assert.deepEqual(below.report.verdict.cautions.filter((c) => /main thread/.test(c)), []);
  // 2 more (1.5 %): the caution, naming the reasons, the most frequent first.
  insert(st, run('m1', { hs: [50], ts: [45], context: { run_context: 'main', worker_fallback: 'csp' } }), at);
  insert(st, run('m2', { hs: [50], ts: [45], context: { run_context: 'main', worker_fallback: 'worker_load' } }), at);
  const htmlPath = path.join(tmp, 'main-thread.html');
  const jsonPath = path.join(tmp, 'main-thread.json');
  const above = await makeReport(core, { db: st.db, htmlPath, jsonPath });
  assert.deepEqual(above.report.mainThread.byReason, [{ reason: 'worker_load', n: 2 }, { reason: 'csp', n: 1 }]);
  const line = "main thread: 3 of 203 runs (1.5%) ran on the page's main thread, not in the Worker (worker_load 2, csp 1)";
  assert.ok(above.text.split('\n').includes(line), above.text);
  assert.match(above.text, /^CAUTION: 3 of 203 \(1\.5%\) of the runs ran on the page's main thread, not in the Worker \(worker_load 2, csp 1\): .*docs\/embedding\.md/m);
  const html = fs.readFileSync(htmlPath, 'utf8');
  assert.ok(html.includes(`<p class="main-thread">${line.replace(/'/g, '&#39;')}.</p>`));
  assert.match(html, /<p class="caution">Caution: 3 of 203 \(1\.5%\) of the runs ran on the page&#39;s main thread/);
  const json = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
  assert.deepEqual(json.mainThread, { runs: 203, main: 3, share: 3 / 203, byReason: [{ reason: 'worker_load', n: 2 }, { reason: 'csp', n: 1 }] });
  assert.ok(json.verdict.cautions.some((c) => c.startsWith('3 of 203 (1.5%) of the runs ran on the page\'s main thread')));
  // Another arms mode's and payload mode's runs are not this report's.
  const aa = run('m3', { hs: [50], ts: [45], context: { run_context: 'main', worker_fallback: 'disabled' } });
  insert(st, { ...aa, arms: 'h2-h2', samples: aa.samples.map((x) => ({ ...x, origin: 'h2', protocol: 'h2' })) }, at);
  insert(st, { ...run('m4', { hs: [50], ts: [45], context: { run_context: 'main', worker_fallback: 'disabled' } }), payload_bytes: 1000 }, at);
  assert.equal((await makeReport(core, { db: st.db })).report.mainThread.main, 3);
  assert.deepEqual((await makeReport(core, { db: st.db, arms: 'h2-h2' })).report.mainThread.byReason, [{ reason: 'disabled', n: 1 }]);
  // The count reads the store's partial index of such runs, not every run row.
  const plan = st.db.prepare("EXPLAIN QUERY PLAN SELECT count(*) FROM runs WHERE run_context = 'main' AND received_at >= ''").all();
  assert.match(plan.map((p) => p.detail).join('; '), /runs_main_thread/);
  st.close();
});
