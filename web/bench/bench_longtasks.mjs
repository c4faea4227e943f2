// `npm run bench:longtasks -- [--loads 20] [--hog-loads 20] [--rate 4] [--arms worker,main,control,floor] [--compare DIR]…
// [--untraced] [--tiny]`: the module's cost to the page's main thread in Chromium with the CPU slowed down `rate` times: `loads` page
// loads, each with one search, of each arm (the core in its Worker, the core on the main thread with worker: false,
// sampleRate 0 as the control, and the floor: a Worker that makes the probe's requests without the core),
// interleaved, each load traced (a trace and a CPU profile) and followed by an untraced one; then `hog-loads` more of
// each with a CPU hog (a busy process per core) beside the browser. Prints, per arm, the module's main-thread ms per
// load (traced: thread CPU time of the tasks it ran in, longTasks.mjs) and its difference to the control's, long tasks
// and long animation frames (≥ 50 ms) holding a module script in traced and in untraced loads (the budget's count),
// and the module's tasks by what they were; the load average at the start and end of each round. --compare DIR (repeatable): one more arm per DIR, named after the folder, the Worker arm of another
// build of the module (a web/dist folder, e.g. saved from main), served by a stack and browser of its own and loaded in
// turn with the others, so that a change is measured against its base in the same minutes. --untraced: the untraced
// loads alone, for the frames' count (a rate of a few in 20 loads needs more loads to tell two arms apart; Wilson's
// interval of each arm's loads with a module frame says how far apart). Exits non-zero when a load did not run where its
// arm says. --tiny: 2 loads, 1 with the hog.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStack } from '../stack/stack.mjs';
import { launchBrowser } from '../cli/chromium.mjs';
import { ARMS, compareLongTasks, FLOOR_MODULE, LONG_TASK_MS, PROFILE_INTERVAL_US, tasksByLabel, unseenRequests } from './longTasks.mjs';
import { quantile, wilson } from './stats.mjs';

// Where the module's main-thread time goes, traced under throttling: an attribution, not the budget's count (CPU taken
// under throttling includes the throttler's own spin; the budget is bench:mainthread's, by the OS at 1x). The long
// animation frames' budget is counted in loads without the trace and the profiler, reported, not asserted: timings on
// a shared machine are no test.

const { values: args } = parseArgs({ options: {
  loads: { type: 'string', default: '20' }, 'hog-loads': { type: 'string', default: '20' }, rate: { type: 'string', default: '4' },
  arms: { type: 'string', default: Object.keys(ARMS).join(',') }, compare: { type: 'string', multiple: true, default: [] },
  untraced: { type: 'boolean', default: false }, tiny: { type: 'boolean', default: false },
} });
const loads = args.tiny ? 2 : Number(args.loads);
const hogLoads = args.tiny ? 1 : Number(args['hog-loads']);
const rate = Number(args.rate);
const arms = Object.fromEntries(args.arms.split(',').map((name) => {
  if (!ARMS[name]) throw new Error(`--arms: unknown arm "${name}"; arms: ${Object.keys(ARMS).join(', ')}`);
  return [name, ARMS[name]];
}));
const compared = args.compare.map((dir) => [path.basename(path.resolve(dir)), path.resolve(dir)]);
for (const [name] of compared) {
  if (ARMS[name] || arms[name]) throw new Error(`--compare ${name}: the name of an arm (rename the folder)`);
  arms[name] = { config: {}, target: name };
}
const EXPECTED_CONTEXT = { main: 'main', control: '', floor: '' }; // any other arm: the Worker (the floor stores no run)

// Rows of the tasks table per arm; the rest are added up in one.
const TABLE_ROWS = 10;
const load = () => os.loadavg()[0].toFixed(1);
const f1 = (x) => x.toFixed(1);

// A busy loop per core, in processes of their own, until stopped.
function startHog() {
  const hogs = os.cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return () => { for (const h of hogs) h.kill('SIGKILL'); };
}

