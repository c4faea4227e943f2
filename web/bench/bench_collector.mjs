// `npm run bench:collector`: the collector's throughput into each store as a share of a bare Node HTTP server that
// answers 204, all measured by this one script in one run: autocannon at the same connections and duration, rounds
// alternating (bare, SQLite collector, ClickHouse collector, bare, ...) so that drift in the machine's load hits every
// side. The collectors run as deployed (`h3probe collector`, the WASM decoder), fed distinct realistic beacons
// (syntheticBeacons, each with its own run_id); ClickHouse is a local clickhouse-server started here
// (web/launch/clickhouse.mjs). Then each side again at 80 % of its own maximum rate, for the time to acknowledge at that
// load (p99). Afterwards every beacon answered 2xx must be stored once, and ClickHouse's query_log and system.parts give
// the inserts per table and second and the parts they made. --tiny: the same, a few seconds per side. --cluster SxR:
// the ClickHouse side is a cluster of S shards × R replicas with a ZooKeeper (web/launch/clickhouse.mjs startClickHouseCluster()), the
// store URL's ?cluster=, its collector writing to the first server; stored once is then counted on every replica.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { clickhouseClient } from '../server/clickhouseConnection.mjs';
import { clickhouseInstalled, planClickHouse, startClickHouse, startClickHouseCluster } from '../launch/clickhouse.mjs';
import { syntheticBeacons } from '../synthetic/syntheticBeacons.mjs';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    stores: { type: 'string', default: 'sqlite,clickhouse' },
    'rate-share': { type: 'string', default: '0.8' },
    tiny: { type: 'boolean', default: false },
    cluster: { type: 'string' },
  },
});
const shape = args.cluster ? /^([1-9])x([1-9])$/.exec(args.cluster) : null;
if (args.cluster && !shape) throw new Error(`--cluster SxR (shards × replicas, e.g. 1x2), not "${args.cluster}"`);
const tiny = args.tiny;
const connections = Number(args.connections ?? (tiny ? 8 : 50));
const duration = Number(args.duration ?? (tiny ? 3 : 10));
const rounds = Number(args.rounds ?? (tiny ? 1 : 2));
const warmup = Number(args.warmup ?? (tiny ? 1 : 2));
const rateShare = Number(args['rate-share']);
const stores = args.stores.split(',').filter(Boolean);
for (const s of stores) if (!['sqlite', 'clickhouse'].includes(s)) throw new Error(`--stores: sqlite and/or clickhouse, not "${s}"`);
if (stores.includes('clickhouse') && !clickhouseInstalled()) throw new Error('clickhouse-server is not installed: npm run deps');

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-bench-collector-'));
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

// A pool of distinct beacons; each request takes the next one with a fresh run_id, so none is a duplicate.
const pool = [...syntheticBeacons({ runs: 1000, seed: 7 })].map(({ beacon }) => JSON.stringify(beacon).split(beacon.run_id));
let sent = 0;
const nextBeacon = () => pool[sent % pool.length].join(`bench-${(sent++).toString(36)}`);
const bytes = nextBeacon().length;

// The bare server: its own process, like the collectors, so none shares an event loop with autocannon.
const BARE = `const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(204); res.end(); }); });
s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })));
process.on('SIGTERM', () => process.exit(0));`;

function start(argv) {
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (chunk) => {
      buf += chunk;
      const line = buf.split('\n').find((l) => l.includes('"port"'));
      if (line) resolve(JSON.parse(line).port);
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
  return { child, port };
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

// The collector sits behind a proxy on the same machine, as deployed: each beacon names its client in X-Forwarded-For,
// so the country and network lookups run as they do in production (a loopback client skips both).
const CLIENTS = ['8.8.8.8', '1.1.1.1', '81.2.69.142', '2001:4860:4860::8888', '202.12.27.33', '200.160.2.3'];
let clientAt = 0;

function drive(port, seconds, beacons, overallRate) {
  return autocannon({
    url: `http://127.0.0.1:${port}/beacon`, connections, duration: seconds, ...(overallRate ? { overallRate } : {}),
    requests: [{ method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' },
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-forwarded-for': CLIENTS[clientAt++ % CLIENTS.length] },
        body: beacons ? nextBeacon() : 'x'.repeat(bytes) }) }],
  });
}

