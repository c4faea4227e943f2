// The report from ClickHouse (aggregates computed by SQL inside it, the inference in C++) against the report from SQLite
// (aggregates computed in C++ from the values) on the same mixed database: several regions, both orders, A/A runs
// beside the experiment's, every exclusion class, fallbacks, missing metric values. The text, HTML and JSON reports
// must be the same byte for byte, but the time each was made. Then real clusters of Debian's servers and ZooKeeper:
// 2 shards × 1 replica and 1 shard × 2 replicas (one replica stopped for a while), replicated local tables made ON
// CLUSTER plus Distributed tables, beacons stored through the collector, the same report again (from either replica).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { startClickHouseCluster } from '../../launch/clickhouse.mjs';
import { clickhouseLane, needsServer } from '../chdb/lane.mjs';
import { EXAMPLE_NETWORKS, syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { assertSameReport as assertSame } from './sameReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-chreport-');
const { tmp, plans } = scratch;
// The clusters' servers and ZooKeepers, stopped before the scratch space is removed.
const stops = [];
after(async () => {
  for (const stop of stops) await stop();
  await scratch.cleanup();
});

function sample(phase, idx, protocol, networkMs, extra = {}) {
  return { phase, idx, origin: phase === 'control' ? 'h2' : protocol || 'h3', result: 'ok', http_status: 204, protocol, reused: true,
    network_ms: networkMs, queue_ms: 0.5, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: networkMs / 2, response_ms: 1,
    start_ms: 100, fetch_ms: networkMs + 1, ...extra };
}
// Hand-made runs with every exclusion class, fallbacks, a missing tls_ms, and A/A runs (which the default report leaves out).
function handMade() {
  const run = (id, region, { order = 'h2-first', arms = 'h2-h3', hs = [], ts = [] }) => {
    const arm = (phase, protocol, list) => list.map((v, i) => (Array.isArray(v)
      ? sample(phase, i, protocol, v[0], { origin: phase === 'control' ? 'h2' : arms.slice(3), ...v[1] })
      : sample(phase, i, protocol, v, { origin: phase === 'control' ? 'h2' : arms.slice(3) })));
    return { beacon: { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'mixed', module_version: '0.1.0', order, arms,
      outcome: 'complete', error: '', samples: [sample('prewarm', 0, 'h2', 500), ...arm('control', 'h2', hs), ...arm('treatment', arms === 'h2-h2' ? 'h2' : 'h3', ts)] },
    meta: { receivedAt: '2022-12-20T10:00:00.000Z', region, country: null } };
  };
  return [
    run('x-e1', 'Europe', { hs: [50, [51, { result: 'timeout', network_ms: null, protocol: '' }], [52, { result: 'http_error', http_status: 503 }],
      [53, { result: 'aborted', network_ms: null, protocol: '' }]],
    ts: [40, [41, { result: 'timing_unavailable', network_ms: 0, protocol: '' }], [42, { result: 'network_error', network_ms: null, protocol: '' }],
      [43, { result: 'no_timing_entry', network_ms: null }], [44, { tls_ms: null }], [45, { result: 'redirected' }], [46, { result: 'cache_hit' }]] }),
    run('x-e2', 'Europe', { hs: [60, 62], ts: [[45, { protocol: 'h2' }], [46, { protocol: '' }]] }),
    run('x-n1', null, { order: 'h3-first', hs: [70], ts: [] }),
    ...Array.from({ length: 12 }, (_, i) => run(`x-aa${i}`, 'Asia', { arms: 'h2-h2', hs: [100 + i, 101], ts: [99 + i, 103] })),
    // Runs on the page's main thread, by why they left the Worker (none given: a module older than the reason).
    ...[['x-m1', 'Europe', 'worker_load'], ['x-m2', 'Europe', 'worker_load'], ['x-m3', 'Asia', 'csp'], ['x-m4', null, undefined]]
      .map(([id, region, reason], i) => {
        const r = run(id, region, { hs: [80 + i, 82], ts: [75 + i, 77] });
        r.beacon.context = { run_context: 'main', ...(reason ? { worker_fallback: reason } : {}) };
        return r;
      }),
    // Runs of the payload mode (payloadBytes 131072): a report of their own, never pooled with the no-op's.
    ...Array.from({ length: 4 }, (_, i) => {
      const r = run(`x-p${i}`, 'Europe', { order: i % 2 ? 'h3-first' : 'h2-first', hs: [300 + i, 310], ts: [250 + i, 262 - i] });
      r.beacon.payload_bytes = 131072;
      r.beacon.context = { run_context: i ? 'worker' : 'main', ...(i ? {} : { worker_fallback: 'disabled' }) };
      return r;
    }),
    // The gate's load_error beacons: counted by reason, in no arms mode's runs.
    // Two wasm_type texts once each: both stores must name the same one (the first in code-unit order).
    ...[['x-l1', 'wasm_type', 'start: the .wasm answered 404'], ['x-l2', 'csp', ''], ['x-l3', 'wasm_type', 'start: the .wasm answered 200 text/plain']]
      .map(([id, reason, error]) => ({
      beacon: { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'mixed', outcome: 'load_error', reason,
        error, run_ms: 9, samples: [] },
      meta: { receivedAt: '2022-12-20T10:00:00.000Z', region: 'Europe', country: null } })),
  ];
}