async function round(targets, title, n) {
  const start = load();
  // Per arm, every load's state, and how many ran the core elsewhere than the arm says (traced or not).
  const placed = Object.fromEntries(Object.keys(arms).map((name) => [name, { states: new Set(), elsewhere: 0 }]));
  const out = await compareLongTasks(targets, {
    loads: n, rate, arms, untracedOnly: args.untraced,
    onLoad(name, i, r, traced) {
      placed[name].states.add(r.state);
      if (r.state === 'started' && r.runContext !== (EXPECTED_CONTEXT[name] ?? 'worker')) placed[name].elsewhere += 1;
      for (const f of r.moduleFrames) {
        const scripts = f.scripts.map((s) => `${s.invoker || '?'} [${s.url ? new URL(s.url).pathname : ''} ${s.fn || ''}] ${Math.round(s.duration)} ms`).join('; ');
        console.log(`${title} ${name} load ${i + 1}${traced ? ', traced' : ''}: module frame ${Math.round(f.duration)} ms (blocking ${Math.round(f.blocking)} ms): ${scripts}`);
      }
      // Whether such a frame was the module's work or the thread waiting for a CPU: each message's CPU against its wall.
      const messages = traced && r.moduleFrames.length ? r.tasks.filter((t) => t.label.startsWith('worker message')) : [];
      if (messages.length) console.log(`  the load's Worker messages, thread CPU / wall ms: ${messages.map((t) => `${t.ms.toFixed(1)}/${t.wallMs.toFixed(1)}`).join(', ')}`);
    },
  });
  console.log(`\n${title}: Chromium, CPU throttled ${rate}x, ${args.untraced ? '' : `${n} traced loads per arm and `}${n} untraced, long = at least ${LONG_TASK_MS} ms; load average ${start} -> ${load()}`);
  let wrong = 0;
  for (const [name, { states, elsewhere }] of Object.entries(placed)) {
    wrong += elsewhere;
    console.log(`${name}: states ${[...states].join(',')}${elsewhere ? `; ${elsewhere} ran elsewhere` : ''}`);
  }
  if (!args.untraced) {
    console.log('arm      module main-thread ms/load: median  p90   max (wall median) [samples alone] | traced loads: long tasks | LoAF with a module script: frames (loads), worst | module scripts >= 50 ms');
    for (const [name, o] of Object.entries(out)) {
      console.log(`${name.padEnd(8)} ${f1(quantile(o.mainMs, 0.5)).padStart(30)} ${f1(quantile(o.mainMs, 0.9)).padStart(5)} ` +
        `${f1(Math.max(...o.mainMs)).padStart(5)} (${f1(quantile(o.mainWallMs, 0.5)).padStart(5)}) [${f1(quantile(o.shareMs, 0.5)).padStart(5)}] | ${String(o.longtasks).padStart(10)} | ${String(o.moduleFrames).padStart(12)} (${o.loadsWithModuleFrame}), ` +
        `${Math.round(o.worstFrameMs)} ms | ${o.moduleScripts}`);
    }
  }
  // The frames' budget is counted in the untraced loads: a page as users run it, without the profiler's sampling.
  // Each count of loads with Wilson's 95 % interval of its rate. Any LoAF after the search: whatever it held (the page's
  // results, the module, or a thread waiting for a CPU), the rate the module's frames are read against.
  console.log('arm      untraced loads: long tasks | any LoAF after the search: loads with one [95 %] | LoAF with a module script: frames, loads with one [95 %], worst | module scripts >= 50 ms | budget: no such frame');
  const share = (k, of) => `${k} of ${of} [${wilson(k, of).map((x) => `${Math.round(100 * x)} %`).join(', ')}]`;
  for (const [name, { untraced: u }] of Object.entries(out)) {
    console.log(`${name.padEnd(8)} ${String(u.longtasks).padStart(26)} | ${share(u.loadsWithFrameAfterSearch, u.counted).padStart(47)} | ${String(u.moduleFrames).padStart(6)}, ` +
      `${share(u.loadsWithModuleFrame, u.counted)}, ${Math.round(u.worstFrameMs)} ms | ${String(u.moduleScripts).padStart(23)} | ${name === 'control' ? '' : u.moduleFrames ? 'not met' : 'met'}`);
  }
  if (args.untraced) return wrong;
  if (out.control) {
    for (const name of Object.keys(out).filter((a) => a !== 'control')) {
      const above = quantile(out[name].mainMs, 0.5) - quantile(out.control.mainMs, 0.5);
      console.log(`${name}: median ${f1(above)} ms per load above the control's (traced attribution; the budget is ` +
        `bench:mainthread's); load average ${load()}`);
    }
  }
  if (out.floor) {
    for (const l of unseenRequests(out.floor.loads)) {
      console.error(`floor load ${l.load}: its Worker made ${l.requests} requests, and the trace showed ${l.reported} tasks reporting them to the page`);
      wrong += 1;
    }
    // What an arm adds to the floor: the part a change to the module can remove (the floor is any Worker's).
    for (const name of Object.keys(out).filter((a) => a !== 'control' && a !== 'floor')) {
      console.log(`${name}: median ${f1(quantile(out[name].mainMs, 0.5) - quantile(out.floor.mainMs, 0.5))} ms per load above the floor's`);
    }
  }
  for (const [name, o] of Object.entries(out)) {
    console.log(`\n${name}: the module's main-thread tasks by what they were, ms per load (thread CPU; a load without such a task counts 0)`);
    console.log('task                                    loads  tasks/load   median    p90   mean | parts: median ms per load');
    const rows = tasksByLabel(o.loads);
    const rest = rows.slice(TABLE_ROWS);
    if (rest.length) rows.splice(TABLE_ROWS, rest.length, { label: `${rest.length} other labels`, loads: NaN, perLoad: NaN, ms: NaN, p90: NaN,
      mean: rest.reduce((a, r) => a + r.mean, 0), parts: {} });
    for (const t of rows) {
      const parts = Object.entries(t.parts).map(([part, ms]) => `${part} ${ms.toFixed(2)}`).join(', ');
      const cell = (x, width, digits = 0) => (Number.isNaN(x) ? '' : x.toFixed(digits)).padStart(width);
      console.log(`${t.label.slice(0, 38).padEnd(38)} ${cell(t.loads, 6)} ${cell(t.perLoad, 11)} ${cell(t.ms, 8, 2)} ` +
        `${cell(t.p90, 6, 2)} ${cell(t.mean, 6, 2)} | ${parts}`);
    }
  }
  return wrong;
}

