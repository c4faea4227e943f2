// `flock /tmp/h3lab.lock node web/scripts/lab_worker_main.mjs [--loads 30] [--rtt 50] [--tiny]`: does moving the core
// into a Worker move the measurement? Through the lab's packet relay at one link, `loads` page loads with the core in
// its Worker, then as many with worker: false (main thread), then an A/A test (h3/h3 on two
// origins) in worker mode. Prints per mode each arm's p50 network_ms and the report's Δ at p50, how far worker and main
// mode are apart (in % of main's), and whether every interval of the A/A test covers 0. Needs the lab (root, network
// namespaces): run it under the lab's lock. --tiny: 4 loads per mode and for the A/A test.
import { parseArgs } from 'node:util';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { labUnavailableReason } from '../lab/createLabNetwork.mjs';
import { formatIntervals, formatLabTable } from '../lab/formatLabTable.mjs';
import { measureSetting } from '../lab/measureSetting.mjs';
import { startLab } from '../lab/startLab.mjs';

const { values: args } = parseArgs({ options: {
  loads: { type: 'string', default: '30' }, rtt: { type: 'string', default: '50' }, tiny: { type: 'boolean', default: false },
} });
const loads = args.tiny ? 4 : Number(args.loads);
const link = { rttMs: Number(args.rtt), loss: 0, seed: 1 };
const unavailable = labUnavailableReason();
if (unavailable) {
  console.error(`lab: ${unavailable}`);
  process.exit(1);
}

const core = await loadH3probeNode();
const lab = await startLab();
let failed = false;
try {
  const browser = await lab.launchBrowser();
  const pooled = {};
  for (const [mode, pageConfig] of [['worker', {}], ['main', { worker: false }]]) {
    pooled[mode] = await measureSetting({ lab, browser, core, link, loads, pageConfig });
    pooled[mode].label = `${mode}: ${pooled[mode].label}`;
  }
  console.log(formatLabTable(Object.values(pooled)));
  const at = (r, p) => r.comparison.rows.find((x) => Math.abs(x.p - p) < 1e-9) ?? {};
  const w = at(pooled.worker, 0.5);
  const m = at(pooled.main, 0.5);
  const pct = (a, b) => (100 * (a - b)) / b;
  console.log(`\nworker vs main at p50: h2 ${pct(w.h2, m.h2).toFixed(1)} %, h3 ${pct(w.h3, m.h3).toFixed(1)} % of main's; ` +
    `Δ(h3-h2) ${w.diff_pct?.toFixed(1)} % in worker mode, ${m.diff_pct?.toFixed(1)} % on the main thread ` +
    `(apart ${(w.diff_pct - m.diff_pct).toFixed(1)} points)`);
  const aa = await measureSetting({ lab, browser, core, link, loads, aa: 'h3' });
  console.log(`\nA/A in worker mode:\n${formatIntervals([aa])}`);
  failed = pooled.worker.runs === 0 || pooled.main.runs === 0 || aa.runs === 0;
} finally {
  await lab.stop();
}
process.exit(failed ? 1 : 0);