async function writeBoth(items, sqlitePath, chStore) {
  const st = openStore(sqlitePath, core);
  const pending = [];
  for (const { beacon, meta } of items) {
    const text = JSON.stringify(beacon);
    const decoded = core.decodeBeacon(text);
    assert.ok(decoded.ok, decoded.error);
    st.insertBeacon(decoded, meta);
    if (chStore) pending.push(chStore.queueBeacon(core.decodeBeacon(text), meta));
  }
  st.close();
  await Promise.all(pending);
}

// The text, HTML and JSON reports from each store; from ClickHouse also the (day, region) cells each set of passes read
// from the value summary and from run_records (cells: [{summary, raw}], the report's then the cumulative looks').
async function bothReports(sqlitePath, chSpec, options, tag, chOptions = {}) {
  const out = {};
  for (const [name, source] of [['sqlite', { dbPath: sqlitePath }], ['clickhouse', { store: chSpec, ...chOptions }]]) {
    const r = await makeReport(core, { ...source, ...options, htmlPath: path.join(tmp, `${tag}-${name}.html`), jsonPath: path.join(tmp, `${tag}-${name}.json`) });
    out[name] = { text: r.text, html: fs.readFileSync(r.htmlPath, 'utf8'), json: JSON.parse(fs.readFileSync(r.jsonPath, 'utf8')),
      cells: (r.passes ?? []).filter((p) => p.name.endsWith('summary-totals')).map((p) => p.cells ?? { summary: 0, raw: 0 }) };
  }
  return out;
}

// A ClickHouse server of this test's own, empty: the store spec of its database `name`.
async function freshServer(name) {
  return `clickhouse://127.0.0.1:${(await scratch.fresh(name)).httpPort}/${name}`;
}

// A ClickHouse query over HTTP (the server at a store spec's host), its answer's text.
async function chQuery(spec, sql) {
  const u = new URL(spec);
  const res = await fetch(`http://${u.host}/?database=${u.pathname.slice(1)}`, { method: 'POST', body: sql });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return text;
}

