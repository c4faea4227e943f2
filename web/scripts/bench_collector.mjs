// `npm run bench:collector`: the collector's throughput as a share of a bare Node HTTP server that answers 204, both
// measured by this one script in one run, with autocannon at the same connections and duration, alternating rounds
// (bare, collector, bare, collector, ...) so drift in the machine's load hits both. The collector runs as deployed
// (`h3probe collector`, its SQLite store, the WASM decoder), fed distinct realistic beacons (syntheticBeacons, each
// with its own run_id); afterwards every beacon answered 2xx must be in the database.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { syntheticBeacons } from '../devstack/syntheticBeacons.mjs';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1' },
    tiny: { type: 'boolean', default: false }, // npm test: the same path at a size that finishes in seconds
  },
});
if (args.tiny) Object.assign(args, { connections: '10', duration: '1', rounds: '1', warmup: '1' });
const connections = Number(args.connections);
const duration = Number(args.duration);
const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-bench-collector-'));
const db = path.join(dir, 'beacons.sqlite');

// A pool of distinct beacons; each request takes the next one with a fresh run_id, so none is a duplicate.
const pool = [...syntheticBeacons({ runs: 1000, seed: 7 })].map(({ beacon }) => JSON.stringify(beacon).split(beacon.run_id));
let sent = 0;
const nextBeacon = () => {
  const parts = pool[sent % pool.length];
  return parts.join(`bench-${(sent++).toString(36)}`);
};
const bytes = nextBeacon().length;

// The bare server: its own process, like the collector, so neither shares an event loop with autocannon.
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
      const line = buf.split('\n').find((l) => l.includes('"port"') || l.includes('"listening"'));
      if (line) resolve(JSON.parse(line).port ?? Number(new URL(JSON.parse(line).listening).port));
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

function load(port, seconds, beacons) {
  return autocannon({
    url: `http://127.0.0.1:${port}/beacon`, connections, duration: seconds,
    requests: [{ method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' },
      setupRequest: (req) => ({ ...req, body: beacons ? nextBeacon() : 'x'.repeat(bytes) }) }],
  });
}

const bare = start(['-e', BARE]);
const collector = start(['web/bin/h3probe.mjs', 'collector', '--port', '0', '--db', db, '--workers', args.workers]);
const ports = { bare: await bare.port, collector: await collector.port };

const loadBefore = os.loadavg();
await load(ports.bare, Number(args.warmup), false);
const warm = await load(ports.collector, Number(args.warmup), true);
const results = { bare: [], collector: [] };
let accepted = 0;
for (let round = 0; round < Number(args.rounds); round++) {
  for (const side of ['bare', 'collector']) {
    const r = await load(ports[side], duration, side === 'collector');
    results[side].push(r);
    console.log(`round ${round + 1} ${side.padEnd(9)}: ${(r['2xx'] / r.duration).toFixed(0)} req/s, p50 ${r.latency.p50} ms, ` +
      `p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, load ${os.loadavg()[0].toFixed(2)}`);
  }
}
const loadAfter = os.loadavg();
await stop(bare.child);
const collectorExit = await stop(collector.child);

const sum = (list, f) => list.reduce((a, r) => a + f(r), 0);
const rate = (side) => sum(results[side], (r) => r['2xx']) / sum(results[side], (r) => r.duration);
const median = (side, k) => results[side].map((r) => r.latency[k]).sort((a, b) => a - b)[Math.floor(results[side].length / 2)];
for (const r of results.collector) accepted += r['2xx'];
const stored = new Database(db, { readonly: true }).prepare('SELECT count(*) FROM runs').pluck().get();
const bareRate = rate('bare');
const collectorRate = rate('collector');
const ratio = collectorRate / bareRate;

console.log(`\nbeacon ${bytes} bytes; ${connections} connections, ${args.rounds} × ${duration} s per side, collector workers ${args.workers}; ` +
  `${os.cpus().length} CPUs (${os.cpus()[0].model}), node ${process.version}`);
console.log(`bare node http (204):   ${bareRate.toFixed(0)} req/s, p50 ${median('bare', 'p50')} ms, p99 ${median('bare', 'p99')} ms`);
console.log(`h3probe collector:      ${collectorRate.toFixed(0)} beacons/s, p50 ${median('collector', 'p50')} ms, p99 ${median('collector', 'p99')} ms`);
console.log(`ratio collector / bare: ${(100 * ratio).toFixed(1)} % (target ≥ 50 %)`);
console.log(`load average (1/5/15 min): before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
// Every 2xx (warm-up included) must be stored; a few more may be, whose answers autocannon cut at the end of a round.
const acked = accepted + warm['2xx'];
const lost = stored < acked;
console.log(`stored ${stored} runs for ${acked} answered 2xx (${sent} sent); collector exit ${collectorExit}; ` +
  `${lost ? `LOST ${acked - stored} BEACONS` : 'nothing lost'}`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(!lost && collectorExit === 0 && results.collector.every((r) => r.non2xx === 0) ? 0 : 1);