let clickhouse = null;  // the server the ClickHouse collector writes to
let cluster = null;
const sides = { bare: start(['-e', BARE]) };
const collectorArgs = ['web/bin/h3probe.mjs', 'collector', '--port', '0', '--rate-limit', '0'];
if (stores.includes('sqlite')) sides.sqlite = start([...collectorArgs, '--store', `sqlite:${path.join(dir, 'beacons.sqlite')}`]);
if (stores.includes('clickhouse')) {
  let query = '';
  if (shape) {
    const [, shards, replicas] = shape.map(Number);
    cluster = await startClickHouseCluster('h3probe_bench', Array.from({ length: shards },
      (_, s) => Array.from({ length: replicas }, (__, r) => `bench-collector-s${s + 1}r${r + 1}`)), { fresh: true });
    [clickhouse] = cluster.servers;
    query = '&cluster=h3probe_bench';
  } else {
    clickhouse = await startClickHouse(await planClickHouse('bench-collector'), { fresh: true });
  }
  const logFile = path.join(dir, 'clickhouse-log.ndjson');
  sides.clickhouse = start([...collectorArgs, '--store',
    `clickhouse://127.0.0.1:${clickhouse.httpPort}/bench?log=${encodeURIComponent(logFile)}${query}`]);
}
const names = Object.keys(sides);
const ports = {};
for (const n of names) ports[n] = await sides[n].port;

const loadBefore = load();
const acked = Object.fromEntries(names.map((n) => [n, 0]));
const failures = [];
const tally = (side, r) => {
  acked[side] += r['2xx'];
  if (r.non2xx > 0 || r.errors > 0) failures.push(`${side}: ${r.non2xx} non-2xx, ${r.errors} errors`);
};
for (const side of names) tally(side, await drive(ports[side], warmup, side !== 'bare'));

const results = Object.fromEntries(names.map((n) => [n, []]));
const windows = [];  // the ClickHouse collector's rounds, [start, end] in ms
for (let round = 0; round < rounds; round++) {
  for (const side of names) {
    const t0 = Date.now();
    const r = await drive(ports[side], duration, side !== 'bare');
    if (side === 'clickhouse') windows.push([t0, Date.now()]);
    tally(side, r);
    results[side].push(r);
    console.log(`round ${round + 1} ${side.padEnd(10)}: ${(r['2xx'] / r.duration).toFixed(0)} req/s, p50 ${r.latency.p50} ms, ` +
      `p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, load ${os.loadavg()[0].toFixed(2)}`);
  }
}
const sum = (list, f) => list.reduce((a, r) => a + f(r), 0);
const rate = (side) => sum(results[side], (r) => r['2xx']) / sum(results[side], (r) => r.duration);
const median = (side, k) => results[side].map((r) => r.latency[k]).sort((a, b) => a - b)[Math.floor(results[side].length / 2)];

// The time to acknowledge at rateShare of each side's own maximum.
const paced = {};
for (const side of names) {
  const target = Math.max(1, Math.round(rateShare * rate(side)));
  const r = await drive(ports[side], duration, side !== 'bare', target);
  tally(side, r);
  paced[side] = { target, rate: r['2xx'] / r.duration, p50: r.latency.p50, p99: r.latency.p99 };
}
const loadAfter = load();

const exits = {};
for (const side of names) exits[side] = await stop(sides[side].child);

console.log(`\nbeacon ${bytes} bytes; ${connections} connections, ${rounds} × ${duration} s per side (warm-up ${warmup} s), ` +
  `${os.cpus().length} CPUs (${os.cpus()[0].model}), node ${process.version}`);
const bareRate = rate('bare');
for (const side of names) {
  const label = { bare: 'bare node http (204)', sqlite: 'collector, SQLite', clickhouse: 'collector, ClickHouse' }[side];
  const share = side === 'bare' ? '' : `, ${(100 * rate(side) / bareRate).toFixed(1)} % of bare`;
  console.log(`${`${label}:`.padEnd(23)} ${rate(side).toFixed(0)} req/s${share}, p50 ${median(side, 'p50')} ms, p99 ${median(side, 'p99')} ms; ` +
    `at ${Math.round(100 * rateShare)} % (${paced[side].target}/s): ${paced[side].rate.toFixed(0)}/s, p50 ${paced[side].p50} ms, p99 ${paced[side].p99} ms`);
}
console.log(`targets: SQLite ≥ 50 % of bare; SQLite and ClickHouse ≥ 1,250 beacons/s (10 × the field peak), ≤ 2 inserts/s per table; `
  + `p99 ≤ 50 ms at 80 %${cluster ? `; ClickHouse: cluster of ${args.cluster} (shards × replicas)` : ''}`);
console.log(`load average (1/5/15 min): before ${loadBefore}, after ${loadAfter}`);