describe('report from ClickHouse aggregates', () => {
  let chSpec;
  const sqlitePath = path.join(tmp, 'mixed.sqlite');
  before(async () => {
    chSpec = `clickhouse://127.0.0.1:${(await scratch.fresh('report')).httpPort}/mixed`;
    const ch = await openClickHouseStore(chSpec, core, { log: path.join(tmp, 'mixed-log.ndjson') });
    await writeBoth([...syntheticBeacons({ runs: 900, seed: 7, days: 3 }), ...handMade()], sqlitePath, ch);
    await ch.flushed();
    assert.equal(ch.state().failures, 0, 'every batch went in at the first try');
    await ch.close();
  });

  test('the text, HTML and JSON reports byte for byte the same from both stores', { timeout: 60_000 }, async () => {
    const both = await bothReports(sqlitePath, chSpec, {}, 'all');
    // Every cell from the value summary (the report and the cumulative looks), none from the raw rows.
    assert.equal(both.clickhouse.cells.length, 2);
    for (const c of both.clickhouse.cells) assert.ok(c.summary >= 20 && c.raw === 0, JSON.stringify(both.clickhouse.cells));
    assert.match(both.sqlite.text, /== region North America: \d+ runs/);
    assert.ok(both.sqlite.json.groups[0].analysis.rows.some((r) => Number.isFinite(r.ci_ms[0])), 'some intervals defined');
    assert.ok(both.sqlite.json.groups[0].order, 'the order effect is there (random order)');
    assert.match(both.sqlite.text, /^load errors: 3 \(wasm_type 2, csp 1\)\n {2}wasm_type: start: the \.wasm answered 200 text\/plain\n(?! {2}csp)/m);
    // Below 1 % on the main thread: the line, and no caution.
    assert.match(both.sqlite.text, /^main thread: 4 of \d+ runs \(0\.\d%\) ran on the page's main thread, not in the Worker \(worker_load 2, csp 1, unknown 1\)$/m);
    assert.doesNotMatch(both.sqlite.text, /CAUTION: .*main thread/);
    assertSame(both);
  });

  test('the same with --since, another metric with missing values, an A/A mode and another confidence', { timeout: 60_000 }, async () => {
    assertSame(await bothReports(sqlitePath, chSpec, { since: '2022-12-16', metric: 'tls_ms', confidence: 0.9 }, 'since'));
    // A since in the middle of a day: that day's cells hold part of their runs, read from run_records.
    const midDay = await bothReports(sqlitePath, chSpec, { since: '2022-12-16T09:30:00Z' }, 'midday');
    for (const c of midDay.clickhouse.cells) assert.ok(c.summary > 0 && c.raw > 0, JSON.stringify(midDay.clickhouse.cells));
    assertSame(midDay);
    const aa = await bothReports(sqlitePath, chSpec, { arms: 'h2-h2' }, 'aa');
    assert.match(aa.sqlite.text, /12 stored runs/);
    assertSame(aa);
    // Split by day: the report's groups and the daily series' are the same grouping, asked twice of one source.
    const byDay = await bothReports(sqlitePath, chSpec, { by: 'day' }, 'day');
    assert.equal(byDay.sqlite.json.daily.days.length, 4, 'the 3 synthetic days and the day of the hand-made runs');
    assertSame(byDay);
  });

  test('the payload mode: one at a time, the same from both stores, the other modes named', { timeout: 60_000 }, async () => {
    const payload = await bothReports(sqlitePath, chSpec, { payloadBytes: 131072 }, 'payload');
    assert.match(payload.sqlite.text, /4 stored runs/);
    // A quarter on the main thread: the caution, from both stores.
    assert.match(payload.sqlite.text, /^main thread: 1 of 4 runs \(25\.0%\) ran on the page's main thread, not in the Worker \(disabled 1\)$/m);
    assert.match(payload.sqlite.text, /^CAUTION: 1 of 4 \(25\.0%\) of the runs ran on the page's main thread, not in the Worker \(disabled 1\)/m);
    assert.deepEqual(payload.clickhouse.json.mainThread, { runs: 4, main: 1, share: 0.25, byReason: [{ reason: 'disabled', n: 1 }] });
    assert.match(payload.sqlite.text, /^payload: 131,072 B per measured request \(--payload-bytes\); other payload modes stored: 0 B \(the no-op\) \d+ runs$/m);
    assert.ok(payload.sqlite.json.groups[0].analysis.rows.every((r) => r.h2 >= 300 && r.h3 >= 250));
    assertSame(payload);
  });

  test('npm run report -- --store clickhouse://… prints what --store sqlite: prints; bootstrap is refused with a reason', { timeout: 60_000 }, async () => {
    const run = (spec, extra = []) => execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report', '--store', spec,
      '--no-html', ...extra], { encoding: 'utf8' });
    assert.equal(run(chSpec), run(`sqlite:${sqlitePath}`));
    assert.throws(() => execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report', '--store', chSpec, '--no-html',
      '--method', 'bootstrap'], { encoding: 'utf8', stdio: 'pipe' }), /needs every value/);
  });
});

