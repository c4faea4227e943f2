// Main-thread cost of the module: page loads in Chromium with the CPU slowed down (CDP Emulation.setCPUThrottlingRate),
// each with one search, recording every long task (≥ 50 ms), every long animation frame with the scripts it ran, and
// the module's main-thread time (a trace of the page's tasks and a CPU profile: moduleMainThreadMs). A frame counts against the module when one of its scripts was served under
// /h3probe/ (the gate, the run, the worker module run on the main thread, the glue) or is the WebAssembly code; a
// control with sampleRate 0 (the module loads its gate and stops) shows the page's own.
import { openPage } from '../cli/chromium.mjs';
import { experimentUrl } from '../launch/pageLoad.mjs';
import { quantile } from './stats.mjs';

export const LONG_TASK_MS = 50;
// The profiler's sampling interval: the module's main-thread time is counted in steps of this size.
export const PROFILE_INTERVAL_US = 100;

// Runs in the page before its scripts: observers for long tasks and long animation frames, buffered in a global.
function observeLongTasks() {
  const seen = { longtasks: [], frames: [], searchAt: Infinity };
  window.__h3probeLongTasks = seen;
  // When the search was submitted: the frames from then on are the run's (and the page's results).
  addEventListener('submit', () => { seen.searchAt = Math.min(seen.searchAt, performance.now()); }, true);
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) seen.longtasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        seen.frames.push({
          start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
          scripts: (e.scripts || []).map((s) => ({
            url: s.sourceURL, fn: s.sourceFunctionName, invoker: s.invoker, duration: s.duration, type: s.invokerType,
          })),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch {}
}

function servedUnderModule(url) {
  try {
    return new URL(url).pathname.startsWith('/h3probe/');
  } catch {
    return false;
  }
}
const moduleScript = (s) => servedUnderModule(s.url) || /^wasm|WebAssembly/.test(s.url || '');

// Trace events (on the page's main thread, inside a task) that say what the task did for the module.
const COMPILE = /^v8\.compile/; // v8.compileModule, v8.compile: a script's compilation
const MESSAGE = 'HandlePostMessage'; // a message from a Worker (the page's only Worker is the module's) and its handler
const MESSAGE_POSTED_FROM = 'PostMessageToWorkerObject'; // the same task, told by where it was posted from (toplevel)
// toplevel: each task with where it was posted from; mojom: the interface of each IPC message a task received;
// devtools.timeline: script compilation and evaluation, function calls, messages; blink: postMessage's
// (de)serialization and the start of each request.
const TRACE_CATEGORIES = 'toplevel,mojom,devtools.timeline,disabled-by-default-devtools.timeline,blink';
// What Chromium itself does on the page's main thread because the page has a dedicated Worker, with no script on the
// stack, so that neither a module frame nor a message finds it: by the IPC interface a task received, or by the
// Blink file that posted it (src_file of the toplevel task). The page in this benchmark starts no Worker of its own,
// and the control none at all, so each such task is the module's.
export const WORKER_ENGINE_TASKS = Object.freeze({
  // Each request a dedicated worker makes (the core's, and the loads of worker.js, the glue and the .wasm) is reported
  // to its frame, on the frame's main thread: a response received, a load completed.
  'blink.mojom.ResourceLoadInfoNotifier': 'Chromium: the Worker\'s requests reported to the page',
  'blink.mojom.DedicatedWorkerHostFactoryClient': 'Chromium: the Worker started',
  // The Worker's use counters, its Resource Timing entries mirrored to the page, its top-level script evaluated, its
  // end: posted to the page's main thread by Blink's worker proxies.
  'threaded_object_proxy_base.cc': 'Chromium: the Worker\'s bookkeeping',
  'dedicated_worker_object_proxy.cc': 'Chromium: the Worker\'s bookkeeping',
  'worker_resource_timing_notifier_impl.cc': 'Chromium: the Worker\'s bookkeeping',
});
// A task: the outermost task event of the main thread (the toplevel category's, which says where it was posted from;
// devtools.timeline's RunTask nests inside it).
const TASK = /^(ThreadControllerImpl::)?RunTask$/;
// The label of a task Chromium ran for the Worker, or ''. Not asked of a message task, which dedicated_worker_object_proxy.cc
// posts too.
function engineLabel(task, inside) {
  for (const e of inside) {
    const tag = e.name === 'Receive mojo message' && e.args?.chrome_mojo_event_info?.mojo_interface_tag;
    if (tag && WORKER_ENGINE_TASKS[tag]) return WORKER_ENGINE_TASKS[tag];
  }
  return WORKER_ENGINE_TASKS[(task.args?.src_file ?? '').split('/').pop()] ?? '';
}
// Parts of a task, by trace event: postMessage's serialization, a message's deserialization, a request started (an
// import() of a chunk, a fetch() or sendBeacon), a compilation.
const PARTS = Object.freeze({
  serialize: 'SerializedScriptValueFactory::create', deserialize: 'SerializedScriptValueFactory::deserialize',
  request: 'ResourceFetcher::requestResource', compile: COMPILE,
});

/**
 * The module's main-thread tasks in one page load: [{at, label, ms, wallMs, parts}], at in ms from the trace's first
 * task, ms the thread CPU time (a trace RunTask's `tdur`, which counts the CPU throttler's share and not the time the
 * OS gave other processes). A message from the module's Worker (HandlePostMessage: its deserialization, its handler)
 * is the module's task: it counts whole, less the share of the V8 CPU profile's samples in it that ran other script
 * than the module's (the page's code awaiting a promise the handler resolved); so does a task Chromium runs for the
 * module's Worker (WORKER_ENGINE_TASKS: a request of the Worker's reported to the page, its start, its bookkeeping),
 * labelled by what it was. Any other task counts by the share of
 * samples that have a module frame (a script under /h3probe/, or WebAssembly) on the stack; the compilation of a
 * script served under /h3probe/ inside it counts whole. A task without either counts nothing (shorter than the
 * sampling interval, or descheduled throughout).
 * label: what the task was, from its trace and its samples: "compile FILE", "worker message, first|between|last" (in
 * their order; ", request": it started one, such as the beacon's sendBeacon), or the module files whose code ran in
 * it ("h3probe.js", "run.js") with the postMessage or request it made. parts: {serialize, deserialize, request,
 * compile} ms inside the task. shareMs: the task by its share of samples with module code alone.
 */
export function moduleTasks(profile, events, pageUrl) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const fileOf = (url) => (servedUnderModule(url) ? new URL(url).pathname.split('/').pop() : url.startsWith('wasm://') ? 'wasm' : '');
  const inner = new Map(); // node id -> the innermost module file on its stack (the module code that ran), or ''
  const innermost = (id) => {
    if (inner.has(id)) return inner.get(id);
    const result = fileOf(byId.get(id).callFrame.url) || (parent.has(id) ? innermost(parent.get(id)) : '');
    inner.set(id, result);
    return result;
  };
  // Whether a node runs script at all: a frame of a script, or a named function (the profiler names the rest
  // "(program)", "(garbage collector)", "(idle)", "(root)").
  const script = (id) => {
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const { url, functionName } = byId.get(n).callFrame;
      if (url || (functionName && !functionName.startsWith('('))) return true;
    }
    return false;
  };
  const samples = []; // [time µs, innermost module file or '', whether it ran script]
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    samples.push([t, innermost(profile.samples[i]), script(profile.samples[i])]);
  }
  // The page's renderer process (the frame committed with its URL), and its main thread.
  const committed = events.find((e) => e.name === 'FrameCommittedInBrowser' && e.args?.data?.url?.startsWith(pageUrl));
  if (!committed) throw new Error(`no frame of ${pageUrl} in the trace`);
  const pid = committed.args.data.processId;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.pid === pid && e.args.name === 'CrRendererMain');
  if (!main) throw new Error('no renderer main thread in the trace');
  const onMain = events.filter((e) => e.ph === 'X' && e.pid === main.pid && e.tid === main.tid).sort((x, y) => x.ts - y.ts || y.dur - x.dur);
  const tasks = [];
  for (const e of onMain.filter((x) => TASK.test(x.name))) {
    const last = tasks[tasks.length - 1];
    if (!last || e.ts >= last.ts + last.dur) tasks.push(e); // not nested in the one before
  }
  const out = [];
  let i = 0;
  let k = 0;
  for (const task of tasks) {
    const end = task.ts + task.dur;
    while (i < samples.length && samples[i][0] < task.ts) i += 1;
    let all = 0;
    let others = 0; // samples running someone else's script: the page's, or a test driver's
    const files = new Map();
    for (let j = i; j < samples.length && samples[j][0] <= end; j++) {
      all += 1;
      if (samples[j][1]) files.set(samples[j][1], (files.get(samples[j][1]) || 0) + 1);
      else if (samples[j][2]) others += 1;
    }
    while (k < onMain.length && onMain[k].ts < task.ts) k += 1;
    const inside = [];
    for (let j = k; j < onMain.length && onMain[j].ts <= end; j++) if (onMain[j] !== task) inside.push(onMain[j]);
    const compiled = inside.filter((e) => COMPILE.test(e.name) && servedUnderModule(e.args?.data?.url ?? e.args?.fileName));
    const message = inside.some((e) => e.name === MESSAGE) || task.args?.src_func === MESSAGE_POSTED_FROM;
    const engine = message ? '' : engineLabel(task, inside);
    const mine = [...files.values()].reduce((a, b) => a + b, 0);
    if (!mine && !compiled.length && !message && !engine) continue;
    const cpu = task.tdur ?? 0;
    const share = all ? mine / all : 0;
    const compileMs = compiled.reduce((sum, e) => sum + (e.tdur ?? 0), 0) / 1000;
    // A message task, or one Chromium ran for the Worker, is the module's but for the page's own script it runs (a
    // promise the module resolved, which the page awaited).
    const ours = message || engine ? 1 - (all ? others / all : 0) : 0;
    const ms = ours ? (cpu * ours) / 1000 : Math.max(compileMs, (cpu * share) / 1000);
    const wallMs = ours ? (task.dur * ours) / 1000 : Math.max(compileMs * (task.dur / Math.max(cpu, 1)), (task.dur * share) / 1000);
    const parts = {};
    for (const [part, name] of Object.entries(PARTS)) {
      const sum = inside.filter((e) => (typeof name === 'string' ? e.name === name : name.test(e.name)))
        .reduce((a, e) => a + (e.tdur ?? 0), 0) / 1000;
      if (sum) parts[part] = sum;
    }
    const did = [parts.serialize ? 'postMessage' : '', parts.request ? 'request' : ''].filter(Boolean);
    let label;
    if (message) label = `worker message${parts.request ? ', request' : ''}`;
    else if (engine) label = engine;
    else if (compiled.length && mine / Math.max(all, 1) < 0.5) label = `compile ${[...new Set(compiled.map((e) => fileOf(e.args?.data?.url ?? e.args?.fileName)))].join('+')}`;
    else label = `${[...files.keys()].sort().join('+') || 'module'}${did.length ? ` (${did.join(', ')})` : ''}`;
    out.push({ at: (task.ts - tasks[0].ts) / 1000, label, ms, wallMs, shareMs: (cpu * share) / 1000, parts });
  }
  // The Worker's messages in their order: the first (the run's outcome), the last (its end), and those between.
  const messages = out.filter((t) => t.label.startsWith('worker message'));
  messages.forEach((t, n) => {
    t.label = t.label.replace('worker message', `worker message, ${n === 0 ? 'first' : n === messages.length - 1 ? 'last' : 'between'}`);
  });
  return out;
}

