// `npm run bench:mainthread -- [--rounds 16] [--window-ms 1500] [--arms worker,main,plainjs,floor] [--tiny]`: the page's
// main-thread CPU as the operating system counts it, at 1× (no CPU throttling): in Chromium's renderer the main thread
// is the thread whose id is the process id, and /proc/PID/task/PID/schedstat's first field is its CPU time in ns. Each
// load counts one fixed window from the search's Enter, with nothing polled inside the page during it. Per round, one
// load of each arm in a shuffled order: control (sampleRate 0: the gate loads and stops), the module in its Worker
// (worker), the module on the main thread (main: worker false), the anchor (plainjs: the same experiment in plain
// JavaScript on the main thread, web/bench/plainjs), and the floor (floor: a Worker that makes the probe's requests
// without the core, web/bench/floor: the least any design with a dedicated Worker costs the page). Prints each
// arm's paired median above the control (the control of the same round) with a bootstrap 95% interval, its ratio to
// the anchor's, and the load average at start and end. The traced attribution at 4× is bench:longtasks'. --tiny: 1 round.
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startStack } from '../stack/stack.mjs';
import { launchBrowser } from '../cli/chromium.mjs';
import { experimentUrl } from '../launch/pageLoad.mjs';
import { FLOOR_MODULE } from './longTasks.mjs';
import { quantile } from './stats.mjs';

const ARMS = Object.freeze({
  control: { config: { sampleRate: 0 }, target: 'base', context: '' },
  worker: { config: {}, target: 'base', context: 'worker' },
  main: { config: { worker: false }, target: 'base', context: 'main' },
  plainjs: { config: {}, target: 'plainjs', context: 'main' },
  floor: { config: {}, target: 'floor', context: 'worker' },
});
// The fixtures served at /h3probe/ in place of web/dist, by target.
const FIXTURES = { plainjs: new URL('./plainjs/', import.meta.url).pathname, floor: FLOOR_MODULE };

const { values: args } = parseArgs({ options: {
  rounds: { type: 'string', default: '16' }, 'window-ms': { type: 'string', default: '1500' },
  arms: { type: 'string', default: 'worker,main,plainjs,floor' }, tiny: { type: 'boolean', default: false },
} });
const rounds = args.tiny ? 1 : Number(args.rounds);
const windowMs = Number(args['window-ms']);
const names = ['control', ...args.arms.split(',').filter((n) => n !== 'control')];
for (const name of names) if (!ARMS[name]) throw new Error(`--arms: unknown arm "${name}"; arms: ${Object.keys(ARMS).join(', ')}`);
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

// The renderer processes of this browser, by id.
async function renderers(cdp) {
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  return processInfo.filter((p) => p.type === 'renderer').map((p) => p.id);
}
// When a process started (clock ticks since boot: /proc/PID/stat's 22nd field, counted after the command's parentheses).
const startTime = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]);
// CPU ns of a renderer's main thread so far.
const mainThreadNs = (pid) => Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);

async function oneLoad(target, arm) {
  const context = await target.browser.newContext();
  try {
    const page = await context.newPage();
    // The page's renderer: the one its navigation started last (a new page's about:blank, and a context's first
    // navigation, can start others).
    await page.goto(experimentUrl(target.stack, arm.config), { waitUntil: 'load' });
    const pid = (await renderers(target.cdp)).sort((x, y) => startTime(y) - startTime(x) || y - x)[0];
    await page.fill('#query', 'quarterly report');
    const before = mainThreadNs(pid);
    await page.press('#query', 'Enter');
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const ms = (mainThreadNs(pid) - before) / 1e6;
    const status = await page.evaluate(() => window.h3probeStatus());
    const beacon = status.beacon ? JSON.parse(status.beacon) : null;
    const ranIn = FIXTURES[arm.target] ? status.runContext : beacon?.context?.run_context ?? '';
    return { ms, state: status.state, run: status.run, ranIn };
  } finally {
    await context.close();
  }
}

function shuffled(list) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

// The median and a percentile bootstrap 95% interval of it.
function medianWithInterval(xs, resamples = 4000) {
  const medians = [];
  for (let r = 0; r < resamples; r++) medians.push(quantile(Array.from(xs, () => xs[Math.floor(Math.random() * xs.length)]), 0.5));
  return [quantile(xs, 0.5), quantile(medians, 0.025), quantile(medians, 0.975)];
}

const targets = {};
let wrong = 0;
try {
  for (const name of new Set(names.map((n) => ARMS[n].target))) {
    const module = FIXTURES[name];
    const stack = await startStack(module ? { roots: { module } } : {});
    // No spare renderer: Chromium would start one in the window of a load, and its start would count.
    const browser = await launchBrowser(stack, { extra: ['--disable-features=SpareRendererForSitePerProcess'] });
    targets[name] = { stack, browser, cdp: await browser.newBrowserCDPSession() };
  }
  // One load of each target first, not counted: the first load pays for caches the others find warm.
  for (const name of names) await oneLoad(targets[ARMS[name].target], ARMS[name]);
  const start = load();
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of shuffled(names)) {
      const arm = ARMS[name];
      const result = await oneLoad(targets[arm.target], arm);
      if (result.ranIn !== arm.context) {
        wrong++;
        console.log(`round ${r + 1} ${name}: ran in "${result.ranIn}" (state ${result.state}), not "${arm.context}"`);
      }
      ms[name].push(result.ms);
    }
  }
  console.log(`main-thread CPU by the OS (renderer main thread, schedstat), Chromium at 1x, one ${windowMs} ms window from the search, ` +
    `${rounds} rounds, arms shuffled per round; load average ${start} -> ${load()}`);
  const f1 = (x) => (x >= 0 ? '+' : '') + x.toFixed(1);
  const above = Object.fromEntries(names.map((n) => [n, ms[n].map((x, i) => x - ms.control[i])]));
  const anchor = names.includes('plainjs') ? quantile(above.plainjs, 0.5) : NaN;
  console.log('arm       main thread ms: median (all)   above the control: paired median [95% bootstrap]   / plainjs');
  for (const name of names) {
    const [m, lo, hi] = medianWithInterval(above[name]);
    const cells = name === 'control' ? '' : `${f1(m).padStart(8)} [${f1(lo)}, ${f1(hi)}]${Number.isNaN(anchor) ? '' : `   ${(m / anchor).toFixed(2)}`}`;
    console.log(`${name.padEnd(9)} ${quantile(ms[name], 0.5).toFixed(1).padStart(22)}         ${cells}`);
  }
  console.log('Budget: the module\'s (worker) median above the control <= 1/4 of plainjs\'s. The traced attribution at 4x: npm run bench:longtasks.');
} finally {
  for (const t of Object.values(targets)) {
    await t.browser?.close();
    await t.stack?.stop();
  }
}
if (wrong) {
  console.error(`${wrong} load(s) ran elsewhere than their arm says`);
  process.exit(1);
}
