// Each run counted once, however many collectors wrote it (issue 52): two `h3probe collector` processes on one
// ClickHouse database, each sent the same 3,000 beacons at the same time (a retry that a load balancer sends to the
// other instance), race their insert-time checks, so some runs go into the tables twice, each copy with its own
// collector's received_at. Then more copies for certain (rows inserted again, as a collector whose check missed them
// would). The report (text, HTML and JSON; its value summary, which the copies doubled, checked against the runs read
// once), the export and the store's run counts equal those of one collector given the beacons once, and of SQLite's.
// Then a store of version 2 (before runs were read once) is refused with the one command that migrates it, which keeps
// every row.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { clickhouseClient, parseClickHouseUrl } from '../../server/clickhouseConnection.mjs';
import { ensureClickHouseTables } from '../../server/clickhouseSchema.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { queryRecorder, runRecordsOnce } from '../../report/clickhouseAggregates.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { httpRequest } from './httpRequest.mjs';
import { assertSameReport } from './sameReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-chtwice-');
const { tmp } = scratch;
const children = [];
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await scratch.cleanup();
});

const RUNS = 3000;
// 300 runs, whose rows each test inserts again.
const some = 'run_id IN (SELECT run_id FROM twice.runs ORDER BY run_id LIMIT 300)';
const CLI = path.join(repoRoot, 'web/bin/h3probe.mjs');

// An `h3probe collector` process on store spec; resolves to { port, stop() (SIGTERM; resolves to its exit code) }.
async function collector(spec) {
  const child = spawn(process.execPath, [CLI, 'collector', '--store', spec, '--port', '0', '--rate-limit', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => { err += c; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { port } = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line));
    });
    exited.then((code) => reject(new Error(`collector exited ${code}: ${out} ${err}`)));
  });
  return { port, stop: async () => { child.kill('SIGTERM'); const code = await exited; assert.equal(code, 0, err); return code; } };
}

const post = async (port, body) => (await httpRequest(port, { method: 'POST', path: '/beacon', headers: { 'Content-Type': 'text/plain' }, body })).status;

// Sends every text to each port, the ports of one text at the same time, `inFlight` texts at once.
async function sendAll(texts, ports, inFlight = 16) {
  let next = 0;
  const codes = [];
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < texts.length) {
      const text = texts[next++];
      codes.push(...await Promise.all(ports.map((p) => post(p, text))));
    }
  }));
  return new Set(codes);
}

