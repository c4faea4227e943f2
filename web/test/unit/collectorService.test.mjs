// Unit tests of the collector as a service: a --db in a new folder, the per-network rate limit over HTTP, /healthz,
// /metrics, CORS, the connection cap, header timeouts, and SIGTERM draining with nothing acknowledged lost. Real HTTP
// on loopback, real SQLite, the real WASM decoder.
// No assertion depends on how fast the machine is: waits are for events, with generous test timeouts. The options'
// parsing, --help and docs table are in collectorOptions.test.mjs, the rate limiter's logic in rateLimit.test.mjs
// (neither needs the build).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../server/store.mjs';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { httpRequest } from './httpRequest.mjs';

const core = await loadH3probeNode();
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-service-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let dbCount = 0;
const dbPath = () => path.join(tmp, `db${dbCount++}.sqlite`);

function sample(phase, idx, origin, protocol) {
  return { phase, idx, origin, result: 'ok', http_status: 204, protocol, reused: true, network_ms: 10 + idx, queue_ms: 0.1,
    dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: 1, response_ms: 0.2, start_ms: 100, fetch_ms: 11 };
}
// Two treatment requests, one of them a fallback to h2.
const beacon = (runId) => JSON.stringify({ schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${runId}`, config_id: 'default',
  module_version: '0.1.0', order: 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '',
  samples: [sample('control', 0, 'h2', 'h2'), sample('treatment', 0, 'h3', 'h3'), sample('treatment', 1, 'h3', 'h2')] });

const request = (port, { method = 'POST', path = '/beacon', ...rest } = {}) => httpRequest(port, { method, path, ...rest });

/** Prometheus text → Map of 'name{labels}' → number. */
function parseMetrics(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function withCollector(opts, fn) {
  const store = openStore(dbPath(), core);
  const collector = await startCollector({ port: 0, store, core, ...opts });
  try {
    return await fn(collector.port, store, collector);
  } finally {
    await collector.close();
    if (store.db.open) store.close();
  }
}

describe('collector options', () => {
  test('a --db in a folder that does not exist yet: the store makes the folder (and a report of it reads it)', () => {
    const file = path.join(tmp, 'var', 'lib', 'h3probe', 'collector.sqlite');
    openStore(file, core).close();
    assert.ok(fs.statSync(file).isFile());
    openStore(file, core, { readOnly: true }).close();
    assert.throws(() => openStore(path.join(tmp, 'nowhere', 'x.sqlite'), core, { readOnly: true }), /no database at/);
    assert.equal(fs.existsSync(path.join(tmp, 'nowhere')), false, 'a read makes no folder');
  });
});

describe('rate limit', () => {
  test('429 with Retry-After after the burst from one network, not from another; loopback clients are not limited', async () => {
    await withCollector({ rateLimit: 1, rateBurst: 3 }, async (port, store) => {
      const from = (ip, id) => request(port, { body: beacon(id), headers: { 'X-Forwarded-For': ip } });
      for (let i = 0; i < 3; i++) assert.equal((await from(`203.0.113.${10 + i}`, `rl-a${i}`)).status, 204);
      const limited = await from('203.0.113.200', 'rl-a3');
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(limited.headers['access-control-allow-origin'], '*');
      assert.equal((await from('198.51.100.7', 'rl-b0')).status, 204, 'another /24');
      assert.equal((await from('2001:db8:1:2::1', 'rl-c0')).status, 204);
      for (let i = 0; i < 5; i++) assert.equal((await request(port, { body: beacon(`rl-local${i}`) })).status, 204);
      assert.equal(store.runsSince().some((r) => r.run_id === 'rl-a3'), false);
      const m = parseMetrics((await request(port, { method: 'GET', path: '/metrics' })).body);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="rate_limited"}'), 1);
    });
  });
});
describe('collector endpoints', () => {
  test('/healthz answers 200 with a writable store and 503 without one', async () => {
    await withCollector({}, async (port, store) => {
      const ok = await request(port, { method: 'GET', path: '/healthz' });
      assert.equal(ok.status, 200);
      assert.equal(JSON.parse(ok.body).status, 'ok');
      store.close();
      const down = await request(port, { method: 'GET', path: '/healthz' });
      assert.equal(down.status, 503);
      assert.match(JSON.parse(down.body).error, /closed/);
    });
  });

  test('/metrics counts accepted, rejected by reason, duplicates, latency and the fallback counters', async () => {
    await withCollector({ path: '/b' }, async (port) => {
      const post = (body, extra = {}) => request(port, { path: '/b', body, ...extra });
      assert.equal((await post(beacon('m-1'))).status, 204);
      assert.equal((await post(beacon('m-2'))).status, 204);
      assert.equal((await post(beacon('m-1'))).status, 204);
      assert.equal((await post('{"schema":"nope"}')).status, 400);
      assert.equal((await post('x'.repeat(300 * 1024))).status, 413);
      assert.equal((await request(port, { method: 'GET', path: '/b' })).status, 405);
      assert.equal((await request(port, { path: '/beacon', body: beacon('m-3') })).status, 404, 'the configured path only');
      const res = await request(port, { method: 'GET', path: '/metrics' });
      assert.equal(res.status, 200);
      assert.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
      assert.match(res.body, /# HELP h3probe_beacons_accepted_total .+\n# TYPE h3probe_beacons_accepted_total counter\n/);
      assert.match(res.body, /# TYPE h3probe_beacon_request_duration_seconds histogram/);
      const m = parseMetrics(res.body);
      assert.equal(m.get('h3probe_beacons_accepted_total'), 2);
      assert.equal(m.get('h3probe_beacons_duplicate_total'), 1);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="invalid"}'), 1);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="too_large"}'), 1);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="method"}'), 1);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="rate_limited"}'), 0);
      assert.equal(m.get('h3probe_beacon_request_duration_seconds_count'), 6);
      assert.equal(m.get('h3probe_beacon_request_duration_seconds_bucket{le="+Inf"}'), 6);
      assert.ok(m.get('h3probe_beacon_request_duration_seconds_sum') > 0);
      // Two stored beacons, each with two completed treatment requests of which one fell back to h2.
      assert.equal(m.get('h3probe_treatment_requests_completed_total'), 4);
      assert.equal(m.get('h3probe_treatment_requests_fallback_total'), 2);
    });
  });

  test('/metrics counts stored load_error beacons by reason', async () => {
    await withCollector({}, async (port) => {
      // The gate's load_error beacon (web/src/h3probe.js): no core ran, so no samples and no run fields.
      const loadError = (id, reason) => JSON.stringify({ schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`,
        config_id: 'default', outcome: 'load_error', reason, run_ms: 30, sample_rate: 1, samples: [] });
      const before = parseMetrics((await request(port, { method: 'GET', path: '/metrics' })).body);
      assert.equal([...before.keys()].filter((k) => k.startsWith('h3probe_load_errors_total')).length, 0, 'none counted yet');
      for (const [id, reason] of [['le-1', 'wasm_type'], ['le-2', 'wasm_type'], ['le-3', 'glue_import']]) {
        assert.equal((await request(port, { body: loadError(id, reason) })).status, 204);
      }
      assert.equal((await request(port, { body: loadError('le-1', 'wasm_type') })).status, 204, 'a retry');
      assert.equal((await request(port, { body: loadError('le-4', 'nonsense') })).status, 400);
      assert.equal((await request(port, { body: beacon('le-run') })).status, 204);
      const res = await request(port, { method: 'GET', path: '/metrics' });
      assert.match(res.body, /# TYPE h3probe_load_errors_total counter\n/);
      const m = parseMetrics(res.body);
      assert.equal(m.get('h3probe_load_errors_total{reason="wasm_type"}'), 2);
      assert.equal(m.get('h3probe_load_errors_total{reason="glue_import"}'), 1);
      assert.equal([...m.keys()].filter((k) => k.startsWith('h3probe_load_errors_total')).length, 2);
      assert.equal(m.get('h3probe_beacons_accepted_total'), 4);
    });
  });

  test('/metrics counts stored runs in the Worker, and those on the main thread by why they left it', async () => {
    await withCollector({}, async (port) => {
      const where = (id, context) => JSON.stringify({ ...JSON.parse(beacon(id)), context });
      const before = parseMetrics((await request(port, { method: 'GET', path: '/metrics' })).body);
      assert.equal(before.get('h3probe_worker_runs_total'), 0);
      assert.equal([...before.keys()].filter((k) => k.startsWith('h3probe_main_thread_runs_total')).length, 0, 'none counted yet');
      for (const [id, context] of [['w-1', { run_context: 'worker' }], ['w-2', { run_context: 'worker' }],
        ['m-1', { run_context: 'main', worker_fallback: 'worker_load' }], ['m-2', { run_context: 'main', worker_fallback: 'worker_load' }],
        ['m-3', { run_context: 'main', worker_fallback: 'csp' }], ['m-4', { run_context: 'main' }], ['n-1', {}]]) {
        assert.equal((await request(port, { body: where(id, context) })).status, 204, id);
      }
      assert.equal((await request(port, { body: where('m-1', { run_context: 'main', worker_fallback: 'worker_load' }) })).status, 204, 'a retry');
      const refused = await request(port, { body: where('m-5', { run_context: 'main', worker_fallback: 'blocked' }) });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /context\.worker_fallback has an unknown value "blocked"/);
      const res = await request(port, { method: 'GET', path: '/metrics' });
      assert.match(res.body, /# TYPE h3probe_main_thread_runs_total counter\n/);
      const m = parseMetrics(res.body);
      assert.equal(m.get('h3probe_worker_runs_total'), 2);
      assert.equal(m.get('h3probe_main_thread_runs_total{reason="worker_load"}'), 2);
      assert.equal(m.get('h3probe_main_thread_runs_total{reason="csp"}'), 1);
      assert.equal(m.get('h3probe_main_thread_runs_total{reason="unknown"}'), 1, 'a module older than the reason');
      assert.equal([...m.keys()].filter((k) => k.startsWith('h3probe_main_thread_runs_total')).length, 3);
    });
  });

  test('CORS: an allowed origin is echoed with Vary: Origin; others are refused, preflight and POST', async () => {
    await withCollector({ allowedOrigins: ['https://app.example.com'] }, async (port) => {
      const allowed = await request(port, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com' } });
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
      assert.equal(allowed.headers.vary, 'Origin');
      assert.match(allowed.headers['access-control-allow-methods'], /POST/);
      const other = await request(port, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
      assert.equal(other.status, 403);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const post = await request(port, { body: beacon('cors-1'), headers: { Origin: 'https://app.example.com' } });
      assert.equal(post.status, 204);
      assert.equal(post.headers['access-control-allow-origin'], 'https://app.example.com');
      assert.equal((await request(port, { body: beacon('cors-2'), headers: { Origin: 'https://evil.example' } })).status, 403);
      assert.equal((await request(port, { body: beacon('cors-3') })).status, 204, 'no Origin: not a browser, not refused');
      const m = parseMetrics((await request(port, { method: 'GET', path: '/metrics' })).body);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="origin"}'), 2);
    });
  });

  // The cap itself is Node's server.maxConnections.
  test('connections over the cap are closed at once; the others are served', { timeout: 30_000 }, async () => {
    await withCollector({ maxConnections: 2 }, async (port) => {
      const open = () => new Promise((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1');
        const timer = setTimeout(() => reject(new Error('no connection in 5 s')), 5000);
        s.once('connect', () => { clearTimeout(timer); resolve(s); });
        s.once('error', (err) => { clearTimeout(timer); reject(err); });
        s.once('close', () => { clearTimeout(timer); resolve(s); });
      });
      // Each step bounded: a socket closed instead of answered fails the test instead of waiting for ever.
      const healthz = (s) => new Promise((resolve) => {
        const timer = setTimeout(() => resolve('no answer in 5 s'), 5000);
        s.once('data', (d) => { clearTimeout(timer); resolve(String(d)); });
        s.once('close', () => { clearTimeout(timer); resolve('closed'); });
        s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      // Two connections, each answered once: the server has accepted and counts both before the third arrives.
      const a = await open();
      const b = await open().catch((err) => { a.destroy(); throw err; });
      let c = null;
      try {
        assert.match(await healthz(a), /^HTTP\/1\.1 200/);
        assert.match(await healthz(b), /^HTTP\/1\.1 200/);
        c = await open();
        // Not served: closed or reset (it may also sit in the kernel's queue unanswered, which is as good for the cap).
        const served = await new Promise((resolve) => {
          const timer = setTimeout(() => resolve(false), 3000);
          const done = (value) => { clearTimeout(timer); resolve(value); };
          c.on('error', () => done(false));
          c.on('end', () => done(false));
          c.on('close', () => done(false));
          c.on('data', () => done(true));
          c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        });
        assert.equal(served, false, 'the third connection got no answer');
        assert.match(await healthz(a), /^HTTP\/1\.1 200/, 'the connections under the cap are still served');
      } finally {
        for (const s of [a, b, c]) s?.destroy();
      }
    });
  });

  test('a client dribbling its headers, and one that sends nothing, are cut after the header timeout', async () => {
    await withCollector({ headersTimeout: 1, requestTimeout: 1 }, async (port) => {
      // Cut long before the 60 header lines (30 s) are through; the test's own timeout is the only clock.
      const dribbler = net.connect(port, '127.0.0.1');
      let lines = 0;
      let received = '';
      dribbler.on('data', (d) => { received += d; });
      const timer = setInterval(() => {
        if (lines++ === 0) dribbler.write('POST /beacon HTTP/1.1\r\nHost: x\r\n');
        else if (lines < 60) dribbler.write(`X-Slow-${lines}: y\r\n`);
      }, 500);
      // Read, so that the server's FIN is seen: a paused socket may never emit 'end', and then never closes (it stayed in
      // CLOSE-WAIT and the test waited for ever, about 1 run in 8).
      const idle = net.connect(port, '127.0.0.1').resume();
      const [dribbleEnd, idleEnd] = await Promise.all([
        new Promise((resolve) => dribbler.on('close', () => resolve(lines))),
        new Promise((resolve) => idle.on('close', () => resolve(true))),
      ]);
      clearInterval(timer);
      assert.ok(dribbleEnd < 60, `cut after ${dribbleEnd} lines`);
      assert.match(received, /^HTTP\/1\.1 408/);
      assert.equal(idleEnd, true);
    });
  });
});

/** Starts `h3probe collector` on a free port; resolves {child, port, exit: Promise<code>, output()}. */
async function startService(args) {
  const child = spawn(process.execPath, ['web/bin/h3probe.mjs', 'collector', '--port', '0', ...args], { cwd: root });
  let out = '';
  child.stderr.on('data', (c) => { out += c; });
  const exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line).port);
    });
    exit.then((code) => reject(new Error(`collector exited with ${code}: ${out}`)));
  });
  return { child, port, exit, output: () => out };
}

