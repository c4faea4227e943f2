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
import { createBeaconValidator } from '../../server/h3probeNode.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-unit-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let dbCount = 0;
const freshStore = () => openStore(path.join(tmp, `db${dbCount++}.sqlite`));

function sample(phase, idx, origin, protocol, extra = {}) {
  return { phase, idx, origin, result: 'ok', http_status: 204, protocol, reused: true, network_ms: 10 + idx, queue_ms: 0.1,
    dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: 1, response_ms: 0.2, start_ms: 100, fetch_ms: 11, ...extra };
}

function beacon(runId, samples = [sample('control', 0, 'h2', 'h2'), sample('treatment', 0, 'h3', 'h3')]) {
  return { schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${runId}`, config_id: 'default', module_version: '0.1.0',
    order: 'h2-first', outcome: 'complete', error: '', samples,
    summary: { control: { n: 1, min: 10, median: 10, max: 10 }, treatment: { n: 1, min: 10, median: 10, max: 10 }, diff_median_ms: 0 } };
}

describe('store', () => {
  test('opens the database in WAL mode with synchronous NORMAL', () => {
    const store = freshStore();
    assert.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(store.db.pragma('synchronous', { simple: true }), 1);
    store.close();
  });

  test('stores a run with its samples, summary and whole beacon', () => {
    const store = freshStore();
    const b = { ...beacon('r1'), context: { ua: 'x' } };
    assert.deepEqual(store.insertBeacon(b, { receivedAt: '2024-01-01T00:00:00.000Z', region: 'local', country: null }), { duplicate: false });
    const [run] = store.runsSince('2024-01-01');
    assert.equal(run.run_order, 'h2-first');
    assert.equal(run.region, 'local');
    assert.deepEqual(JSON.parse(run.summary_json), b.summary);
    assert.deepEqual(JSON.parse(run.beacon_json).context, { ua: 'x' });
    const rows = store.requestsFor('r1');
    assert.equal(rows.length, 2);
    assert.equal(rows[0].reused, 1);
    assert.equal(rows[0].network_ms, 10);
    store.close();
  });

  test('keeps the run duration, sample rate and client context in their own columns', () => {
    const store = freshStore();
    store.insertBeacon({ ...beacon('ctx'), run_ms: 143.5, sample_rate: 0.25,
      context: { effective_type: '3g', visible_throughout: false } });
    store.insertBeacon(beacon('bare'));
    const row = (id) => store.db.prepare('SELECT run_ms, sample_rate, effective_type, visible_throughout FROM runs WHERE run_id = ?').get(id);
    assert.deepEqual({ ...row('ctx') }, { run_ms: 143.5, sample_rate: 0.25, effective_type: '3g', visible_throughout: 0 });
    assert.deepEqual({ ...row('bare') }, { run_ms: null, sample_rate: null, effective_type: null, visible_throughout: null });
    store.close();
  });

  test('opens a database written before the context columns existed, keeping its runs', () => {
    const file = path.join(tmp, `old${dbCount++}.sqlite`);
    const old = new Database(file);
    old.exec(`CREATE TABLE runs (run_id TEXT PRIMARY KEY, page_load_id TEXT, config_id TEXT, module_version TEXT,
      run_order TEXT, outcome TEXT, error TEXT, received_at TEXT, region TEXT, country TEXT, summary_json TEXT, beacon_json TEXT);
      INSERT INTO runs (run_id, outcome) VALUES ('old-run', 'complete');`);
    old.close();
    const store = openStore(file);
    store.insertBeacon({ ...beacon('new-run'), sample_rate: 0.5 });
    assert.deepEqual(store.db.prepare('SELECT run_id, sample_rate FROM runs ORDER BY run_id').all().map((r) => ({ ...r })),
      [{ run_id: 'new-run', sample_rate: 0.5 }, { run_id: 'old-run', sample_rate: null }]);
    store.close();
  });

  test('ignores a retried beacon with a run_id it already has and says so', () => {
    const store = freshStore();
    store.insertBeacon(beacon('dup'));
    assert.deepEqual(store.insertBeacon(beacon('dup', [sample('control', 0, 'h2', 'h2', { network_ms: 999 })])), { duplicate: true });
    assert.equal(store.countRuns(), 1);
    assert.equal(store.requestsFor('dup')[0].network_ms, 10);
    store.close();
  });

  test('keeps nulls for missing timings and reused', () => {
    const store = freshStore();
    store.insertBeacon(beacon('nulls', [sample('treatment', 0, 'h3', '', { result: 'timing_unavailable', reused: null, network_ms: null })]));
    const [row] = store.requestsFor('nulls');
    assert.equal(row.reused, null);
    assert.equal(row.network_ms, null);
    store.close();
  });

  test('rolls back the whole run when one sample cannot be stored', () => {
    const store = freshStore();
    assert.throws(() => store.insertBeacon(beacon('bad', [sample('control', 0, 'h2', 'h2'), sample('control', 0, 'h2', 'h2')])));
    assert.equal(store.countRuns(), 0);
    assert.equal(store.requestsFor('bad').length, 0);
    store.close();
  });

  test('queued beacons of one event-loop turn commit together, and a bad one is rolled back alone', async () => {
    const store = freshStore();
    const bad = beacon('bad', [sample('control', 0, 'h2', 'h2'), sample('control', 0, 'h2', 'h2')]);
    const results = await Promise.allSettled([store.queueBeacon(beacon('q1')), store.queueBeacon(bad),
      store.queueBeacon(beacon('q2')), store.queueBeacon(beacon('q1'))]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    assert.deepEqual(results[3].value, { duplicate: true });
    assert.deepEqual(store.runsSince().map((r) => r.run_id).sort(), ['q1', 'q2']);
    assert.equal(store.requestsFor('bad').length, 0);
    assert.equal(store.requestsFor('q2').length, 2);
    store.close();
  });

  test('armValues keeps control over h2 and treatment over h3, and drops fallbacks, errors and missing metrics', () => {
    const store = freshStore();
    store.insertBeacon(beacon('arms', [
      sample('prewarm', 0, 'h3', 'h3', { network_ms: 1000 }),
      sample('control', 0, 'h2', 'h2', { network_ms: 20 }),
      sample('control', 1, 'h2', 'h2', { network_ms: 21, result: 'timeout' }),
      sample('control', 2, 'h2', 'http/1.1', { network_ms: 22 }),
      sample('treatment', 0, 'h3', 'h3', { network_ms: 15 }),
      sample('treatment', 1, 'h3', 'h2', { network_ms: 30 }),
      sample('treatment', 2, 'h3', 'h3', { network_ms: null }),
      sample('treatment', 3, 'h3', 'h3', { network_ms: 16, connect_ms: null }),
    ]));
    const arms = store.armValues();
    assert.ok(arms.h2 instanceof Float64Array);
    assert.deepEqual([...arms.h2], [20]);
    assert.deepEqual([...arms.h3].sort(), [15, 16]);
    // treatment 0 and 2 have connect_ms; treatment 3 does not.
    assert.equal(store.armValues('connect_ms').h3.length, 2);
    assert.throws(() => store.armValues('network_ms; DROP TABLE runs'));
    store.close();
  });

  test('exports one NDJSON line per run with its samples nested', async () => {
    const store = freshStore();
    for (let i = 0; i < 1203; i++) store.insertBeacon(beacon(`run-${String(i).padStart(5, '0')}`));
    let text = '';
    const sink = new Writable({ write(chunk, _enc, cb) { text += chunk; cb(); } });
    assert.equal(await store.exportNdjson(sink), 1203);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, 1203);
    assert.equal(new Set(lines.map((l) => l.run_id)).size, 1203);
    assert.ok(lines.every((l) => l.requests.length === 2 && l.requests.every((r) => r.run_id === l.run_id)));
    assert.equal(lines[0].beacon_json, undefined);
    assert.equal(lines[0].summary.diff_median_ms, 0);
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
    // The real validator: the C++ decoder compiled to WASM (npm test builds it first).
    collector = await startCollector({ port: 0, store, validate: await createBeaconValidator() });
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

  test('answers 400 with the validator error to an invalid beacon and stores nothing', async () => {
    const before = store.countRuns();
    const res = await post('{"schema":"other"}');
    assert.equal(res.status, 400);
    assert.match(await res.text(), /schema/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(store.countRuns(), before);
  });

  test('answers 413 to a body over 256 KB', async () => {
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
