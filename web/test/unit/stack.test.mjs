// Unit tests of the local stack's storage (real SQLite in a temp dir) and collector (real HTTP on loopback).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../server/store.mjs';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';

// The real decoder: the C++ core compiled to WASM (npm test builds it first).
const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-unit-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let dbCount = 0;
const freshStore = () => openStore(path.join(tmp, `db${dbCount++}.sqlite`), core);

function sample(phase, idx, origin, protocol, extra = {}) {
  return { phase, idx, origin, result: 'ok', http_status: 204, protocol, reused: true, network_ms: 10 + idx, queue_ms: 0.1,
    dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: 1, response_ms: 0.2, start_ms: 100, fetch_ms: 11, ...extra };
}

function beacon(runId, samples = [sample('control', 0, 'h2', 'h2'), sample('treatment', 0, 'h3', 'h3')]) {
  return { schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${runId}`, config_id: 'default', module_version: '0.1.0',
    order: 'h2-first', outcome: 'complete', error: '', samples,
    summary: { control: { n: 1, min: 10, median: 10, max: 10 }, treatment: { n: 1, min: 10, median: 10, max: 10 }, diff_median_ms: 0 } };
}

/** The rows the collector stores for a beacon object, as the C++ decoder returns them. */
function decoded(b) {
  const d = core.decodeBeacon(JSON.stringify(b));
  assert.ok(d.ok, d.error);
  return d;
}

// A store file turned back into version 3's layout: every request as a row of the table requests, none in run rows.
function toVersion3(db) {
  db.exec(`INSERT INTO request_rows SELECT * FROM requests WHERE run_id IN (SELECT run_id FROM runs WHERE request_list IS NOT NULL);
    DROP VIEW requests; ALTER TABLE request_rows RENAME TO requests; ALTER TABLE runs DROP COLUMN request_list;
    PRAGMA user_version = 3;`);
}

describe('store', () => {
  test('opens the database in WAL mode with synchronous NORMAL', () => {
    const store = freshStore();
    assert.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(store.db.pragma('synchronous', { simple: true }), 1);
    store.close();
  });

  test('stores a run and its requests, each with the class the core gave it, and no field the core does not know', () => {
    const store = freshStore();
    const b = { ...beacon('r1', [sample('control', 0, 'h2', 'h2'), sample('treatment', 0, 'h3', 'h2')]), context: { ua: 'x' },
      extra: 'from a newer client' };
    assert.deepEqual(store.insertBeacon(decoded(b), { receivedAt: '2024-01-01T00:00:00.000Z', region: 'local', country: null }),
      { duplicate: false });
    const [run] = store.runsSince('2024-01-01');
    assert.equal(run.run_order, 'h2-first');
    assert.equal(run.region, 'local');
    const columns = store.db.prepare('PRAGMA table_info(runs)').all().map((c) => c.name);
    assert.ok(!columns.some((c) => /beacon|summary|extra|ua/.test(c)), columns.join(', '));
    const rows = store.requestsFor('r1');
    assert.deepEqual(rows.map((r) => [r.phase, r.request_class]), [['control', 'usable_control'], ['treatment', 'fallback']]);
    assert.equal(rows[0].reused, 1);
    assert.equal(rows[0].network_ms, 10);
    store.close();
  });

  test('keeps the run duration, sample rate and client context in their own columns', () => {
    const store = freshStore();
    store.insertBeacon(decoded({ ...beacon('ctx'), run_ms: 143.5, sample_rate: 0.25,
      context: { effective_type: '3g', visible_throughout: false, save_data: true } }));
    store.insertBeacon(decoded(beacon('bare')));
    const row = (id) => store.db.prepare('SELECT run_ms, sample_rate, effective_type, visible_throughout, save_data FROM runs WHERE run_id = ?').get(id);
    assert.deepEqual({ ...row('ctx') }, { run_ms: 143.5, sample_rate: 0.25, effective_type: '3g', visible_throughout: 0, save_data: 1 });
    // Absent in the beacon: the decoder's defaults (run_ms 0, sample rate 1, no text) and NULL where nothing is known.
    assert.deepEqual({ ...row('bare') }, { run_ms: 0, sample_rate: 1, effective_type: '', visible_throughout: null, save_data: null });
    store.close();
  });

  test('rebuilds a database of the first store version through the decoder, keeping when and where each run came from', () => {
    const file = path.join(tmp, `old${dbCount++}.sqlite`);
    const old = new Database(file);
    old.exec(`CREATE TABLE runs (run_id TEXT PRIMARY KEY, page_load_id TEXT, config_id TEXT, module_version TEXT,
      run_order TEXT, outcome TEXT, error TEXT, received_at TEXT, region TEXT, country TEXT, summary_json TEXT, beacon_json TEXT);
      CREATE TABLE requests (run_id TEXT, phase TEXT, idx INTEGER, origin TEXT, result TEXT, protocol TEXT, network_ms REAL,
      PRIMARY KEY (run_id, phase, idx));
      CREATE INDEX runs_received_at ON runs (received_at);`);
    const insert = old.prepare('INSERT INTO runs (run_id, outcome, received_at, region, country, beacon_json) VALUES (?, ?, ?, ?, ?, ?)');
    insert.run('old-run', 'complete', '2023-01-02T00:00:00.000Z', 'Asia', 'JP',
      JSON.stringify(beacon('old-run', [sample('control', 0, 'h2', 'h2'), sample('treatment', 0, 'h3', '')])));
    insert.run('no-text', 'complete', '2023-01-03T00:00:00.000Z', 'Asia', 'JP', null);
    old.close();

    const store = openStore(file, core);
    assert.deepEqual(store.migrated, { runs: 1, skipped: 1 });
    const [run] = store.runsSince();
    assert.deepEqual([run.run_id, run.received_at, run.region, run.country], ['old-run', '2023-01-02T00:00:00.000Z', 'Asia', 'JP']);
    assert.deepEqual(store.requestsFor('old-run').map((r) => r.request_class), ['usable_control', 'protocol_unknown']);
    // The run without its beacon text cannot be rebuilt: it stays where it was, not lost.
    assert.equal(store.db.prepare('SELECT count(*) FROM runs_v1').pluck().get(), 2);
    store.insertBeacon(decoded(beacon('new-run')));
    assert.equal(store.countRuns(), 2);
    store.close();
    // Opened again: already rebuilt, nothing to do.
    const again = openStore(file, core);
    assert.equal(again.migrated, null);
    assert.equal(again.countRuns(), 2);
    again.close();
  });

  test('a database written before a column existed gets it, empty in its old rows, and keeps taking beacons', () => {
    const file = path.join(tmp, `cols${dbCount++}.sqlite`);
    const first = openStore(file, core);
    first.insertBeacon(decoded(beacon('before')), { receivedAt: '2024-01-01T00:00:00.000Z', region: 'Asia', country: 'JP' });
    first.close();
    // As the store was before the server's protocol and the browser were recorded (version 2: request rows in a table).
    const db = new Database(file);
    toVersion3(db);
    db.exec('ALTER TABLE requests DROP COLUMN server_protocol; ALTER TABLE runs DROP COLUMN browser; ALTER TABLE runs DROP COLUMN browser_major;');
    db.close();
    const store = openStore(file, core);
    store.insertBeacon(decoded(beacon('after', [sample('control', 0, 'h2', 'h2', { server_protocol: 'HTTP/2.0' })])),
      { region: 'Asia', country: 'JP', browser: 'firefox', browserMajor: 128 });
    const rows = store.db.prepare('SELECT run_id, browser, browser_major FROM runs ORDER BY run_id').all().map((r) => ({ ...r }));
    assert.deepEqual(rows, [{ run_id: 'after', browser: 'firefox', browser_major: 128 }, { run_id: 'before', browser: null, browser_major: null }]);
    assert.equal(store.requestsFor('after')[0].server_protocol, 'HTTP/2.0');
    assert.equal(store.requestsFor('before')[0].server_protocol, null);
    store.close();
  });

  test('ignores a retried beacon with a run_id it already has and says so', () => {
    const store = freshStore();
    store.insertBeacon(decoded(beacon('dup')));
    assert.deepEqual(store.insertBeacon(decoded(beacon('dup', [sample('control', 0, 'h2', 'h2', { network_ms: 999 })]))),
      { duplicate: true });
    assert.equal(store.countRuns(), 1);
    assert.equal(store.requestsFor('dup')[0].network_ms, 10);
    store.close();
  });

  test('keeps nulls for missing timings and reused', () => {
    const store = freshStore();
    store.insertBeacon(decoded(beacon('nulls', [sample('treatment', 0, 'h3', '', { result: 'timing_unavailable', reused: null, network_ms: null })])));
    const [row] = store.requestsFor('nulls');
    assert.equal(row.reused, null);
    assert.equal(row.network_ms, null);
    assert.equal(row.request_class, 'timing_unavailable');
    store.close();
  });

  // Rows that cannot be stored (the decoder never returns such): a record SQLite cannot bind, written after the run row.
  const unstorable = (runId) => {
    const d = decoded(beacon(runId));
    return { run: { ...d.run, arm_counts: {} }, requests: d.requests };
  };

  test('rolls back the whole run when one request cannot be stored', () => {
    const store = freshStore();
    assert.throws(() => store.insertBeacon(unstorable('bad')));
    assert.equal(store.countRuns(), 0);
    assert.equal(store.requestsFor('bad').length, 0);
    store.close();
  });

  test('queued beacons of one event-loop turn commit together, and a bad one is rolled back alone', async () => {
    const store = freshStore();
    const results = await Promise.allSettled([store.queueBeacon(decoded(beacon('q1'))), store.queueBeacon(unstorable('bad')),
      store.queueBeacon(decoded(beacon('q2'))), store.queueBeacon(decoded(beacon('q1')))]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    assert.deepEqual(results[3].value, { duplicate: true });
    assert.deepEqual(store.runsSince().map((r) => r.run_id).sort(), ['q1', 'q2']);
    assert.equal(store.requestsFor('bad').length, 0);
    assert.equal(store.requestsFor('q2').length, 2);
    store.close();
  });

  test('a mixed database (request rows of older runs in a table, newer runs\' in their run row): the same export and report', async () => {
    const { syntheticBeacons } = await import('../../devstack/syntheticBeacons.mjs');
    const { makeReport } = await import('../../report/makeReport.mjs');
    const files = ['new', 'mixed', 'v3'].map((name) => path.join(tmp, `${name}${dbCount++}.sqlite`));
    const all = [...syntheticBeacons({ runs: 400, seed: 5, days: 2 })];
    for (const file of files) {
      const store = openStore(file, core);
      for (const { beacon: b, meta } of all) store.insertBeacon(decoded(b), meta);
      store.close();
    }
    // mixed: the first half of the runs as a version-3 store held them, then reopened (so the view reads both).
    const mixed = new Database(files[1]);
    mixed.exec(`INSERT INTO request_rows SELECT * FROM requests WHERE run_id IN (SELECT run_id FROM runs WHERE rowid <= 200);
      UPDATE runs SET request_list = NULL WHERE rowid <= 200;`);
    mixed.close();
    // v3: a version-3 file as that store wrote it, upgraded when opened.
    const v3 = new Database(files[2]);
    toVersion3(v3);
    assert.equal(v3.prepare("SELECT type FROM sqlite_master WHERE name = 'requests'").pluck().get(), 'table');
    v3.close();
    const outputs = [];
    for (const file of files) {
      const store = openStore(file, core);
      let text = '';
      const sink = new Writable({ write(chunk, _enc, cb) { text += chunk; cb(); } });
      assert.equal(await store.exportNdjson(sink), 400);
      const counts = store.db.prepare('SELECT (SELECT count(*) FROM request_rows) AS rows, (SELECT count(*) FROM requests) AS requests').get();
      store.close();
      const report = await makeReport(core, { dbPath: file, htmlPath: path.join(tmp, `r${dbCount++}.html`) });
      outputs.push({ text, counts, report: report.text, html: fs.readFileSync(path.join(tmp, `r${dbCount - 1}.html`), 'utf8')
        .replace(/Generated \S+/g, '') });
    }
    const requests = all.reduce((n, { beacon: b }) => n + b.samples.length, 0);
    assert.deepEqual(outputs.map((o) => o.counts.requests), [requests, requests, requests]);
    assert.deepEqual(outputs.map((o) => o.counts.rows > 0), [false, true, true], 'the files hold what each case says');
    assert.match(outputs[0].text, /"request_class":"usable_control"/);
    for (const o of outputs.slice(1)) {
      assert.equal(o.text, outputs[0].text);
      assert.equal(o.report, outputs[0].report);
      assert.equal(o.html, outputs[0].html);
    }
  });

  test('exports one NDJSON line per run with its requests nested, without the report records', async () => {
    const store = freshStore();
    for (let i = 0; i < 1203; i++) store.insertBeacon(decoded(beacon(`run-${String(i).padStart(5, '0')}`)));
    let text = '';
    const sink = new Writable({ write(chunk, _enc, cb) { text += chunk; cb(); } });
    assert.equal(await store.exportNdjson(sink), 1203);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, 1203);
    assert.equal(new Set(lines.map((l) => l.run_id)).size, 1203);
    assert.ok(lines.every((l) => l.requests.length === 2 && l.requests.every((r) => r.run_id === l.run_id)));
    assert.equal(lines[0].arm_counts, undefined);
    assert.deepEqual(Object.keys(lines[0]).filter((k) => k.startsWith('arm_')), []);
    assert.equal(lines[0].requests[0].request_class, 'usable_control');
    store.close();
  });
});

describe('collector', () => {
  let store;
  let collector;
  let url;
  const post = (body, init = {}) => fetch(url, { method: 'POST', body, ...init });

  before(async () => {
    store = freshStore();
    collector = await startCollector({ port: 0, store, core });
    url = `http://127.0.0.1:${collector.port}/beacon`;
  });
  after(async () => {
    await collector.close();
    store.close();
  });

  test('answers 204 to a valid beacon, stores it with region local and no IP', async () => {
    const res = await post(JSON.stringify(beacon('c-valid')));
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const run = store.runsSince().find((r) => r.run_id === 'c-valid');
    assert.equal(run.region, 'local');
    assert.ok(!JSON.stringify(run).includes('127.0.0.1'));
  });

  test('stores country and region from a trusted proxy (loopback) and never the forwarded address', async () => {
    const res = await post(JSON.stringify(beacon('c-forwarded')), { headers: { 'X-Forwarded-For': '202.12.27.33' } });
    assert.equal(res.status, 204);
    const run = store.runsSince().find((r) => r.run_id === 'c-forwarded');
    assert.equal(run.country, 'JP');
    assert.equal(run.region, 'Asia');
    assert.ok(!JSON.stringify(run).includes('202.12.27.33'));
    await post(JSON.stringify(beacon('c-header')), { headers: { 'CF-IPCountry': 'BR', 'X-Forwarded-For': '202.12.27.33' } });
    const viaHeader = store.runsSince().find((r) => r.run_id === 'c-header');
    assert.deepEqual([viaHeader.country, viaHeader.region], ['BR', 'South America']);
  });

  test('answers 400 with the decoder reason to an invalid beacon and stores nothing', async () => {
    const before = store.countRuns();
    const res = await post('{"schema":"other"}');
    assert.equal(res.status, 400);
    assert.match(await res.text(), /schema/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(store.countRuns(), before);
  });

  test('stores far less than a 150 KB unknown field adds to a beacon', async () => {
    const bytes = () => store.db.pragma('page_count', { simple: true }) * store.db.pragma('page_size', { simple: true });
    const body = JSON.stringify({ ...beacon('c-padded'), pad: 'x'.repeat(150 * 1024) });
    const before = bytes();
    assert.equal((await post(body)).status, 204);
    assert.ok(bytes() - before < 16 * 1024, `the store grew by ${bytes() - before} bytes`);
  });

  test('answers 400, not 500, to a valid beacon with an unknown field nested 6,000 deep', async () => {
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const body = JSON.stringify(beacon('c-deep')).replace(/}$/, `,"nested":${deep}}`);
    const res = await post(body);
    assert.equal(res.status, 400);
    assert.match(await res.text(), /nests deeper than/);
    assert.equal(store.runsSince().some((r) => r.run_id === 'c-deep'), false);
  });

  test('answers 413 to a body over the core limit', async () => {
    assert.equal(core.schema().limits.maxBeaconBytes, 256 * 1024);
    const big = JSON.stringify({ ...beacon('c-big'), pad: 'x'.repeat(300 * 1024) });
    const res = await post(big);
    assert.equal(res.status, 413);
    assert.equal(store.runsSince().some((r) => r.run_id === 'c-big'), false);
  });

  test('answers a CORS preflight with 204 and permissive headers', async () => {
    const res = await fetch(url, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods'), /POST/);
  });

  test('answers 204 to a retried beacon and counts it as duplicate', async () => {
    const body = JSON.stringify(beacon('c-retry'));
    await post(body);
    const dupBefore = collector.counts.duplicate;
    assert.equal((await post(body)).status, 204);
    assert.equal(collector.counts.duplicate, dupBefore + 1);
  });

  test('loses nothing when 200 beacons arrive at once', async () => {
    const start = store.countRuns();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => post(JSON.stringify(beacon(`c-many-${i}`))).then((r) => r.status)),
    );
    assert.ok(statuses.every((s) => s === 204));
    assert.equal(await collector.waitForRuns(start + 200, 5000), start + 200);
    assert.equal(store.runsSince().filter((r) => r.run_id.startsWith('c-many-')).length, 200);
  });

  test('waitForRuns rejects when the runs do not come in time', async () => {
    await assert.rejects(collector.waitForRuns(store.countRuns() + 1, 50), /waited 50 ms/);
  });
});
