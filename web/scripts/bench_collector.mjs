// `npm run bench:collector`: beacons/s and latency of the collector (WASM validation + SQLite) under load from
// autocannon, each beacon a realistic 13-sample run with its own run_id; then checks that every 2xx beacon is stored.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

const { values: args } = parseArgs({
  options: { beacons: { type: 'string', default: '50000' }, connections: { type: 'string', default: '50' } },
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-bench-collector-'));
const db = path.join(dir, 'beacons.sqlite');

function sample(phase, idx, origin, ms) {
  return { phase, idx, origin, result: 'ok', http_status: 204, protocol: origin, reused: phase !== 'prewarm' || idx > 0,
    network_ms: ms, queue_ms: 0.2, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: ms - 0.5, response_ms: 0.3,
    start_ms: 1200 + idx, fetch_ms: ms + 1.5 };
}
const samples = [sample('prewarm', 0, 'h3', 80), sample('prewarm', 1, 'h3', 40), sample('prewarm', 2, 'h2', 45)];
for (let i = 0; i < 5; i++) samples.push(sample('control', i, 'h2', 40 + i * 3.3), sample('treatment', i, 'h3', 36 + i * 2.9));
const template = { schema: 'h3probe/1', run_id: 'RUNID', page_load_id: 'RUNID', config_id: 'bench', module_version: '0.1.0',
  order: 'h2-first', outcome: 'complete', error: '', run_ms: 210.5, sample_rate: 1, errors: [],
  context: { page_origin: 'https://app.example.com', effective_type: '4g', rtt_ms: 50, downlink_mbps: 10, save_data: false,
    visible_throughout: true, module_load_ms: 20.1, timer_resolution_ms: 0.1 }, samples };
const body = JSON.stringify(template);
console.log(`beacon: ${samples.length} samples, ${body.length} bytes`);

const child = spawn(process.execPath, ['web/bin/h3probe.mjs', 'collector', '--port', '0', '--db', db], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  child.stdout.once('data', (chunk) => resolve(JSON.parse(chunk).listening));
  child.once('exit', (code) => reject(new Error(`collector exited with ${code}`)));
});

let n = 0;
const result = await autocannon({
  url, connections: Number(args.connections), amount: Number(args.beacons),
  requests: [{ method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' },
    setupRequest: (req) => ({ ...req, body: body.replaceAll('RUNID', `bench${(n++).toString(36)}`) }) }],
});
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));

const stored = new Database(db, { readonly: true }).prepare('SELECT count(*) FROM runs').pluck().get();
const ok = result['2xx'];
const seconds = result.duration;
console.log(`collector: ${(ok / seconds).toFixed(0)} beacons/s (${ok} accepted in ${seconds.toFixed(1)} s, ` +
  `${args.connections} connections), latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`);
console.log(`non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}; stored ${stored} runs ` +
  `(${stored === ok ? 'nothing lost' : `LOST ${ok - stored}`})`);
console.log(`budget (docs/design.md): at least half the throughput of a bare Node HTTP server answering 204, nothing lost`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(stored === ok && result.non2xx === 0 ? 0 : 1);
