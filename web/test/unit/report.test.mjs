// Unit tests of the report on a small synthetic SQLite database written through the collector's store: what is read (counts,
// exclusions by reason, per-region groups, metric choice, --since, the paired within-run differences), the table and HTML
// the report command makes with the WASM statistics, and the NDJSON export command.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../server/store.mjs';
import { readReportData, EXCLUSIONS } from '../../report/readReportData.mjs';
import { allPacked, scanRuns } from '../../report/scanRuns.mjs';
import { PACK_VERSION, packRun, requestStatus, statusSql } from '../../report/runPack.mjs';
import Database from 'better-sqlite3';
import { repoRoot } from '../../devstack/paths.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-report-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dbPath = path.join(tmp, 'report.sqlite');

function sample(phase, idx, protocol, networkMs, extra = {}) {
  return { phase, idx, origin: phase === 'control' ? 'h2' : 'h3', result: 'ok', http_status: 204, protocol, reused: true,
    network_ms: networkMs, queue_ms: 0.5, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: networkMs / 2, response_ms: 1,
    start_ms: 100, fetch_ms: networkMs + 1, ...extra };
}

// A run with h2 values hs, h3 values ts (each a number or [number, extra]), plus 3 pre-warm samples that never count.
function run(id, { order = 'h2-first', hs = [], ts = [] } = {}) {
  const prewarm = [sample('prewarm', 0, 'h2', 500), sample('prewarm', 1, 'h3', 400), sample('prewarm', 2, 'h2', 300)];
  const arm = (phase, protocol, list) => list.map((v, i) => (Array.isArray(v)
    ? sample(phase, i, protocol, v[0], v[1]) : sample(phase, i, protocol, v)));
  return { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'test', module_version: '0.1.0', order,
    outcome: 'complete', error: '', samples: [...prewarm, ...arm('control', 'h2', hs), ...arm('treatment', 'h3', ts)] };
}

before(() => {
  const store = openStore(dbPath);
  const at = (day) => ({ receivedAt: `2024-05-${String(day).padStart(2, '0')}T12:00:00.000Z` });
  // Asia, 1 May: 2 runs, one in each order.
  store.insertBeacon(run('a1', { hs: [100, 110, 120], ts: [90, 95, 100] }), { ...at(1), region: 'Asia', country: 'JP' });
  store.insertBeacon(run('a2', { order: 'h3-first', hs: [200, 210], ts: [150, [160, { protocol: 'h2' }]] }),
    { ...at(1), region: 'Asia', country: 'JP' });
  // Europe, 3 May: every exclusion reason once, and a run whose treatment arm is all fallbacks.
  store.insertBeacon(run('e1', {
    hs: [50, [51, { result: 'timeout', network_ms: null, protocol: '' }], [52, { result: 'http_error', http_status: 503 }],
      [53, { result: 'aborted', network_ms: null, protocol: '' }]],
    ts: [40, [41, { result: 'timing_unavailable', network_ms: 0, protocol: '' }], [42, { result: 'network_error', network_ms: null, protocol: '' }],
      [43, { result: 'no_timing_entry', network_ms: null }], [44, { connect_ms: null }]],
  }), { ...at(3), region: 'Europe', country: 'DE' });
  store.insertBeacon(run('e2', { hs: [60, 62], ts: [[45, { protocol: 'h2' }], [46, { protocol: 'h2' }]] }),
    { ...at(3), region: 'Europe', country: 'FR' });
  // No region stored (an older row): counted as unknown. 5 May.
  store.insertBeacon(run('u1', { order: 'random', hs: [70], ts: [65] }), { ...at(5), region: null });
  store.close();
});

const read = async (opts) => {
  const store = openStore(dbPath);
  try { return await readReportData(store.db, opts); } finally { store.close(); }
};
const group = (data, name) => data.groups.find((g) => g.name === name);