/**
 * The module's main-thread time in one page load, in thread CPU ms (the sum of moduleTasks()); wallMs, the same over
 * the tasks' wall time; shareMs, every task by its share of samples with module code alone (this benchmark's measure
 * before the tasks of the Worker's messages and of the module's compilations counted whole: it misses what runs
 * without a module frame on the stack, a message's deserialization and dispatch, a compilation).
 */
export function moduleMainThreadMs(profile, events, pageUrl) {
  const tasks = moduleTasks(profile, events, pageUrl);
  const sum = (key) => tasks.reduce((a, x) => a + x[key], 0);
  return { ms: sum('ms'), wallMs: sum('wallMs'), shareMs: sum('shareMs'), tasks };
}

/**
 * One throttled page load with one search; resolves with {longtasks, frames, moduleFrames, moduleScripts, mainMs,
 * state, runContext}. config: extra config keys (e.g. {sampleRate: 0} for the control, {worker: false}). traced: false
 * loads the page without the trace and the CPU profiler, and so without mainMs and tasks.
 */
export async function throttledSearch(browser, stack, { rate = 4, config = {}, settleMs = 1500, traced = true } = {}) {
  const tab = await openPage(browser, null);
  try {
    await tab.page.addInitScript(observeLongTasks);
    const cdp = await tab.context.newCDPSession(tab.page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate });
    const events = [];
    let tracingDone;
    if (traced) {
      cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
      tracingDone = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
      await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES, transferMode: 'ReportEvents' });
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
      await cdp.send('Profiler.start');
    }
    await tab.page.goto(experimentUrl(stack, config));
    await tab.page.fill('#query', 'throttled');
    await tab.page.press('#query', 'Enter');
    // Awaited once, not polled: polling status() would itself call into the module and allocate. Two short strings
    // and a number back, not the status with its beacon: the driver's serialization of a result runs in the page's
    // task. requests: the floor's count of the requests its Worker made (its Resource Timing entries), else 0.
    const [state, pageLoadId, requests] = await tab.page.evaluate(() => window.h3probeDone().then((s) => [s.state, s.pageLoadId ?? '', s.requests ?? 0]));
    await tab.page.waitForTimeout(settleMs); // a frame is reported once it has ended
    let profile;
    if (traced) {
      ({ profile } = await cdp.send('Profiler.stop'));
      await cdp.send('Tracing.end');
      await tracingDone;
    }
    const seen = await tab.page.evaluate(() => window.__h3probeLongTasks);
    if (!Number.isFinite(seen.searchAt)) throw new Error('the page never submitted its search: no frame can be told to follow it');
    const long = (e) => e.duration >= LONG_TASK_MS;
    const frames = seen.frames.filter(long);
    return {
      state,
      requests,
      runContext: stack.store.db.prepare('SELECT run_context FROM runs WHERE page_load_id = ?').pluck().get(pageLoadId) ?? '',
      ...(traced ? (({ ms, wallMs, shareMs, tasks }) => ({ mainMs: ms, mainWallMs: wallMs, shareMs, tasks }))(moduleMainThreadMs(profile, events, stack.urls.page)) : {}),
      longtasks: seen.longtasks.filter(long),
      frames,
      // The frames that ended after the search was submitted (the one holding the submit started before it).
      framesAfterSearch: frames.filter((f) => f.start + f.duration >= seen.searchAt),
      // A frame can hold several short tasks; a single run of the module's script that long is a long task of its own.
      moduleFrames: frames.filter((f) => f.scripts.some(moduleScript)),
      moduleScripts: frames.flatMap((f) => f.scripts).filter((s) => moduleScript(s) && s.duration >= LONG_TASK_MS),
    };
  } finally {
    await tab.context.close();
  }
}

