// The ClickHouse store with a real clickhouse-server (Debian's 18.16, started here with its data in a temporary folder
// under .h3probe/clickhouse): tables made from the core's schema, the collector's beacons stored once each, ClickHouse
// killed in the middle of a load and restarted (every acknowledged beacon there exactly once, from the log), the
// `h3probe collector --store clickhouse://…` and `h3probe export --store …` commands, and the same NDJSON export from
// ClickHouse as from SQLite. No assertion depends on timing: waits are for events, bounded by the test timeouts.
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { COLLECTOR_COLUMNS, openStore } from '../../server/store.mjs';
import { clickhouseClient, parseClickHouseUrl } from '../../server/clickhouseConnection.mjs';
import { clickhouseTables } from '../../server/clickhouseSchema.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { parseStoreSpec } from '../../server/storeSpec.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { clickhouseInstalled, planClickHouse, startClickHouse } from '../../launch/clickhouse.mjs';
import { clickhouseLane, needsServer, onChdb } from '../chdb/lane.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const core = await loadH3probeNode();
const schema = core.schema();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-ch-'));
let server;
let plan;
// The chdb lane's engine (web/test/chdb/lane.mjs); the other lane starts its server here, to kill and restart it.
const chdb = clickhouseLane('h3probe-ch-chdb-');

