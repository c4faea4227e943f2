// Unit tests of the report on a small synthetic SQLite database written through the collector's store: what is read (counts,
// exclusions by reason, per-region groups, metric choice, --since, the paired within-run differences), the table and HTML
// the report command makes with the WASM statistics, and the NDJSON export command.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../stack/store.mjs';
import { readReportData, EXCLUSIONS } from '../../report/readReportData.mjs';
import { repoRoot } from '../../stack/paths.mjs';

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
