// `npm run bench:calibration`: A/A experiments through the collector's real path, as a team would run them: beacons with
// heavy-tailed regional mixes POSTed to startCollector() over HTTP into a SQLite store, each experiment read with the
// report's JSON (makeReport, as `h3probe report --arms h2-h2 --json`). Prints, over every cell with an interval, the SD
// of Δ / SE (1 for a calibrated instrument) and the share of 95 % intervals that exclude 0 (5 %), and the share of
// reports with a Benjamini-Hochberg discovery (budget: at most 5 %, docs/design.md R9). The calibration table of the
// simulated models is `npm run calibration:r9` (and the frozen suite, `npm run calibration`).
// Options: --experiments N (default 60), --runs N per experiment (default 1500), --seed S, --tiny (2 experiments of
// 200 runs: the same path in seconds, for npm test). Exits nonzero when a beacon is refused or the path breaks.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { openStore } from '../server/store.mjs';
import { startCollector } from '../server/collector.mjs';
import { makeReport } from '../report/makeReport.mjs';
import { mulberry32 } from '../synthetic/syntheticBeacons.mjs';
import { wilson } from './stats.mjs';

const { values: args } = parseArgs({
  options: {
    experiments: { type: 'string', default: '60' }, runs: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '1' }, tiny: { type: 'boolean', default: false },
  },
});
const experiments = args.tiny ? 2 : Number(args.experiments);
const runsPerExperiment = args.tiny ? 200 : Number(args.runs);
if (!(experiments >= 1) || !(runsPerExperiment >= 10)) throw new Error('--experiments must be at least 1 and --runs at least 10');

// The field's regions (share of runs, median ms, share of lossy runs), as the synthetic field data has them: groups
// of about 10 to 800 runs in a 1,500-run experiment, beside the overall group.
const REGIONS = [
  ['US', 0.55, 60, 0.06], ['DE', 0.25, 120, 0.08], ['JP', 0.15, 180, 0.14], ['MX', 0.02, 100, 0.10],
  ['BR', 0.015, 160, 0.12], ['AU', 0.008, 200, 0.08], ['ZA', 0.007, 220, 0.15],
];
// The networks a region mixes (share, latency factor, request sigma factor): fixed lines, cable, mobile.
const NETWORKS = [[0.55, 0.6, 0.8], [0.30, 1.2, 1.0], [0.15, 3.0, 1.5]];
const PER_ARM = 5;
// Per request, the share that yields no value (a timeout, no timing entry): fewer usable requests in an arm.
const FAILED = 0.01;

function pickRegion(rand) {
  let u = rand();
  for (const r of REGIONS) if ((u -= r[1]) < 0) return r;
  return REGIONS.at(-1);
}

function pickNetwork(rand) {
  let u = rand();
  for (const n of NETWORKS) if ((u -= n[0]) < 0) return n;
  return NETWORKS.at(-1);
}

// One run's beacon: both arms drawn alike (an A/A test), each with its own state within the run on top of the run's
// region, network and run effect, a Pareto tail on single requests, and in a lossy run a stall that holds every
// request of an arm (head-of-line blocking). Values at the browser's 0.1 ms resolution, as a page reports them.
function beaconOf(rand, normal, e, i) {
  const [country, , median, lossy] = pickRegion(rand);
  const [, factor, sigmaFactor] = pickNetwork(rand);
  const runEffect = 0.4 * normal();
  const isLossy = rand() < lossy;
  const samples = [];
  for (const phase of ['control', 'treatment']) {
    const armState = 0.2 * normal();
    const stall = isLossy && rand() < 0.6 ? median * (1 + 2 * -Math.log(1 - rand())) : 0;
    for (let idx = 0; idx < PER_ARM; idx++) {
      let ms = median * factor * Math.exp(runEffect + armState + 0.35 * sigmaFactor * normal()) + stall;
      if (rand() < 0.08) ms += 40 * (1 - rand()) ** (-1 / 1.5);
      const ok = rand() >= FAILED;
      const v = ok ? Math.round(ms * 10) / 10 : null;
      samples.push({
        phase, idx, origin: 'h2', result: ok ? 'ok' : 'timeout', http_status: ok ? 204 : 0, protocol: ok ? 'h2' : '',
        reused: ok ? true : null, network_ms: v, queue_ms: ok ? 0.1 : null, dns_ms: ok ? 0 : null, connect_ms: ok ? 0 : null,
        tls_ms: ok ? 0 : null, request_ms: ok ? Math.round(Math.max(0, v - 0.1) * 9) / 10 : null,
        response_ms: ok ? Math.round(Math.max(0, v - 0.1)) / 10 : null, start_ms: 1000 + samples.length,
        fetch_ms: ok ? Math.round((v + 0.8) * 10) / 10 : null,
      });
    }
  }
  const beacon = { schema: 'h3probe/1', run_id: `aa-${e}-${String(i).padStart(6, '0')}`, page_load_id: `pl-${e}-${i}`,
    config_id: 'aa', module_version: '0.1.0', order: rand() < 0.5 ? 'h2-first' : 'h3-first', arms: 'h2-h2', outcome: 'complete',
    error: '', run_ms: 400, sample_rate: 1,
    context: { page_origin: 'https://app.example.com', effective_type: '4g', rtt_ms: median, downlink_mbps: 10, save_data: false,
      visible_throughout: true, module_load_ms: 20, timer_resolution_ms: 0.1 },
    errors: [], samples };
  return { country, body: JSON.stringify(beacon) };
}