/**
 * The arms the benchmark compares: the probe with its core in a Worker, on the main thread, the control, and the floor
 * of any probe in a dedicated Worker (its requests and two messages, no core). target:
 * which of compareLongTasks()'s targets (a browser and the stack serving one build of the module) loads it.
 */
export const ARMS = Object.freeze({
  worker: { config: {}, target: 'base' }, main: { config: { worker: false }, target: 'base' },
  control: { config: { sampleRate: 0 }, target: 'base' }, floor: { config: {}, target: 'floor' },
});
// The floor arm's module: a Worker that makes the probe's requests without the core (web/bench/floor/).
export const FLOOR_MODULE = new URL('./floor/', import.meta.url).pathname;

/**
 * Loads of the floor arm in which the benchmark saw fewer of Chromium's reports of the Worker's requests than the
 * Worker made requests ([] when each was seen): a Chromium that reports them otherwise would make every figure of
 * this benchmark too low without a word.
 */
export function unseenRequests(loads) {
  const label = WORKER_ENGINE_TASKS['blink.mojom.ResourceLoadInfoNotifier'];
  return loads.map((l, i) => ({ load: i + 1, requests: l.requests, reported: l.tasks.filter((t) => t.label === label).length }))
    .filter((l) => !(l.requests > 0 && l.reported >= l.requests));
}

