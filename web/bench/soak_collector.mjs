// `npm run soak -- --minutes 10`: the collector into ClickHouse at the most it takes, for a while, with the two faults
// that matter: the collector killed with SIGKILL a third of the way in (and started again on the same log), and
// ClickHouse stopped for --outage seconds past the middle (the log grows, then drains). Clients send distinct beacons
// (syntheticBeacons, each its own run_id) over keep-alive connections as fast as they are answered, and send a beacon
// again when its request fails (a client's retry). At the end every beacon answered 204 must be in runs and run_records
// once with all its requests, no row of any table twice, the active parts per partition bounded all along, and no
// "too many parts" in ClickHouse's log. npm test runs the same code for a few seconds (collectorSoak.test.mjs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clickhouseClient } from '../server/clickhouseConnection.mjs';
import { planClickHouse, startClickHouse } from '../launch/clickhouse.mjs';
import { freePort } from '../cli/ports.mjs';
import { syntheticBeacons } from '../synthetic/syntheticBeacons.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
// ClickHouse 18.16 slows inserts at 150 active parts in a partition and refuses them at 300 (parts_to_delay_insert,
// parts_to_throw_insert): a collector that stays well under the first never meets either.
export const PART_BOUND = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the soak; resolves to its figures and `problems` (empty when every check held). seconds: length of the load;
 * outageSeconds: how long ClickHouse is stopped; clients: concurrent keep-alive connections; log: print progress.
 */