describe('report data', () => {
  test('counts runs and measured requests overall and per region, pre-warm left out, biggest region first', async () => {
    const data = await read();
    assert.equal(data.storedRuns, 5);
    // Asia and Europe tie on runs: then by name.
    assert.deepEqual(data.groups.map((g) => [g.name, g.runs, g.requests]),
      [['overall', 5, 25], ['Asia', 2, 10], ['Europe', 2, 13], ['unknown', 1, 2]]);
  });

  test('uses only ok samples over the arm’s own protocol, with their run ids', async () => {
    const asia = group(await read(), 'Asia');
    assert.deepEqual([...asia.arms.h2.values], [100, 110, 120, 200, 210]);
    assert.deepEqual([...asia.arms.h3.values], [90, 95, 100, 150]);
    assert.equal(asia.arms.h2.runs[0], asia.arms.h3.runs[0]);
    assert.notEqual(asia.arms.h2.runs[0], asia.arms.h2.runs[4]);
    assert.equal(asia.arms.h2.nRuns, 2);
    assert.ok(asia.arms.h2.values instanceof Float64Array && asia.arms.h2.runs instanceof Int32Array);
  });

  test('counts every exclusion by its reason', async () => {
    const europe = group(await read(), 'Europe');
    assert.deepEqual(europe.excluded, {
      fallback: 2, timing_unavailable: 1, timeout: 1, network_error: 1, http_error: 1, no_timing_entry: 1, aborted: 1,
      missing_metric: 0, other: 0,
    });
    assert.deepEqual([...europe.arms.h2.values], [50, 60, 62]);
    assert.deepEqual([...europe.arms.h3.values], [40, 44]);
    assert.deepEqual(Object.keys(europe.excluded), EXCLUSIONS);
    const overall = group(await read(), 'overall');
    assert.equal(overall.excluded.fallback, 3);
  });

  test('the fallback rate is fallbacks over completed treatment requests', async () => {
    const europe = group(await read(), 'Europe');
    // completed (result ok) treatment requests: e1's 40 and 44, e2's 45 and 46 (both over h2).
    assert.deepEqual(europe.fallback, { completed: 4, fallbacks: 2, rate: 0.5 });
    assert.equal(group(await read(), 'Asia').fallback.rate, 1 / 5);
  });

  test('another metric changes the values and counts a missing metric as its own exclusion', async () => {
    const data = await read({ metric: 'connect_ms' });
    const europe = group(data, 'Europe');
    assert.deepEqual([...europe.arms.h3.values], [0]);
    assert.equal(europe.excluded.missing_metric, 1);
    assert.deepEqual([...group(await read({ metric: 'fetch_ms' }), 'Asia').arms.h2.values], [101, 111, 121, 201, 211]);
    await assert.rejects(read({ metric: 'run_id' }), /unknown metric/);
  });

  test('--since keeps runs received at or after the date', async () => {
    const data = await read({ since: '2024-05-02' });
    assert.equal(data.storedRuns, 3);
    assert.deepEqual(data.groups.map((g) => g.name).sort(), ['Europe', 'overall', 'unknown']);
    assert.equal(group(data, 'overall').runs, 3);
    assert.equal((await read({ since: '2024-05-05T12:00:00Z' })).groups[0].runs, 1);
    assert.equal((await read({ since: '2030-01-01' })).groups[0].runs, 0);
    await assert.rejects(read({ since: 'yesterday' }), /--since/);
  });

  test('two worker threads read exactly what one thread reads', async () => {
    const one = await read({ threads: 1 });
    const two = await read({ threads: 2 });
    const view = (d) => d.groups.map((g) => ({ ...g, arms: Object.fromEntries(Object.entries(g.arms).map(([k, a]) =>
      [k, { ...a, values: [...a.values], runs: [...a.runs] }])), paired: Object.fromEntries(Object.entries(g.paired).map(([k, v]) => [k, [...v]])) }));
    assert.deepEqual(view(two), view(one));
  });

  test('paired differences: per run median(h3) - median(h2), split by the recorded order', async () => {
    const data = await read();
    const asia = group(data, 'Asia');
    assert.deepEqual([...asia.paired.diffs], [95 - 110, 150 - 205]);
    assert.deepEqual([...asia.paired.h2First], [-15]);
    assert.deepEqual([...asia.paired.h3First], [-55]);
    // e2 has no usable HTTP/3 sample; u1's order 'random' is in neither split.
    const overall = group(data, 'overall');
    assert.equal(overall.paired.diffs.length, 4);
    assert.equal(overall.paired.h2First.length + overall.paired.h3First.length, 3);
  });
});