describe('the service', () => {
  test('SIGTERM mid-load: in-flight beacons answered, every 204 stored, exit 0', async () => {
    const db = dbPath();
    const svc = await startService(['--db', db]);
    const acked = [];
    let sent = 0;
    let signalled = false;
    // 8 senders, each beacon on a new connection, until the service stops answering.
    const sender = async (k) => {
      for (let i = 0; ; i++) {
        const id = `drain-${k}-${i}`;
        sent++;
        let res;
        try {
          res = await request(svc.port, { body: beacon(id) });
        } catch {
          return;
        }
        if (res.status === 204) acked.push(id);
        if (!signalled && acked.length >= 40) {
          signalled = true;
          svc.child.kill('SIGTERM');
        }
        if (signalled && res.status !== 204) return;
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, k) => sender(k)));
    assert.equal(await svc.exit, 0, svc.output());
    assert.match(svc.output(), /"stopped":"drained"/);
    const dbh = new Database(db, { readonly: true });
    const stored = new Set(dbh.prepare('SELECT run_id FROM runs').pluck().all());
    dbh.close();
    assert.ok(acked.length >= 40);
    const missing = acked.filter((id) => !stored.has(id));
    assert.deepEqual(missing, [], `acknowledged but not stored (sent ${sent}, acked ${acked.length})`);
  });

  test('/metrics and /healthz of the command', async () => {
    const svc = await startService(['--db', dbPath()]);
    try {
      for (let i = 0; i < 6; i++) assert.equal((await request(svc.port, { body: beacon(`agg-${i}`) })).status, 204);
      assert.equal((await request(svc.port, { body: '{}' })).status, 400);
      const m = parseMetrics((await request(svc.port, { method: 'GET', path: '/metrics' })).body);
      assert.equal(m.get('h3probe_beacons_accepted_total'), 6);
      assert.equal(m.get('h3probe_beacons_rejected_total{reason="invalid"}'), 1);
      assert.equal(m.get('h3probe_beacon_request_duration_seconds_count'), 7);
      const health = await request(svc.port, { method: 'GET', path: '/healthz' });
      assert.equal(health.status, 200);
    } finally {
      svc.child.kill('SIGTERM');
      assert.equal(await svc.exit, 0);
    }
  });
});
