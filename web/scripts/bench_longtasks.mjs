// `npm run bench:longtasks -- [--loads 20] [--hog-loads 10] [--rate 4] [--tiny]`: the module's cost to the page's main
// thread in Chromium with the CPU slowed down `rate` times: `loads` page loads, each with one search, of each arm (the
// core in its Worker, the core on the main thread with worker: false, and sampleRate 0 as the control), interleaved;
// then `hog-loads` more of each with a CPU hog (a busy process per core) beside the browser. Prints, per arm, the
// module's main-thread ms per load (thread CPU time of the tasks it ran in, longTasks.mjs), long tasks, and long
// animation frames (≥ 50 ms) holding a module script; the load average at the start and end of each round. Exits
// non-zero when a load did not run where its arm says. --tiny: 2 loads, 1 with the hog.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startStack } from '../devstack/stack.mjs';
import { launchBrowser } from '../cli/chromium.mjs';
import { compareLongTasks, LONG_TASK_MS, PROFILE_INTERVAL_US } from '../devstack/longTasks.mjs';

const { values: args } = parseArgs({ options: {
  loads: { type: 'string', default: '20' }, 'hog-loads': { type: 'string', default: '10' }, rate: { type: 'string', default: '4' },
  tiny: { type: 'boolean', default: false },
} });
const loads = args.tiny ? 2 : Number(args.loads);
const hogLoads = args.tiny ? 1 : Number(args['hog-loads']);
const rate = Number(args.rate);
const EXPECTED_CONTEXT = { worker: 'worker', main: 'main', control: '' };

const quantile = (values, p) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};
const load = () => os.loadavg()[0].toFixed(1);

// A busy loop per core, in processes of their own, until stopped.
function startHog() {
  const hogs = os.cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return () => { for (const h of hogs) h.kill('SIGKILL'); };
}

async function round(browser, stack, title, n) {
  const start = load();
  const out = await compareLongTasks(browser, stack, {
    loads: n, rate,
    onLoad(name, i, r) {
      for (const f of r.moduleFrames) {
        const scripts = f.scripts.map((s) => `${s.invoker || '?'} [${s.url ? new URL(s.url).pathname : ''} ${s.fn || ''}] ${Math.round(s.duration)} ms`).join('; ');
        console.log(`${title} ${name} load ${i + 1}: module frame ${Math.round(f.duration)} ms (blocking ${Math.round(f.blocking)} ms): ${scripts}`);
      }
    },
  });
  console.log(`\n${title}: Chromium, CPU throttled ${rate}x, ${n} loads per arm, long = at least ${LONG_TASK_MS} ms; load average ${start} -> ${load()}`);
  console.log('arm      module main-thread ms/load: median  p90   max (wall median) | long tasks | LoAF with a module script: frames (loads), worst | module scripts >= 50 ms');
  let wrong = 0;
  for (const [name, o] of Object.entries(out)) {
    const elsewhere = o.loads.filter((l) => l.state === 'started' && l.runContext !== EXPECTED_CONTEXT[name]).length;
    wrong += elsewhere;
    const states = [...new Set(o.loads.map((l) => l.state))].join(',');
    console.log(`${name.padEnd(8)} ${quantile(o.mainMs, 0.5).toFixed(1).padStart(30)} ${quantile(o.mainMs, 0.9).toFixed(1).padStart(5)} ` +
      `${Math.max(...o.mainMs).toFixed(1).padStart(5)} (${quantile(o.mainWallMs, 0.5).toFixed(1).padStart(5)}) | ${String(o.longtasks).padStart(10)} | ${String(o.moduleFrames).padStart(12)} (${o.loadsWithModuleFrame}), ` +
      `${Math.round(o.worstFrameMs)} ms | ${o.moduleScripts} (states ${states}${elsewhere ? `; ${elsewhere} ran elsewhere` : ''})`);
  }
  return wrong;
}

const stack = await startStack();
const browser = await launchBrowser(stack);
let wrong = 0;
try {
  console.log(`main-thread ms: thread CPU time of the page's tasks (trace RunTask tdur), each weighted by its share of CPU-profile samples (${PROFILE_INTERVAL_US} µs) with a module frame (under /h3probe/ or WebAssembly) on the stack; wall: the same over wall time`);
  wrong += await round(browser, stack, 'quiet', loads);
  if (hogLoads > 0) {
    const stopHog = startHog();
    try {
      wrong += await round(browser, stack, `with a CPU hog (${os.cpus().length} busy processes)`, hogLoads);
    } finally {
      stopHog();
    }
  }
} finally {
  await browser.close();
  await stack.stop();
}
if (wrong) {
  console.error(`${wrong} load(s) ran the core elsewhere than their arm says`);
  process.exit(1);
}