describe('two collectors on one ClickHouse database, each given the same beacons at once', () => {
  let server;
  const spec = (db, log) => `clickhouse://127.0.0.1:${server.httpPort}/${db}?log=${path.join(tmp, log)}`;
  const sqlitePath = () => path.join(tmp, 'once.sqlite');
  let admin;
  const texts = [...syntheticBeacons({ runs: RUNS, seed: 77, days: 1 })].map(({ beacon }) => JSON.stringify(beacon));

  before(async () => {
    server = await scratch.fresh('twice');
    admin = clickhouseClient(server.admin ?? server.url);
    const [a, b, once, sqlite] = await Promise.all([collector(spec('twice', 'a-log')), collector(spec('twice', 'b-log')),
      collector(spec('once', 'once-log')), collector(`sqlite:${sqlitePath()}`)]);
    assert.deepEqual(await sendAll(texts, [a.port, b.port]), new Set([204]));
    assert.deepEqual(await sendAll(texts, [once.port, sqlite.port]), new Set([204]));
    for (const c of [a, b, once, sqlite]) await c.stop();
  });

  test('the copies are in the tables; every count, the report and the export read each run once', { timeout: 600_000 }, async (t) => {
    const raw = async (db, sql) => Number((await admin.query(sql.replaceAll('DB', db))).trim());
    const racedRecords = await raw('twice', 'SELECT count() FROM DB.run_records');
    t.diagnostic(`the two collectors' race left ${racedRecords - RUNS} runs twice in run_records`);
    // More copies for certain: 300 runs' rows inserted again, as a third collector whose check missed them would (the
    // value summary's view counts them too).
    // Merges stopped, so that the copies stay unfolded for the reads below (the read with FINAL is then the one made).
    await admin.query('SYSTEM STOP MERGES twice.run_records');
    for (const table of ['runs', 'requests', 'run_records']) await admin.query(`INSERT INTO twice.${table} SELECT * FROM twice.${table} WHERE ${some}`);
    const records = async (db) => runRecordsOnce(queryRecorder(clickhouseClient(server.admin ?? server.url, { database: db }), []));
    assert.equal(await records('twice'), 'run_records FINAL', 'copies: the report reads FINAL');
    assert.equal(await records('once'), 'run_records', 'no copy: the report reads the table as it is');
    // A background merge may fold the copies in run_records at any time; the value summary, filled at each insert,
    // keeps them all.
    const values = async (db) => raw(db, 'SELECT sum(cnt) FROM DB.run_values');
    assert.ok(await values('twice') > await values('once'), 'the value summary counted the copies');
    assert.equal(await raw('once', 'SELECT count() FROM DB.run_records'), RUNS);

    // The store's own counts (the collector's base, and a reader's).
    for (const readOnly of [false, true]) {
      const st = await openClickHouseStore(spec('twice', 'count-log'), core, readOnly ? { readOnly } : { log: path.join(tmp, 'count-log') });
      assert.equal(st.countRuns(), RUNS, `countRuns (${readOnly ? 'read-only' : 'collector'})`);
      await st.close();
    }

    // The reports, with the clock a day on: today's cells are then read from the value summary where it holds them
    // exactly (the single collector's), and from run_records where the copies doubled it.
    const now = Date.now() + 86_400_000;
    const report = async (source, tag) => {
      const r = await makeReport(core, { ...source, now, htmlPath: path.join(tmp, `${tag}.html`), jsonPath: path.join(tmp, `${tag}.json`) });
      return { text: r.text, html: fs.readFileSync(r.htmlPath, 'utf8'), json: JSON.parse(fs.readFileSync(r.jsonPath, 'utf8')), passes: r.passes };
    };
    const twice = await report({ store: spec('twice', 'x') }, 'twice');
    const once = await report({ store: spec('once', 'x') }, 'once');
    const sqlite = await report({ dbPath: sqlitePath() }, 'sqlite');
    assert.match(sqlite.text, new RegExp(`${RUNS.toLocaleString('en-US')} stored runs`));
    // Each collector stamps its own received_at: the text and HTML name days only (all today), the JSON's received
    // range names the times, which differ from store to store.
    assertSameReport({ sqlite: once, clickhouse: twice }, ['generatedAt', 'received'], 'two collectors vs one: ');
    assertSameReport({ sqlite, clickhouse: twice }, ['generatedAt', 'received'], 'two collectors vs SQLite: ');
    const cells = (r) => r.passes.filter((p) => p.name === 'summary-totals').map((p) => p.cells);
    assert.deepEqual(cells(once), [{ summary: 1, raw: 0 }], 'one collector: the summary read');
    assert.deepEqual(cells(twice), [{ summary: 0, raw: 1 }], 'two collectors: the doubled summary not read');

    // The export: every run once.
    const exported = spawnSync(process.execPath, [CLI, 'export', '--store', spec('twice', 'x')], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(exported.status, 0, exported.stderr);
    const ids = exported.stdout.trim().split('\n').map((l) => JSON.parse(l).run_id);
    assert.equal(ids.length, RUNS);
    assert.equal(new Set(ids).size, RUNS);
  });

  test('a store of version 2 holding the copies: refused with the one command that migrates it; migrated, every run once', { timeout: 600_000 }, async () => {
    // As the h3probe of version 2 made it, holding what the two collectors wrote (its value summary filled by its view).
    await ensureClickHouseTables(core.schema(), parseClickHouseUrl(spec('old', 'x')), { version: 2 });
    // Plain MergeTree tables there: the 300 runs' copies stay.
    for (const table of ['runs', 'requests', 'run_records']) {
      await admin.query(`INSERT INTO old.${table} SELECT * FROM twice.${table}`);
      await admin.query(`INSERT INTO old.${table} SELECT * FROM twice.${table} WHERE ${some}`);
    }
    const before = Object.fromEntries(await Promise.all(['runs', 'requests', 'run_records'].map(async (table) =>
      [table, Number((await admin.query(`SELECT count() FROM old.${table}`)).trim())])));
    const cli = (...argv) => spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8' });
    const refused = cli('report', '--store', spec('old', 'x'));
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /is an h3probe store of version 2, .* with the one command h3probe migrate --store/);
    const migrated = cli('migrate', '--store', spec('old', 'x'));
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.match(migrated.stdout, /^migrated clickhouse:/);
    assert.match(cli('migrate', '--store', spec('old', 'x')).stdout, /already of this version: nothing to do/);
    // Every distinct row kept: the copies' keys once each, the request rows of every run.
    const distinct = async (db, table, key) => Number((await admin.query(`SELECT uniqExact(${key}) FROM ${db}.${table}`)).trim());
    assert.equal(await distinct('old', 'run_records', 'run_id'), RUNS);
    assert.equal(await distinct('old', 'requests', 'run_id, phase, idx'), await distinct('once', 'requests', 'run_id, phase, idx'));
    assert.ok(before.run_records >= RUNS + 300, `the old store held copies (${before.run_records} rows)`);
    const tables = (await admin.json("SELECT name FROM system.tables WHERE database = 'old' ORDER BY name")).map((r) => r.name);
    assert.deepEqual(tables, ['requests', 'run_records', 'run_values', 'run_values_view', 'runs', 'store_layout']);
    const reportOf = async (source) => (await makeReport(core, { ...source, jsonPath: path.join(tmp, 'old.json') })).text;
    assert.equal(await reportOf({ store: spec('old', 'x') }), await reportOf({ dbPath: sqlitePath() }));
    // The collector opens it again, and sees every run once.
    const st = await openClickHouseStore(spec('old', 'x'), core, { log: path.join(tmp, 'old-log') });
    assert.equal(st.countRuns(), RUNS);
    await st.close();
  });
});