// The long tasks and long animation frames of a set of loads: counts, and those attributed to the module.
const frameCounts = () => ({ counted: 0, longtasks: 0, loadsWithFrameAfterSearch: 0, moduleFrames: 0, loadsWithModuleFrame: 0,
  moduleScripts: 0, loadsWithModuleScript: 0, worstModuleMs: 0, worstFrameMs: 0 });
function countFrames(o, r) {
  o.counted += 1;
  o.longtasks += r.longtasks.length;
  if (r.framesAfterSearch.length) o.loadsWithFrameAfterSearch += 1;
  o.moduleFrames += r.moduleFrames.length;
  if (r.moduleFrames.length) o.loadsWithModuleFrame += 1;
  o.moduleScripts += r.moduleScripts.length;
  if (r.moduleScripts.length) o.loadsWithModuleScript += 1;
  for (const sc of r.moduleScripts) o.worstModuleMs = Math.max(o.worstModuleMs, sc.duration);
  for (const f of r.moduleFrames) o.worstFrameMs = Math.max(o.worstFrameMs, f.duration);
}

/**
 * n loads of each arm, interleaved; per arm the module's main-thread ms per load, its tasks by label, and the counts of
 * long tasks and of frames attributed to the module (traced loads). Each traced load is followed by one of the same arm
 * without the trace and the CPU profiler (untraced: their counts, as a user's page runs, since the profiler's sampling
 * and the trace take the main thread too and lengthen its frames). untracedOnly: the untraced loads alone (the frames'
 * count, more loads in the same minutes; no main-thread ms). targets: {name: {browser, stack}}.
 */