export async function soak({ seconds = 600, outageSeconds = 60, clients = 32, log = () => {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-soak-'));
  const plan = await planClickHouse(`soak-${process.pid}`);
  let server = await startClickHouse(plan, { fresh: true });
  const ch = clickhouseClient(server.url, { database: 'soak', timeoutMs: 600_000 });
  const port = await freePort();
  const spec = `clickhouse://127.0.0.1:${plan.httpPort}/soak?log=${encodeURIComponent(path.join(dir, 'beacons'))}`;
  const problems = [];
  const figures = { seconds, outageSeconds, clients, acked: 0, sent: 0, retried: 0, maxParts: 0, maxLogBytes: 0 };

  let collector = null;
  const startCollector = async () => {
    const child = spawn(process.execPath, ['web/bin/h3probe.mjs', 'collector', '--store', spec, '--port', String(port),
      '--rate-limit', '0', '--max-connections', '4096'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await new Promise((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (c) => { buf += c; if (buf.includes('"listening"')) resolve(); });
      exited.then((e) => reject(new Error(`collector exited before listening: ${JSON.stringify(e)}`)));
    });
    child.stdout.resume();
    collector = { child, exited };
  };

  // Beacons: a pool of texts split at their run_id, each sent with a fresh one.
  const pool = [...syntheticBeacons({ runs: 500, seed: 3 })].map(({ beacon }) => ({
    parts: JSON.stringify(beacon).split(beacon.run_id), requests: beacon.samples.length }));
  const acked = new Map();  // run_id -> requests
  let next = 0;
  let stopping = false;
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const post = (body) => new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/beacon', agent,
      headers: { 'Content-Type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(body);
  });
  async function client() {
    while (!stopping) {
      const n = next++;
      const b = pool[n % pool.length];
      const id = `soak-${n.toString(36)}`;
      const body = b.parts.join(id);
      for (let tries = 0; !stopping; tries++) {
        figures.sent++;
        if (tries > 0) figures.retried++;
        const status = await post(body);
        if (status === 204) { acked.set(id, b.requests); break; }
        if (status !== 0) { problems.push(`beacon ${id} answered ${status}`); break; }
        await sleep(100);  // the collector is down: try again, as a page's retry would
      }
    }
  }

  // The largest count of active parts in one partition of a table, sampled while the load runs.
  const sampleParts = async () => {
    try {
      const [row] = await ch.json(`SELECT max(n) AS n FROM (SELECT count() AS n FROM system.parts
        WHERE active AND database = 'soak' GROUP BY table, partition)`);
      figures.maxParts = Math.max(figures.maxParts, Number(row?.n ?? 0));
    } catch { /* ClickHouse is stopped */ }
  };
  const sampleLog = async () => new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        try { figures.maxLogBytes = Math.max(figures.maxLogBytes, JSON.parse(text).logBytes ?? 0); } catch { /* draining */ }
        resolve();
      });
    }).on('error', () => resolve());
  });

  const t0 = Date.now();
  const elapsed = () => (Date.now() - t0) / 1000;
  try {
    await startCollector();
    const load = Array.from({ length: clients }, client);
    const killAt = seconds / 3;
    const outageAt = seconds / 2;
    let killed = false;
    let outage = null;
    let lastPrint = 0;
    while (elapsed() < seconds) {
      await sleep(500);
      await sampleParts();
      await sampleLog();
      if (!killed && elapsed() >= killAt) {
        killed = true;
        collector.child.kill('SIGKILL');
        await collector.exited;
        log(`${elapsed().toFixed(0)} s: collector killed (SIGKILL) with ${acked.size} acknowledged; started again`);
        await startCollector();
      }
      if (!outage && elapsed() >= outageAt) {
        outage = { start: elapsed(), ackedBefore: acked.size };
        await server.stop();
        log(`${elapsed().toFixed(0)} s: ClickHouse stopped`);
      }
      if (outage && !outage.end && elapsed() >= outage.start + outageSeconds) {
        outage.end = elapsed();
        outage.acked = acked.size - outage.ackedBefore;
        outage.logBytes = figures.maxLogBytes;
        server = await startClickHouse(plan, { keepHttpPort: true });
        log(`${elapsed().toFixed(0)} s: ClickHouse started again; ${outage.acked} beacons acknowledged while it was stopped, ` +
          `log at most ${(outage.logBytes / 1e6).toFixed(1)} MB`);
      }
      if (elapsed() - lastPrint >= 10) {
        lastPrint = elapsed();
        log(`${elapsed().toFixed(0)} s: ${acked.size} acknowledged (${(acked.size / elapsed()).toFixed(0)}/s), ` +
          `max active parts per partition ${figures.maxParts}, log ${(figures.maxLogBytes / 1e6).toFixed(1)} MB at most, load ${os.loadavg()[0].toFixed(2)}`);
      }
    }
    stopping = true;
    await Promise.all(load);
    figures.acked = acked.size;
    figures.rate = acked.size / elapsed();
    figures.outage = outage;
    if (!outage?.end) problems.push('the outage did not end inside the soak: make --seconds longer than twice --outage');
    if (!(outage?.acked > 0)) problems.push('no beacon was acknowledged while ClickHouse was stopped');
    // The log drains into ClickHouse; SIGTERM ships what is left and exits 0.
    const drainStart = Date.now();
    for (;;) {
      await sampleLog();
      const logBytes = await new Promise((resolve) => http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve(JSON.parse(text).logBytes));
      }).on('error', () => resolve(null)));
      await sampleParts();
      if (logBytes === 0) break;
      if (Date.now() - drainStart > 600_000) { problems.push(`the log did not drain in 10 minutes (${logBytes} bytes left)`); break; }
      await sleep(500);
    }
    figures.drainSeconds = (Date.now() - drainStart) / 1000;
    collector.child.kill('SIGTERM');
    const exit = await collector.exited;
    collector = null;
    if (exit.code !== 0) problems.push(`the collector exited ${JSON.stringify(exit)} on SIGTERM`);

    // Every acknowledged beacon once, with its requests; nothing of any table twice.
    const perRun = async (table) => new Map((await ch.json(`SELECT run_id, count() AS n FROM ${table} GROUP BY run_id`,
      { timeoutMs: 600_000 })).map((r) => [r.run_id, r.n]));
    const runs = await perRun('runs');
    const records = await perRun('run_records');
    const requests = await perRun('requests');
    const [doubledRequests] = await ch.json(`SELECT count() AS n FROM (SELECT run_id, phase, idx FROM requests
      GROUP BY run_id, phase, idx HAVING count() > 1)`);
    let missing = 0;
    let doubled = 0;
    for (const [id, n] of acked) {
      if (!runs.has(id) || !records.has(id) || requests.get(id) !== n) missing++;
    }
    for (const m of [runs, records]) for (const n of m.values()) if (n > 1) doubled++;
    doubled += Number(doubledRequests.n);
    figures.stored = runs.size;
    figures.missing = missing;
    figures.doubled = doubled;
    if (missing > 0) problems.push(`${missing} acknowledged beacons missing or incomplete`);
    if (doubled > 0) problems.push(`${doubled} runs or requests stored twice`);
    if (figures.maxParts > PART_BOUND) problems.push(`${figures.maxParts} active parts in one partition (bound ${PART_BOUND})`);
    const errLog = (() => {
      try { return fs.readFileSync(path.join(plan.dir, 'log', 'server.err.log'), 'utf8'); } catch { return ''; }
    })();
    figures.tooManyParts = (errLog.match(/Too many parts/g) ?? []).length;
    if (figures.tooManyParts > 0) problems.push(`"Too many parts" ${figures.tooManyParts} times in ClickHouse's log`);
    const inserts = await ch.json(`SELECT count() AS n FROM system.query_log WHERE type = 2 AND event_date >= yesterday()
      AND query LIKE 'INSERT INTO requests %'`);
    figures.requestInserts = Number(inserts[0].n);
  } finally {
    stopping = true;
    agent.destroy();
    if (collector) { collector.child.kill('SIGKILL'); await collector.exited; }
    await server.kill();
    fs.rmSync(plan.dir, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { ...figures, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: {
    minutes: { type: 'string', default: '10' }, outage: { type: 'string', default: '60' }, clients: { type: 'string', default: '32' },
  } });
  const seconds = Number(values.minutes) * 60;
  console.log(`soak: ${seconds} s into ClickHouse, ${values.clients} clients, collector SIGKILLed at ${(seconds / 3).toFixed(0)} s, ` +
    `ClickHouse stopped for ${values.outage} s at ${(seconds / 2).toFixed(0)} s; ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const result = await soak({ seconds, outageSeconds: Number(values.outage), clients: Number(values.clients), log: console.log });
  console.log(`acknowledged ${result.acked} beacons (${result.rate.toFixed(0)}/s over the soak, ${result.retried} client retries), ` +
    `stored ${result.stored}, missing ${result.missing}, doubled ${result.doubled}; the log drained in ${result.drainSeconds.toFixed(1)} s ` +
    `after the load; at most ${result.maxParts} active parts in a partition; ${result.requestInserts} inserts into requests ` +
    `(${(result.requestInserts / seconds).toFixed(2)}/s); "Too many parts" ${result.tooManyParts} times; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (result.problems.length > 0) console.log(`FAILED: ${result.problems.join('; ')}`);
  process.exit(result.problems.length === 0 ? 0 : 1);
}