const targets = {};
const stopAll = async () => {
  for (const t of Object.values(targets)) {
    await t.browser?.close();
    await t.stack?.stop();
  }
};
let wrong = 0;
try {
  const floor = Object.values(arms).some((a) => a.target === 'floor') ? [['floor', FLOOR_MODULE]] : [];
  for (const [name, module] of [['base', undefined], ...floor, ...compared]) {
    const stack = await startStack(module ? { roots: { module } } : {});
    targets[name] = { stack };
    targets[name].browser = await launchBrowser(stack);
  }
  if (!args.untraced) console.log([
    "main-thread ms: thread CPU time of the page's tasks (trace RunTask tdur), counted as follows:",
    "  a message from the module's Worker: whole, less its samples of the page's own script;",
    '  a task Chromium runs on the page for the Worker (its requests reported to the page, its start, its bookkeeping): the same;',
    '  a compilation of a module script: whole;',
    `  any other task: by its share of CPU-profile samples (${PROFILE_INTERVAL_US} µs) with a module frame (under /h3probe/ or WebAssembly) on the stack.`,
    'wall: the same over wall time; [samples alone]: every task by its share of samples with a module frame.',
    ...compared.map(([name, dir]) => `"${name}": the Worker arm of ${dir}.`),
  ].join('\n'));
  wrong += await round(targets, 'quiet', loads);
  if (hogLoads > 0) {
    const stopHog = startHog();
    try {
      wrong += await round(targets, `with a CPU hog (${os.cpus().length} busy processes)`, hogLoads);
    } finally {
      stopHog();
    }
  }
} finally {
  await stopAll();
}
if (wrong) {
  console.error(`${wrong} load(s) ran the core elsewhere than their arm says, or hid the floor's requests from the count`);
  process.exit(1);
}