export async function compareLongTasks(targets, { loads = 20, rate = 4, arms = ARMS, untracedOnly = false, onLoad = () => {} } = {}) {
  const out = {};
  for (const name of Object.keys(arms)) out[name] = { loads: [], mainMs: [], mainWallMs: [], shareMs: [], ...frameCounts(), untraced: frameCounts() };
  for (let i = 0; i < loads; i++) {
    for (const [name, { config, target }] of Object.entries(arms)) {
      const { browser, stack } = targets[target];
      const o = out[name];
      for (const traced of untracedOnly ? [false] : [true, false]) {
        const r = await throttledSearch(browser, stack, { rate, config, traced });
        onLoad(name, i, r, traced);
        if (!traced) {
          countFrames(o.untraced, r);
          continue;
        }
        o.loads.push(r);
        o.mainMs.push(r.mainMs);
        o.mainWallMs.push(r.mainWallMs);
        o.shareMs.push(r.shareMs);
        countFrames(o, r);
      }
    }
  }
  return out;
}

/**
 * The module's tasks of an arm's loads by label: [{label, loads (with such a task), perLoad (tasks per load, median),
 * ms (median over the loads of the label's ms per load, a load without it counting 0), p90, mean (these add up to the
 * mean of the loads' totals), parts (median ms per load of each part)}], largest first.
 */
export function tasksByLabel(loads) {
  const labels = new Map();
  loads.forEach((load, n) => {
    for (const task of load.tasks) {
      const l = labels.get(task.label) ?? { ms: loads.map(() => 0), count: loads.map(() => 0), parts: {} };
      l.ms[n] += task.ms;
      l.count[n] += 1;
      for (const [part, ms] of Object.entries(task.parts)) (l.parts[part] ??= loads.map(() => 0))[n] += ms;
      labels.set(task.label, l);
    }
  });
  return [...labels].map(([label, l]) => ({
    label, loads: l.count.filter(Boolean).length, perLoad: quantile(l.count, 0.5), ms: quantile(l.ms, 0.5), p90: quantile(l.ms, 0.9),
    mean: l.ms.reduce((a, b) => a + b, 0) / loads.length,
    parts: Object.fromEntries(Object.entries(l.parts).map(([part, v]) => [part, quantile(v, 0.5)])),
  })).sort((a, b) => b.mean - a.mean);
}