describe('packed runs (the report\u2019s fast path)', () => {
  // Every exclusion reason, fallbacks (to h2 and with no protocol), a missing metric, an unknown result, a run without
  // measured requests, a retried beacon, several regions and days.
  const packedPath = path.join(tmp, 'packed.sqlite');
  const day = (d) => `2024-06-${String(d).padStart(2, '0')}T08:00:00.000Z`;
  const beacons = [
    [run('p1', { hs: [100, [101, { result: 'timeout', network_ms: null, protocol: '' }], 102],
      ts: [[90, { protocol: 'h2' }], [91, { protocol: null }], 92] }), { receivedAt: day(1), region: 'Asia' }],
    [run('p2', { order: 'h3-first', hs: [[50, { result: 'http_error' }], [51, { result: 'aborted', network_ms: null }],
      [52, { result: 'weird' }], [53, { network_ms: null }]],
    ts: [[40, { result: 'timing_unavailable', network_ms: 0, protocol: '' }], [41, { result: 'network_error', network_ms: null }],
      [42, { result: 'no_timing_entry', network_ms: null }], [43, { network_ms: null }], [-0, {}], 44] }),
    { receivedAt: day(2), region: 'Europe' }],
    [run('p3', { order: 'random', hs: [70, 71], ts: [60] }), { receivedAt: day(3), region: null }],
    [run('p4', {}), { receivedAt: day(3), region: 'Europe' }],
    [run('p5', { hs: [[80, { protocol: 'h3' }], 81], ts: [79, [78, { result: null }]] }), { receivedAt: day(4), region: 'Asia' }],
    [run('p2', { hs: [1], ts: [2] }), { receivedAt: day(5), region: 'Europe' }],
    [run('p6', { hs: [65, 66, 67], ts: [[64, { protocol: 'h2' }], 63] }), { receivedAt: day(5), region: 'Oceania' }],
  ];
  before(() => {
    const store = openStore(packedPath);
    for (const [beacon, meta] of beacons) store.insertBeacon(beacon, meta);
    // Samples out of idx order in the beacon: the packed arm must still be in the table's (phase, idx) order.
    const shuffled = run('p7', { hs: [11, 12, 13], ts: [21, 22, 23] });
    shuffled.samples.reverse();
    store.insertBeacon(shuffled, { receivedAt: day(6), region: 'Asia' });
    store.close();
  });
  const scanBoth = (db, metric, sinceIso) => {
    const regions = db.prepare(`SELECT DISTINCT coalesce(region, 'unknown') FROM runs WHERE received_at >= ? ORDER BY 1`)
      .pluck().all(sinceIso);
    const { lo, hi } = db.prepare('SELECT min(rowid) AS lo, max(rowid) AS hi FROM runs').get();
    const range = { metric, sinceIso, regions, lo, hi };
    return { fast: scanRuns(db, range), slow: scanRuns(db, { ...range, packed: false }), packed: allPacked(db, range) };
  };

  test('the JavaScript rule and the SQL CASE classify every request the same', () => {
    const db = new Database(packedPath, { readonly: true });
    try {
      const rows = db.prepare(`SELECT phase, result, protocol, network_ms, connect_ms, ${statusSql('network_ms')} AS st,
        ${statusSql('connect_ms')} AS st2 FROM requests q WHERE phase IN ('control', 'treatment')`).all();
      assert.ok(rows.length > 30);
      for (const r of rows) {
        assert.equal(requestStatus(r.phase, r.result, r.protocol, r.network_ms), r.st, JSON.stringify(r));
        assert.equal(requestStatus(r.phase, r.result, r.protocol, r.connect_ms), r.st2, JSON.stringify(r));
      }
      // Every reason occurs at least once.
      assert.deepEqual([...new Set(rows.map((r) => r.st))].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally { db.close(); }
  });

  test('reading packed runs gives exactly what the row scan gives, with and without --since', () => {
    const db = new Database(packedPath, { readonly: true });
    try {
      for (const since of ['', '2024-06-02T00:00:00.000Z', '2024-06-05T00:00:00.000Z', '2030-01-01T00:00:00.000Z']) {
        const { fast, slow, packed } = scanBoth(db, 'network_ms', since);
        assert.equal(packed, true);
        assert.deepEqual(fast, slow, `since ${since}`);
      }
      const { fast } = scanBoth(db, 'network_ms', '');
      assert.ok(fast.regions.some((g) => g.excludedCounts.every((n) => n > 0) || g.excludedCounts[0] > 0));
    } finally { db.close(); }
  });

  test('the packed form of a run', () => {
    const rows = [
      { phase: 'prewarm', idx: 0, result: 'ok', protocol: 'h2', network_ms: 5 },
      { phase: 'control', idx: 1, result: 'ok', protocol: 'h2', network_ms: 2.5 },
      { phase: 'control', idx: 0, result: 'ok', protocol: 'h2', network_ms: 1.5 },
      { phase: 'treatment', idx: 0, result: 'ok', protocol: 'h2', network_ms: 3 },
      { phase: 'treatment', idx: 1, result: 'timeout', protocol: '', network_ms: null },
      { phase: 'treatment', idx: 2, result: 'ok', protocol: 'h3', network_ms: 4 },
    ];
    const p = packRun(rows);
    assert.equal(p.packed_version, PACK_VERSION);
    assert.deepEqual([...new Float64Array(new Uint8Array(p.h2_network).buffer)], [1.5, 2.5]);
    assert.deepEqual([...new Float64Array(new Uint8Array(p.h3_network).buffer)], [4]);
    // requests, fallbackOk, h2 and h3 samples, then fallback, timing_unavailable, timeout, ...
    assert.deepEqual([...new Int32Array(new Uint8Array(p.packed_counts).buffer)], [5, 2, 2, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
  });

  test('other metrics, partly packed and old databases take the row scan and read the same', async () => {
    const readAt = async (file, opts, readonly = true) => {
      const db = new Database(file, { readonly });
      try { return await readReportData(db, opts); } finally { db.close(); }
    };
    const expected = await readAt(packedPath, { since: '2024-06-02' });
    // Another metric: the row scan.
    const db = new Database(packedPath, { readonly: true });
    try { assert.deepEqual(scanBoth(db, 'fetch_ms', '').fast, scanBoth(db, 'fetch_ms', '').slow); } finally { db.close(); }

    // Some runs stored before packing (their columns NULL).
    const partly = path.join(tmp, 'partly.sqlite');
    fs.copyFileSync(packedPath, partly);
    const w = new Database(partly);
    w.prepare("UPDATE runs SET packed_version = NULL, h2_network = NULL, h3_network = NULL, packed_counts = NULL WHERE run_id = 'p6'").run();
    assert.equal(scanBoth(w, 'network_ms', '').packed, false);
    // A --since that leaves the unpacked run out could still read packed rows only if every selected run is packed.
    assert.equal(scanBoth(w, 'network_ms', '2024-06-06T00:00:00.000Z').packed, true);
    w.close();
    assert.deepEqual(await readAt(partly, { since: '2024-06-02' }), expected);

    // A database from before the packed columns: no such columns at all, opened read-only (nothing migrates it).
    const old = path.join(tmp, 'old.sqlite');
    const o = new Database(old);
    o.exec(`ATTACH '${packedPath}' AS src;
      CREATE TABLE runs (run_id TEXT PRIMARY KEY, page_load_id TEXT, config_id TEXT, module_version TEXT, run_order TEXT,
        outcome TEXT, error TEXT, received_at TEXT, region TEXT, country TEXT, summary_json TEXT, beacon_json TEXT,
        run_ms REAL, sample_rate REAL, effective_type TEXT, visible_throughout INTEGER);
      CREATE INDEX runs_received_at ON runs (received_at);
      INSERT INTO runs SELECT run_id, page_load_id, config_id, module_version, run_order, outcome, error, received_at, region,
        country, summary_json, beacon_json, run_ms, sample_rate, effective_type, visible_throughout FROM src.runs ORDER BY rowid;
      CREATE TABLE requests (run_id TEXT REFERENCES runs, phase TEXT, idx INTEGER, origin TEXT, result TEXT, http_status INTEGER,
        protocol TEXT, reused INTEGER, network_ms REAL, queue_ms REAL, dns_ms REAL, connect_ms REAL, tls_ms REAL, request_ms REAL,
        response_ms REAL, start_ms REAL, fetch_ms REAL, PRIMARY KEY (run_id, phase, idx));
      INSERT INTO requests SELECT * FROM src.requests;
      DETACH src;`);
    o.close();
    assert.deepEqual(await readAt(old, { since: '2024-06-02' }), expected);
    // Opened by the store, it gains the columns (NULL for the old runs) and still reads the same; new beacons are packed.
    const store = openStore(old);
    assert.equal(scanBoth(store.db, 'network_ms', '').packed, false);
    store.insertBeacon(run('p8', { hs: [1, 2], ts: [3] }), { receivedAt: day(7), region: 'Asia' });
    assert.equal(scanBoth(store.db, 'network_ms', '2024-06-07T00:00:00.000Z').packed, true);
    store.close();
    const afterMigration = await readAt(old, { since: '2024-06-02' });
    const withP8 = await readAt(packedPath, { since: '2024-06-02' });
    assert.deepEqual(afterMigration.groups[0].requests, withP8.groups[0].requests + 3);
  });
});

describe('export command', () => {
  test('writes one NDJSON line per stored run with its requests nested', async () => {
    const out = path.join(tmp, 'runs.ndjson');
    execFileSync(process.execPath, [path.join(repoRoot, 'web/scripts/export.mjs'), '--db', dbPath, '--out', out], { stdio: 'pipe' });
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.run_id).sort(), ['a1', 'a2', 'e1', 'e2', 'u1']);
    const e1 = lines.find((l) => l.run_id === 'e1');
    assert.equal(e1.region, 'Europe');
    assert.equal(e1.country, 'DE');
    assert.equal(e1.requests.length, 3 + 4 + 5);
    assert.ok(!('beacon_json' in e1));
  });

  test('to stdout without --out', async () => {
    const text = execFileSync(process.execPath, [path.join(repoRoot, 'web/scripts/export.mjs'), '--db', dbPath], { encoding: 'utf8' });
    assert.equal(text.trim().split('\n').length, 5);
  });
});

describe('report command', () => {
  const script = path.join(repoRoot, 'web/scripts/report.mjs');
  const runReport = (...args) => spawnSync(process.execPath, [script, '--db', dbPath, ...args], { encoding: 'utf8' });

  test('prints the table overall and per region, with exclusions and CIs, and writes the HTML report', () => {
    const html = path.join(tmp, 'out', 'report.html');
    const { status, stdout, stderr } = runReport('--html', html);
    assert.equal(status, 0, stderr);
    assert.match(stdout, /^h3probe report: network_ms, 5 stored runs/m);
    assert.match(stdout, /^== overall: 5 runs, 25 measured requests; used HTTP\/2 9 \(5 runs\), HTTP\/3 7 \(4 runs\)$/m);
    assert.match(stdout, /^== Europe: 2 runs, 13 measured requests/m);
    assert.match(stdout, /^excluded: fallback 2, timing_unavailable 1, timeout 1, network_error 1, http_error 1, no_timing_entry 1, aborted 1$/m);
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
    assert.doesNotMatch(stdout, /^== Asia/m);
    assert.doesNotMatch(stdout, /HTML report/);
  });

  test('fails with a message on a bad metric, method or missing database', () => {
    assert.match(runReport('--no-html', '--metric', 'run_id').stderr, /unknown metric "run_id"/);
    assert.match(runReport('--no-html', '--method', 'magic').stderr, /--method must be one of delta, bootstrap/);
    const missing = spawnSync(process.execPath, [script, '--db', path.join(tmp, 'nope.sqlite')], { encoding: 'utf8' });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no database at/);
  });
});