// Every 2xx must be stored, once; a few more may be, whose answers autocannon cut at the end of a round.
const lost = [];
const report = (side, stored, distinct = stored, label = side) => {
  const bad = stored < acked[side] || distinct !== stored;
  if (bad) lost.push(side);
  console.log(`${label}: stored ${stored} runs (${distinct} distinct) for ${acked[side]} answered 2xx; exit ${exits[side]}; ` +
    `${bad ? 'LOST OR DOUBLED BEACONS' : 'nothing lost or doubled'}`);
};
if (sides.sqlite) report('sqlite', new Database(path.join(dir, 'beacons.sqlite'), { readonly: true }).prepare('SELECT count(*) FROM runs').pluck().get());
if (clickhouse) {
  const ch = clickhouseClient(clickhouse.url, { database: 'bench', timeoutMs: 120_000 });
  const [runs] = await ch.json('SELECT count() AS n, uniqExact(run_id) AS ids FROM runs');
  report('clickhouse', runs.n, runs.ids);
  // Each replica holds its shard's runs once: the shards' local counts on each replica add up to the total.
  for (const [r, label] of cluster ? [...Array(cluster.shards[0].length).keys()].map((r) => [r, `replica ${r + 1}`]) : []) {
    let n = 0;
    for (const row of cluster.shards) {
      await cluster.caughtUp(row[r], 'bench');
      const local = clickhouseClient(row[r].url, { database: 'bench', timeoutMs: 120_000 });
      n += Number((await local.json('SELECT count() AS n FROM runs_local'))[0].n);
    }
    report('clickhouse', n, n, `clickhouse, ${label} of each shard (runs_local)`);
  }
  await ch.query('SYSTEM FLUSH LOGS').catch(() => new Promise((r) => setTimeout(r, 2500)));
  const inserts = await ch.json(`SELECT query, toUInt32(event_time) AS t FROM system.query_log
    WHERE type = 2 AND event_date >= yesterday() AND query LIKE 'INSERT INTO %'`);
  const seconds = sum(windows, ([a, b]) => (b - a) / 1000);
  const inWindow = (t) => windows.some(([a, b]) => t * 1000 >= a - 1000 && t * 1000 <= b + 1000);
  // In a cluster this server's replicated local tables hold the parts (the collector's inserts go to the Distributed tables).
  const parts = (await ch.json(`SELECT table, countIf(active) AS active, count() AS made FROM system.parts
    WHERE database = 'bench' GROUP BY table ORDER BY table`)).map((p) => ({ ...p, table: p.table.replace(/_local$/, '') }));
  for (const table of ['runs', 'requests', 'run_records']) {
    const times = inserts.filter((q) => q.query.startsWith(`INSERT INTO ${table} `) && inWindow(q.t)).map((q) => q.t);
    const perSecond = new Map();
    for (const t of times) perSecond.set(t, (perSecond.get(t) ?? 0) + 1);
    const p = parts.find((x) => x.table === table) ?? { active: 0, made: 0 };
    console.log(`clickhouse ${table.padEnd(11)}: ${times.length} inserts in ${seconds.toFixed(0)} s of rounds ` +
      `(${(times.length / seconds).toFixed(2)}/s, at most ${Math.max(0, ...perSecond.values())} in one second); ` +
      `parts ${p.active} active, ${p.made} on disk`);
  }
  // The server's CPU for the report table's inserts, which includes the value summary's materialized view.
  const event = (name) => `ProfileEvents.Values[indexOf(ProfileEvents.Names, '${name}')]`;
  const [cost] = await ch.json(`SELECT count() AS inserts, sum(written_rows) AS written, intDiv(sum(${event('UserTimeMicroseconds')} +
    ${event('SystemTimeMicroseconds')}), 1000) AS cpu FROM system.query_log WHERE type = 2 AND event_date >= yesterday()
    AND query LIKE 'INSERT INTO run_records %'`);
  const summary = parts.find((x) => x.table === 'run_values') ?? { active: 0, made: 0 };
  console.log(`clickhouse run_records inserts (with the value summary's view): ${cost.cpu} ms CPU for ${runs.n} runs ` +
    `(${((cost.cpu * 1000) / Math.max(1, runs.n)).toFixed(1)} µs per run), ${cost.written} rows written; run_values parts ` +
    `${summary.active} active, ${summary.made} on disk`);
  if (cluster) await cluster.stop();
  else await clickhouse.kill();
  for (const s of cluster ? cluster.servers : [clickhouse]) fs.rmSync(s.dir, { recursive: true, force: true });
}
fs.rmSync(dir, { recursive: true, force: true });
if (failures.length > 0) console.log(`FAILED REQUESTS: ${failures.join('; ')}`);
const ok = lost.length === 0 && failures.length === 0 && Object.values(exits).every((c) => c === 0);
process.exit(ok ? 0 : 1);