before(async () => {
  if (onChdb) {
    server = await chdb.fresh('store');
    return;
  }
  assert.ok(clickhouseInstalled(), 'clickhouse-server is not installed: npm run deps');
  plan = await planClickHouse(`test-store-${process.pid}`);
  server = await startClickHouse(plan, { fresh: true });
});
after(async () => {
  await server?.kill();
  if (plan) fs.rmSync(plan.dir, { recursive: true, force: true });
  await chdb.cleanup();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const url = (db) => `clickhouse://127.0.0.1:${server.httpPort}/${db}`;
const beacons = (runs, seed) => [...syntheticBeacons({ runs, seed, days: 2 })]
  .map(({ beacon, meta }) => ({ text: JSON.stringify(beacon), meta, runId: beacon.run_id }));

function post(port, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/beacon', agent: false,
      headers: { 'Content-Type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('store spec', () => {
  test('sqlite and clickhouse specs parse; wrong ones say what is wanted', () => {
    assert.deepEqual(parseStoreSpec('sqlite:/tmp/a.sqlite'), { kind: 'sqlite', path: '/tmp/a.sqlite' });
    assert.deepEqual(parseStoreSpec('b.sqlite'), { kind: 'sqlite', path: 'b.sqlite' });
    const ch = parseStoreSpec('clickhouse://db.example:8124/beacons?log=/var/spool/h3.ndjson');
    assert.equal(ch.kind, 'clickhouse');
    assert.equal(ch.url, 'http://db.example:8124');
    assert.equal(ch.database, 'beacons');
    assert.equal(ch.log, '/var/spool/h3.ndjson');
    assert.equal(parseClickHouseUrl('clickhouse://a:1/d?cluster=c').cluster, 'c');
    assert.throws(() => parseClickHouseUrl('clickhouse://a:1/d?cluster=c-1'), /cluster name "c-1": letters, digits and _ only/);
    assert.throws(() => parseStoreSpec('postgres://x/y'), /only sqlite:PATH and clickhouse/);
    assert.throws(() => parseStoreSpec('clickhouse://h:1/bad-name'), /letters, digits and _/);
    assert.throws(() => parseStoreSpec('clickhouse://h:1/d?shards=x'), /unknown ClickHouse URL parameter "shards"/);
  });

  test('an option the store does not know is refused before anything is opened or written', async () => {
    const cwd = fs.readdirSync('.');
    await assert.rejects(openClickHouseStore('clickhouse://127.0.0.1:9/d', core, { spool: '/tmp/x' }), /unknown option spool \(log, /);
    assert.deepEqual(fs.readdirSync('.'), cwd, 'no log file made');
  });

  test('the tables are made from the core schema: every run, request and duration column, a count per arm and class', () => {
    const [runs, requests, records] = clickhouseTables(schema);
    const names = (t) => t[1].map((c) => c.split(' ')[0]);
    assert.deepEqual(names(runs), [...schema.runColumns.map((c) => c.name), ...COLLECTOR_COLUMNS.map((c) => c.name)]);
    assert.deepEqual(names(requests), [...schema.requestColumns.map((c) => c.name), ...schema.durations.map((d) => d.name)]);
    for (const c of schema.requestClasses) {
      assert.ok(names(records).includes(`control_${c.name}`) && names(records).includes(`treatment_${c.name}`), c.name);
    }
    for (const m of schema.metrics) assert.ok(names(records).includes(`${m}_treatment`), m);
  });
});

describe('ClickHouse store', () => {
  test('the engine of this lane: Debian\'s clickhouse-server 18.16, or with H3PROBE_CLICKHOUSE_ENGINE=chdb a current one', async () => {
    const version = (await clickhouseClient(server.admin).query('SELECT version()')).trim();
    if (!onChdb) return assert.match(version, /^18\.16\./);
    // At least 23.9: results that can end in an exception after the 200 header, the versions the lane is for.
    const [major, minor] = version.split('.').map(Number);
    assert.ok(major > 23 || (major === 23 && minor >= 9), `chdb's engine ${version}`);
    assert.equal(server.engine, 'chdb');
  });

  test('tables are made in an empty database; one of another layout, or of none, is refused and left as it was', async () => {
    const store = await openClickHouseStore(url('grow'), core, { log: path.join(tmp, 'grow.ndjson') });
    const columns = async () => (await store.client.json("SELECT name FROM system.columns WHERE database = 'grow' AND table = 'requests'")).map((r) => r.name);
    assert.ok((await columns()).includes('fetch_ms'));
    // As the tables of an h3probe whose core had one duration less.
    const layout = JSON.parse((await store.client.json('SELECT layout FROM store_layout'))[0].layout);
    layout.tables[1][1] = layout.tables[1][1].filter((c) => !c.startsWith('fetch_ms'));
    await store.client.query('ALTER TABLE requests DROP COLUMN fetch_ms');
    await store.client.query('TRUNCATE TABLE store_layout');
    await store.client.query(`INSERT INTO store_layout FORMAT JSONEachRow\n${JSON.stringify({ layout: JSON.stringify(layout) })}`);
    await store.close();
    const open = () => openClickHouseStore(url('grow'), core, { log: path.join(tmp, 'grow.ndjson') });
    await assert.rejects(open(), /grow is an h3probe store of version 3 whose layout is not this h3probe's .*: export its runs with the h3probe that wrote it/);
    await assert.rejects(openClickHouseStore(url('grow'), core, { readOnly: true }), /whose layout is not this h3probe's/);
    assert.ok(!(await columns()).includes('fetch_ms'), 'nothing added');
    // Tables without a layout: a store of before it was kept.
    await store.client.query('DROP TABLE store_layout');
    await assert.rejects(open(), /holds tables .* but no h3probe store layout: a store of version 1 or none; this h3probe reads version 3 only/);
  });

  test('the report and the export change nothing in the store they read: no database, table, column or row made, no backfill', { timeout: 120_000 }, async () => {
    const st = await openClickHouseStore(url('readonly'), core, { log: path.join(tmp, 'readonly.ndjson') });
    await Promise.all(beacons(20, 4).map((b) => st.queueBeacon(core.decodeBeacon(b.text), b.meta)));
    await st.close();
    const q = st.client;
    // What a write would change: the tables and their columns, the rows (run_values: its summed count, which merges keep).
    const snapshot = async () => {
      const tables = await q.json("SELECT name, engine FROM system.tables WHERE database = 'readonly' ORDER BY name");
      const has = (name) => tables.some((t) => t.name === name);
      return JSON.stringify([tables,
        await q.json("SELECT table, name, type FROM system.columns WHERE database = 'readonly' ORDER BY table, name"),
        ...await Promise.all(['runs', 'requests', 'run_records'].map((t) => q.json(`SELECT count() AS n FROM readonly.${t}`))),
        has('run_values') ? await q.json('SELECT sum(cnt) AS n FROM readonly.run_values') : null,
      ]);
    };
    const exportOf = (db) => spawnSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'export', '--store', url(db)], { encoding: 'utf8' });
    const before = await snapshot();
    const { report } = await makeReport(core, { store: url('readonly'), htmlPath: path.join(tmp, 'readonly.html') });
    assert.equal(report.storedRuns, 20);
    assert.equal(exportOf('readonly').stdout.trim().split('\n').length, 20);
    assert.equal(await snapshot(), before);

    // A store an older collector made (another layout): refused by both, with what to do, and left as it was.
    const layout = JSON.parse((await q.json('SELECT layout FROM readonly.store_layout'))[0].layout);
    layout.version -= 1;
    await q.query('TRUNCATE TABLE readonly.store_layout');
    await q.query(`INSERT INTO readonly.store_layout FORMAT JSONEachRow\n${JSON.stringify({ layout: JSON.stringify(layout) })}`);
    const older = await snapshot();
    const refusal = /readonly is an h3probe store of version \d+ whose layout is not this h3probe's .*: export its runs with the h3probe that wrote it/;
    await assert.rejects(makeReport(core, { store: url('readonly') }), refusal);
    assert.match(exportOf('readonly').stderr, refusal);
    assert.equal(await snapshot(), older);

    // No database at all: an error, and still no database.
    await assert.rejects(makeReport(core, { store: url('nothere') }), /has no h3probe tables in database nothere/);
    const failed = exportOf('nothere');
    assert.equal(failed.status, 2);
    assert.match(failed.stderr, /has no h3probe tables in database nothere/);
    assert.deepEqual(await q.json("SELECT name FROM system.databases WHERE name = 'nothere'"), []);
  });

  test('ClickHouse killed mid-load: the collector keeps answering 204, the log grows, then drains; every acknowledged beacon once', { timeout: 120_000, ...needsServer }, async () => {
    const logFile = path.join(tmp, 'load.ndjson');
    const store = await openClickHouseStore(url('load'), core, { log: logFile, retryMs: 100, flushMs: 200 });
    const collector = await startCollector({ port: 0, store, core, rateLimit: 0 });
    const all = beacons(240, 11);
    const acked = new Set();
    const statuses = new Map();
    let next = 0;
    let killed = false;
    let restarted = false;
    async function worker() {
      while (next < all.length) {
        const b = all[next++];
        const status = await post(collector.port, b.text);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 204) acked.add(b.runId);
        if (acked.size >= 60 && !killed) {
          killed = true;
          await server.kill();
        }
        if (acked.size >= 160 && !restarted) {
          restarted = true;
          assert.ok(store.state().bytes > 0, 'beacons wait in the log while ClickHouse is down');
          while (store.state().failures === 0) await new Promise((r) => setTimeout(r, 50));
          server = await startClickHouse(plan);
        }
      }
    }
    try {
      await Promise.all(Array.from({ length: 16 }, worker));
      // A client retry of an acknowledged beacon: stored once.
      assert.equal(await post(collector.port, all[0].text), 204);
      await store.flushed(60_000);
      assert.deepEqual([...statuses.keys()], [204], `every beacon answered 204: ${JSON.stringify([...statuses])}`);
      assert.equal(acked.size, all.length);
      const state = store.state();
      assert.ok(state.failures > 0 && state.inserted === all.length && state.bytes === 0, JSON.stringify(state));
      assert.ok(state.batches < all.length / 4, `beacons went in batches: ${JSON.stringify(state)}`);
      const perRun = async (table) => new Map((await store.client.json(`SELECT run_id, count() AS n FROM ${table} GROUP BY run_id`))
        .map((r) => [r.run_id, r.n]));
      const runs = await perRun('runs');
      const records = await perRun('run_records');
      const requests = await perRun('requests');
      assert.equal(runs.size, acked.size);
      for (const id of acked) {
        assert.equal(runs.get(id), 1, `run ${id} once`);
        assert.equal(records.get(id), 1, `record ${id} once`);
        assert.equal(requests.get(id), JSON.parse(all.find((b) => b.runId === id).text).samples.length, `requests of ${id}`);
      }
      assert.equal(store.countRuns(), acked.size);
    } finally {
      await collector.close();
      await store.close();
    }
  });

  test('ClickHouse not there when the collector starts: beacons are acknowledged from the log and go in once it is', { timeout: 120_000, ...needsServer }, async () => {
    const late = await planClickHouse(`test-late-${process.pid}`);
    const store = await openClickHouseStore(`clickhouse://127.0.0.1:${late.httpPort}/late`, core,
      { log: path.join(tmp, 'late'), retryMs: 100, flushMs: 100 });
    let lateServer;
    try {
      const some = beacons(25, 21);
      const answers = await Promise.all(some.map((b) => store.queueBeacon(core.decodeBeacon(b.text), b.meta)));
      assert.deepEqual(answers.map((a) => a.duplicate), some.map(() => false));
      while (store.state().failures === 0) await new Promise((r) => setTimeout(r, 50));
      assert.match(store.checkWritable().clickhouse, /^failing: /);
      assert.equal(store.checkWritable().ok, true, 'the log still takes beacons');
      lateServer = await startClickHouse(late, { fresh: true, keepHttpPort: true });
      await store.flushed(60_000);
      const [row] = await store.client.json('SELECT count() AS n, uniqExact(run_id) AS ids FROM runs');
      assert.deepEqual(row, { n: 25, ids: 25 });
      assert.equal(store.countRuns(), 25);
    } finally {
      await store.close();
      await lateServer?.kill();
      fs.rmSync(late.dir, { recursive: true, force: true });
    }
  });

  test('a replay after an insert whose answer was lost inserts nothing twice', async () => {
    const logFile = path.join(tmp, 'lost.ndjson');
    const store = await openClickHouseStore(url('lost'), core, { log: logFile });
    const some = beacons(30, 5);
    await Promise.all(some.slice(0, 20).map((b) => store.queueBeacon(core.decodeBeacon(b.text), b.meta)));
    await store.close();
    // The same 20 beacons, plus 10 new ones, left in the log as if their insert had been taken by ClickHouse but its
    // answer lost: the store cannot tell, and must leave out what a table already holds.
    const { clickhouseRows } = await import('../../server/clickhouseRows.mjs');
    const { logLine } = await import('../../server/clickhouseShipping.mjs');
    const { openBeaconLog } = await import('../../server/beaconLog.mjs');
    const log = openBeaconLog(logFile);
    log.appendNow(some.map((b) => logLine(clickhouseRows(schema, core.decodeBeacon(b.text), b.meta))));
    log.close();
    const reopened = await openClickHouseStore(url('lost'), core, { log: logFile });
    await reopened.flushed(30_000);
    const [row] = await reopened.client.json('SELECT count() AS runs, uniqExact(run_id) AS ids FROM runs');
    assert.deepEqual(row, { runs: 30, ids: 30 });
    const [req] = await reopened.client.json('SELECT count() AS n FROM requests');
    assert.equal(req.n, some.reduce((s, b) => s + JSON.parse(b.text).samples.length, 0));
    assert.equal(reopened.state().duplicates, 20);
    await reopened.close();
  });

  test('h3probe collector --store clickhouse://… stores beacons; export gives the same NDJSON as from SQLite', { timeout: 60_000 }, async () => {
    const logFile = path.join(tmp, 'cli.ndjson');
    const spec = `${url('cli')}?log=${encodeURIComponent(logFile)}`;
    const child = spawn(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'collector', '--store', spec, '--port', '0',
      '--rate-limit', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const listening = await new Promise((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += c;
        const line = out.split('\n').find((l) => l.includes('"listening"'));
        if (line) resolve(JSON.parse(line));
      });
      child.once('exit', (code) => reject(new Error(`collector exited ${code}: ${out}`)));
    });
    assert.equal(listening.store, spec);
    const some = beacons(40, 9);
    assert.deepEqual(new Set(await Promise.all(some.map((b) => post(listening.port, b.text)))), new Set([204]));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);

    // The same beacons through the SQLite store (same received times), then both exports.
    const sqlite = path.join(tmp, 'same.sqlite');
    const st = openStore(sqlite, core);
    const ch = await openClickHouseStore(url('same'), core, { log: path.join(tmp, 'same.ndjson') });
    for (const b of some) st.insertBeacon(core.decodeBeacon(b.text), b.meta);
    await Promise.all(some.map((b) => ch.queueBeacon(core.decodeBeacon(b.text), b.meta)));
    st.close();
    await ch.close();
    const exportOf = (args) => execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'export', ...args], { encoding: 'utf8' });
    const fromSqlite = exportOf(['--store', `sqlite:${sqlite}`]);
    assert.equal(exportOf(['--store', url('same')]), fromSqlite);
    assert.equal(fromSqlite.trim().split('\n').length, 40);
    const cliRuns = exportOf(['--store', url('cli')]).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(cliRuns.map((r) => r.run_id), some.map((b) => b.runId).sort());
  });
});