describe('the value summary, where it does not match run_records', () => {
  test('cells missing, doubled or changed in it, and today\'s, are read from the raw rows', { timeout: 120_000 }, async () => {
    const chSpec = await freshServer('summary');
    const sqlitePath = path.join(tmp, 'summary.sqlite');
    // Runs over four days, and a few received now (a day still receiving runs).
    const now = new Date().toISOString();
    const today = [...syntheticBeacons({ runs: 30, seed: 5, days: 1, start: now.slice(0, 10) })].map((b) => ({ ...b, meta: { ...b.meta, receivedAt: now } }));
    let ch = await openClickHouseStore(chSpec, core, { log: path.join(tmp, 'summary-log.ndjson') });
    await writeBoth([...syntheticBeacons({ runs: 600, seed: 9, days: 4 }), ...today], sqlitePath, ch);
    await ch.flushed();
    await ch.close();
    const cellCount = Number(await chQuery(chSpec, `SELECT uniqExact(substring(received_at, 1, 10), region) FROM run_records
      WHERE arms = 'h2-h3' AND received_at < '${now.slice(0, 10)}'`));
    const todayCells = Number(await chQuery(chSpec, `SELECT uniqExact(region) FROM run_records WHERE received_at >= '${now.slice(0, 10)}'`));
    const intact = await bothReports(sqlitePath, chSpec, {}, 'intact');
    assert.deepEqual(intact.clickhouse.cells[0], { summary: cellCount, raw: todayCells });
    assertSame(intact);

    // One day's rows of one region twice, another day's of every region gone, one value's weight changed.
    const [[day1, region1], [day2], [day3, region3]] = (await chQuery(chSpec, `SELECT DISTINCT day, region FROM run_values
      WHERE arms = 'h2-h3' AND metric = 'network_ms' ORDER BY day, region`)).trim().split('\n').map((l) => l.split('\t'))
      .filter((c, i, all) => i === 0 || c[0] !== all[i - 1][0]);
    await chQuery(chSpec, `INSERT INTO run_values SELECT * FROM run_values WHERE day = '${day1}' AND region = '${region1}'`);
    await chQuery(chSpec, 'CREATE TABLE kept AS run_values');
    await chQuery(chSpec, `INSERT INTO kept SELECT * FROM run_values WHERE day != '${day2}'`);
    await chQuery(chSpec, 'TRUNCATE TABLE run_values');
    await chQuery(chSpec, 'INSERT INTO run_values SELECT * FROM kept');
    await chQuery(chSpec, `INSERT INTO run_values SELECT arms, payload_bytes, metric, day, region, network, s, v, 0, 2, 0, 0 FROM run_values
      WHERE day = '${day3}' AND region = '${region3}' AND metric = 'network_ms' AND s = 1 LIMIT 1`);
    const day2Cells = Number(await chQuery(chSpec, `SELECT uniqExact(region) FROM run_records WHERE arms = 'h2-h3' AND substring(received_at, 1, 10) = '${day2}'`));
    const damaged = await bothReports(sqlitePath, chSpec, {}, 'damaged');
    assert.deepEqual(damaged.clickhouse.cells[0], { summary: cellCount - 2 - day2Cells, raw: todayCells + 2 + day2Cells });
    assertSame(damaged);
    assertSame(await bothReports(sqlitePath, chSpec, { by: 'day', since: `${day1}T06:00:00Z` }, 'damaged-day'));
    // Every value read from run_records: the same report.
    const raw = await makeReport(core, { store: chSpec, readSummary: false });
    assert.equal(raw.text, (await makeReport(core, { dbPath: sqlitePath })).text);
    assert.ok(!raw.passes.some((p) => p.name === 'summary-totals'));

    // The collector's inserts go on through the view: a new day is read from the summary.
    ch = await openClickHouseStore(chSpec, core, { log: path.join(tmp, 'summary-log.ndjson') });
    await writeBoth([...syntheticBeacons({ runs: 60, seed: 10, days: 1, start: '2022-12-25' })], sqlitePath, ch);
    await ch.flushed();
    await ch.close();
    const newCells = Number(await chQuery(chSpec, `SELECT uniqExact(region) FROM run_records WHERE arms = 'h2-h3' AND received_at >= '2022-12-25'
      AND received_at < '2022-12-26'`));
    const later = await bothReports(sqlitePath, chSpec, {}, 'later');
    assert.equal(later.clickhouse.cells[0].summary, damaged.clickhouse.cells[0].summary + newCells);
    assertSame(later);
  });
});