function post(agent, port, country, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/beacon', method: 'POST', agent,
      headers: { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), 'cf-ipcountry': country } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 || res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const core = await loadH3probeNode();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-aa-'));
const cells = [];  // { z, excludes } over every cell with an interval
let reportsWithDiscovery = 0, groupsSeen = 0;
const discoveries = [];  // experiment: group, percentile
const t0 = performance.now();
try {
  for (let e = 0; e < experiments; e++) {
    const dbPath = path.join(dir, `aa-${e}.sqlite`);
    const store = openStore(dbPath, core);
    const collector = await startCollector({ store, core, rateLimit: 1e9, rateBurst: 1e9,
      location: { trustedProxies: '127.0.0.1', countryHeaders: ['cf-ipcountry'] } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const rand = mulberry32(Number(args.seed) * 1_000_003 + e);
      const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
      let pending = [];
      for (let i = 0; i < runsPerExperiment; i++) {
        const { country, body } = beaconOf(rand, normal, e, i);
        pending.push(post(agent, collector.port, country, body));
        if (pending.length === 32) { await Promise.all(pending); pending = []; }
      }
      await Promise.all(pending);
      await collector.waitForRuns(runsPerExperiment, 60_000);
    } finally {
      agent.destroy();
      await collector.close();
      store.close();
    }
    const jsonPath = path.join(dir, `aa-${e}.json`);
    await makeReport(core, { dbPath, arms: 'h2-h2', jsonPath });
    const report = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
    let discovery = false;
    for (const group of report.groups) {
      groupsSeen++;
      for (const row of group.analysis?.rows ?? []) {
        discovery ||= row.discovery === true;
        if (row.discovery === true) discoveries.push(`${e}: ${group.name} p${row.p * 100} (${group.runs} runs, q ${row.q_value.toPrecision(2)})`);
        if (!(Number.isFinite(row.se_ms) && row.se_ms > 0 && Number.isFinite(row.ci_ms?.[0]))) continue;
        cells.push({ z: row.diff_ms / row.se_ms, excludes: row.significant, p: row.p, pValue: row.p_value });
      }
    }
    reportsWithDiscovery += discovery;
    fs.rmSync(dbPath, { force: true });
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const n = cells.length;
if (n === 0) {
  console.error('no cell with an interval: the reports hold no figure to judge');
  process.exit(1);
}
const sdOf = (zs) => {
  const m = zs.reduce((s, z) => s + z, 0) / zs.length;
  return Math.sqrt(zs.reduce((s, z) => s + (z - m) ** 2, 0) / Math.max(1, zs.length - 1));
};
// Wilson's 95 % interval, in %: 60 reports know a 5 % rate to within several points.
const wilsonPercent = (k, m) => wilson(k, m).map((x) => (100 * x).toFixed(1)).join('–') + ' %';
const excluding = cells.filter((c) => c.excludes).length;
console.log(`A/A through the collector: ${experiments} experiments of ${runsPerExperiment} runs, ${groupsSeen} groups, ${n} cells with an interval`);
console.log(`SD of Δ / SE: ${sdOf(cells.map((c) => c.z)).toFixed(3)} (calibrated: 1); 95 % intervals excluding 0: ` +
  `${(100 * excluding / n).toFixed(2)} % (5 %)`);
console.log(`reports with a Benjamini-Hochberg discovery: ${reportsWithDiscovery} of ${experiments} ` +
  `(${(100 * reportsWithDiscovery / experiments).toFixed(1)} %, 95 % interval ${wilsonPercent(reportsWithDiscovery, experiments)}; budget ≤ 5 %)`);
// The tail Benjamini-Hochberg reads: a report's smallest p-values, near 0.05 / cells.
const below = (a) => `${(100 * cells.filter((c) => c.pValue < a).length / n).toFixed(2)} %`;
console.log(`cells with p < 0.01: ${below(0.01)} (1 %), p < 0.001: ${below(0.001)} (0.1 %)`);
if (discoveries.length) console.log(`discoveries: ${discoveries.join('; ')}`);
for (const p of [...new Set(cells.map((c) => c.p))].sort()) {
  const at = cells.filter((c) => c.p === p);
  console.log(`  p${p * 100}: ${at.length} cells, SD of Δ / SE ${sdOf(at.map((c) => c.z)).toFixed(3)}, ` +
    `excluding 0 ${(100 * at.filter((c) => c.excludes).length / at.length).toFixed(2)} %`);
}
console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
