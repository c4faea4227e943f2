// Unit tests of the local stack's storage (real SQLite in a temp dir) and collector (real HTTP on loopback).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore, STORE_VERSION } from '../../server/store.mjs';
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
    order: 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '', samples,
    summary: { control: { n: 1, min: 10, median: 10, max: 10 }, treatment: { n: 1, min: 10, median: 10, max: 10 }, diff_median_ms: 0 } };
}

/** The rows the collector stores for a beacon object, as the C++ decoder returns them. */
function decoded(b) {
  const d = core.decodeBeacon(JSON.stringify(b));
  assert.ok(d.ok, d.error);
  return d;
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

  test('a file of another layout (a column the core gained since) is refused with what to do, and left as it was', () => {
    const file = path.join(tmp, `cols${dbCount++}.sqlite`);
    const first = openStore(file, core);
    first.insertBeacon(decoded(beacon('before')), { receivedAt: '2024-01-01T00:00:00.000Z', region: 'Asia', country: 'JP' });
    first.close();
    // As a store of the same version written by an h3probe whose core had no browser columns.
    const db = new Database(file);
    const layout = JSON.parse(db.prepare('SELECT layout FROM store_layout').pluck().get());
    layout.tables = layout.tables.replace(/\n  browser TEXT,\n  browser_major REAL,/, '\n');
    db.exec('DROP VIEW requests; ALTER TABLE runs DROP COLUMN browser; ALTER TABLE runs DROP COLUMN browser_major;');
    db.prepare('UPDATE store_layout SET layout = ?').run(JSON.stringify(layout));
    db.close();
    const refusal = new RegExp(`store of version ${STORE_VERSION} whose layout .* is not this h3probe's: export its runs with the h3probe that wrote it`);
    assert.throws(() => openStore(file, core), refusal);
    assert.throws(() => openStore(file, core, { readOnly: true }), refusal);
    const again = new Database(file);
    assert.ok(!again.prepare('PRAGMA table_info(runs)').all().some((c) => c.name === 'browser'), 'nothing added');
    again.close();
  });

  test('a file of another store version is refused with the reason, and left as it was', () => {
    const file = path.join(tmp, `v3-${dbCount++}.sqlite`);
    const db = new Database(file);
    db.exec('CREATE TABLE requests (run_id TEXT); PRAGMA user_version = 3;');
    db.close();
    assert.throws(() => openStore(file, core), new RegExp(`store of version 3; this h3probe reads version ${STORE_VERSION} only`));
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 3);
    assert.equal(again.prepare("SELECT type FROM sqlite_master WHERE name = 'requests'").pluck().get(), 'table');
    again.close();
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

  test('a mixed database (regions, days, failures, fallbacks, both orders): the view gives each request row the decoder gave, and export nests them', async () => {
    const { syntheticBeacons } = await import('../../synthetic/syntheticBeacons.mjs');
    const file = path.join(tmp, `mixed${dbCount++}.sqlite`);
    const all = [...syntheticBeacons({ runs: 400, seed: 5, days: 2 })];
    const store = openStore(file, core);
    const expected = [];
    for (const { beacon: b, meta } of all) {
      const d = decoded(b);
      expected.push(...d.requests.map((r) => ({ ...r })));
      store.insertBeacon(d, meta);
    }
    const key = (r) => `${r.run_id} ${r.phase} ${String(r.idx).padStart(3, '0')}`;
    expected.sort((x, y) => key(x).localeCompare(key(y)));
    const stored = store.db.prepare('SELECT * FROM requests').all().map((r) => ({ ...r })).sort((x, y) => key(x).localeCompare(key(y)));
    assert.equal(stored.length, all.reduce((n, { beacon: b }) => n + b.samples.length, 0));
    assert.ok(new Set(expected.map((r) => r.request_class)).size >= 4, 'the data holds several classes');
    assert.deepEqual(stored, expected);
    let text = '';
    const sink = new Writable({ write(chunk, _enc, cb) { text += chunk; cb(); } });
    assert.equal(await store.exportNdjson(sink), 400);
    store.close();
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.flatMap((l) => l.requests).sort((x, y) => key(x).localeCompare(key(y))), expected);
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
    const dupBefore = collector.metrics.duplicate;
    assert.equal((await post(body)).status, 204);
    assert.equal(collector.metrics.duplicate, dupBefore + 1);
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