describe('--by network from ClickHouse', () => {
  test('the same report as SQLite: networks over the minimum, the rest pooled as other, the blocked network\'s fallback rate', { timeout: 120_000 }, async () => {
    const chSpec = await freshServer('networks');
    const sqlitePath = path.join(tmp, 'networks.sqlite');
    const ch = await openClickHouseStore(chSpec, core, { log: path.join(tmp, 'networks-log.ndjson') });
    await writeBoth([...syntheticBeacons({ runs: 300, seed: 11, days: 2, networks: EXAMPLE_NETWORKS })], sqlitePath, ch);
    await ch.flushed();
    await ch.close();
    const both = await bothReports(sqlitePath, chSpec, { by: 'network' }, 'network');
    assert.deepEqual(both.clickhouse.json.groups.map((g) => [g.name, g.runs]), [['overall', 300], ['AS15169 Google LLC', 120],
      ['AS13335 Cloudflare, Inc.', 75], ['AS64500', 60], ['unknown', 30], ['other', 15]]);
    assert.deepEqual(both.clickhouse.json.pooled, { minRuns: 10, values: 2 });
    assert.equal(both.clickhouse.json.groups[2].fallback.rate, 1);
    assertSame(both);
    const fewer = await bothReports(sqlitePath, chSpec, { by: 'network', minGroupRuns: 50, since: '2022-12-15T12:00:00Z' }, 'network50');
    assert.ok(fewer.clickhouse.json.groups.some((g) => g.name === 'other'));
    assertSame(fewer);
  });
});

// Countries through a header the collector trusts from loopback: several regions. Client addresses for the network
// lookup: 40, 40 and 20 of every 100 runs on AS 15169, AS 13335 and none (the two networks' equal runs are listed by name).
const COUNTRIES = ['US', 'DE', 'JP', 'BR'];
const CLIENTS = [...Array(2).fill('8.8.8.8'), ...Array(2).fill('1.1.1.1'), '10.0.0.1'];

// Posts each of items (syntheticBeacons()) to every collector, 16 at a time, beacon k from COUNTRIES and CLIENTS by its
// index k + from; every answer must be 204 (acknowledged).
async function postToAll(collectors, items, from = 0) {
  let k = 0;
  const send = async () => {
    while (k < items.length) {
      const i = k++;
      const body = JSON.stringify(items[i].beacon);
      const headers = { 'CF-IPCountry': COUNTRIES[(i + from) % COUNTRIES.length], 'X-Forwarded-For': CLIENTS[(i + from) % CLIENTS.length] };
      for (const c of collectors) {
        const status = await new Promise((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port: c.port, method: 'POST', path: '/beacon', agent: false, headers },
            (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
          req.on('error', reject);
          req.end(body);
        });
        assert.equal(status, 204);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, send));
}

// What each server of a cluster holds in its local tables of database db: [runs, run_records, distinct run_ids of
// requests, request rows].
async function localCounts(servers, db) {
  const out = [];
  for (const s of servers) {
    out.push((await chQuery(`clickhouse://127.0.0.1:${s.httpPort}/${db}`, 'SELECT (SELECT count() FROM runs_local), '
      + '(SELECT count() FROM run_records_local), (SELECT uniqExact(run_id) FROM requests_local), (SELECT count() FROM requests_local)'))
      .trim().split('\t').map(Number));
  }
  return out;
}

// A cluster of shards × replicas (startClickHouseCluster()), stopped after the file's tests, and beside it two
// collectors: one into the cluster through its first server (database db), one into SQLite (tag.sqlite).
async function clusterAndCollectors(cluster, shards, db, tag, storeOptions = {}) {
  const started = await startClickHouseCluster(cluster, shards, { fresh: true });
  plans.push(...started.plans);
  stops.push(started.stop);
  const specOf = (s) => `clickhouse://127.0.0.1:${s.httpPort}/${db}?cluster=${cluster}`;
  const chStore = await openClickHouseStore(specOf(started.servers[0]), core, { log: path.join(tmp, `${tag}-log.ndjson`), ...storeOptions });
  const sqlitePath = path.join(tmp, `${tag}.sqlite`);
  const sqliteStore = openStore(sqlitePath, core);
  const collectors = [await startCollector({ port: 0, store: chStore, core, rateLimit: 0 }),
    await startCollector({ port: 0, store: sqliteStore, core, rateLimit: 0 })];
  return { started, specOf, chStore, sqlitePath, collectors,
    async close() {
      for (const c of collectors) await c.close();
      await chStore.close();
      sqliteStore.close();
    } };
}

describe('ClickHouse clusters: replicated tables ON CLUSTER, a ZooKeeper, Distributed tables', needsServer, () => {
  test('2 shards × 1 replica: beacons through the collector; each shard holds part of the runs; the same report as SQLite', { timeout: 240_000 }, async () => {
    const cluster = 'h3probe_two_shards';
    const setup = await clusterAndCollectors(cluster, [[`test-shard1-${process.pid}`], [`test-shard2-${process.pid}`]], 'sharded', 'shards');
    const { started, chStore, sqlitePath, collectors } = setup;
    const spec = setup.specOf(started.servers[0]);
    try {
      const items = [...syntheticBeacons({ runs: 100, seed: 21, days: 1 })];
      await postToAll(collectors, items);
      await chStore.flushed();
      assert.equal(chStore.state().failures, 0);
      // Both shards hold part of the runs, and every run's rows are on one shard.
      const perShard = await localCounts(started.servers, 'sharded');
      for (const [runs, records, requestRuns] of perShard) {
        assert.ok(runs >= 20, `each shard holds runs: ${JSON.stringify(perShard)}`);
        assert.equal(records, runs);
        assert.equal(requestRuns, runs);
      }
      assert.equal(perShard[0][0] + perShard[1][0], items.length);
      // The value summary: a local table and view on each shard, read through its Distributed table (the runs came in
      // today, which is read from run_records: the report is asked as if tomorrow).
      const tomorrow = Date.now() + 86_400_000;
      const shards = await bothReports(sqlitePath, spec, {}, 'shards', { now: tomorrow });
      for (const c of shards.clickhouse.cells) assert.ok(c.summary > 0 && c.raw === 0, JSON.stringify(shards.clickhouse.cells));
      assertSame(shards, ['generatedAt', 'received']);
      const today = await bothReports(sqlitePath, spec, {}, 'shards-today');
      assert.deepEqual(today.clickhouse.cells, [], 'no day before today: the summary is not read');
      assertSame(today, ['generatedAt', 'received']);
      // The networks the collectors looked up from X-Forwarded-For, pooled over both shards alike.
      const byNetwork = await bothReports(sqlitePath, spec, { by: 'network', minGroupRuns: 30 }, 'shards-network');
      assert.deepEqual(byNetwork.clickhouse.json.groups.map((g) => g.name),
        ['overall', 'AS13335 Cloudflare, Inc.', 'AS15169 Google LLC', 'other']);
      assertSame(byNetwork, ['generatedAt', 'received']);
      // The same URL without the cluster is refused by name.
      await assert.rejects(openClickHouseStore(spec.replace(`?cluster=${cluster}`, ''), core, { readOnly: true }),
        /made on cluster h3probe_two_shards; the URL asks for one on one server, without a cluster/);
      await assert.rejects(openClickHouseStore(spec.replace(cluster, 'nosuch'), core, { log: path.join(tmp, 'nosuch.ndjson') }),
        /the server has no cluster nosuch in its remote_servers \(it has: .*h3probe_two_shards/);
    } finally {
      await setup.close();
    }
  });

  test('1 shard × 2 replicas: with one replica stopped the collector keeps shipping; back, either replica reports as SQLite does', { timeout: 300_000 }, async () => {
    const cluster = 'h3probe_two_replicas';
    const setup = await clusterAndCollectors(cluster, [[`test-replica-a-${process.pid}`, `test-replica-b-${process.pid}`]], 'replicated',
      'replicas', { flushMs: 200 });
    const { started, specOf, chStore, sqlitePath, collectors } = setup;
    const [a] = started.servers;
    try {
      const items = [...syntheticBeacons({ runs: 150, seed: 33, days: 2 })];
      const [first, during, after] = [items.slice(0, 50), items.slice(50, 110), items.slice(110)];
      await postToAll(collectors, first);
      await chStore.flushed();
      // Replica B stops (as a crash) while beacons keep coming: each is acknowledged and shipped to replica A.
      await started.servers[1].kill();
      await postToAll(collectors, during, 50);
      await chStore.flushed();
      assert.equal(chStore.state().failures, 0, `no batch failed: ${chStore.state().lastError}`);
      assert.equal((await localCounts([a], 'replicated'))[0][0], first.length + during.length, 'replica A holds every run so far');
      const b = await started.restart(started.servers[1]);
      await postToAll(collectors, after, 110);
      await chStore.flushed();
      assert.equal(chStore.state().failures, 0, `no batch failed: ${chStore.state().lastError}`);
      // Replica B catches up from its shard's log in ZooKeeper (once its old session has expired): then both hold every
      // row once.
      await started.caughtUp(b, 'replicated');
      const counts = await localCounts([a, b], 'replicated');
      assert.deepEqual(counts[1], counts[0], 'replica B holds what replica A holds');
      const sqliteRequests = items.reduce((n, it) => n + it.beacon.samples.length, 0);
      assert.deepEqual(counts[0], [items.length, items.length, items.length, sqliteRequests]);
      const tomorrow = Date.now() + 3 * 86_400_000;
      for (const [name, server] of [['a', a], ['b', b]]) {
        const both = await bothReports(sqlitePath, specOf(server), {}, `replica-${name}`, { now: tomorrow });
        for (const c of both.clickhouse.cells) assert.ok(c.summary > 0 && c.raw === 0, `replica ${name}: ${JSON.stringify(both.clickhouse.cells)}`);
        assertSame(both, ['generatedAt', 'received']);
      }
    } finally {
      await setup.close();
    }
  });
});
