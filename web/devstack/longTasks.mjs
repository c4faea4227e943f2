// Main-thread cost of the module: page loads in Chromium with the CPU slowed down (CDP Emulation.setCPUThrottlingRate),
// each with one search, recording every long task (≥ 50 ms), every long animation frame with the scripts it ran, and
// the module's main-thread time (a trace of the page's tasks and a CPU profile: moduleMainThreadMs). A frame counts against the module when one of its scripts was served under
// /h3probe/ (the gate, the run, the worker module run on the main thread, the glue) or is the WebAssembly code; a
// control with sampleRate 0 (the module loads its gate and stops) shows the page's own.
import { openPage } from '../cli/chromium.mjs';
import { experimentUrl } from './pageLoad.mjs';

export const LONG_TASK_MS = 50;
// The profiler's sampling interval: the module's main-thread time is counted in steps of this size.
export const PROFILE_INTERVAL_US = 100;

// Runs in the page before its scripts: observers for long tasks and long animation frames, buffered in a global.
function observeLongTasks() {
  const seen = { longtasks: [], frames: [] };
  window.__h3probeLongTasks = seen;
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

/**
 * The module's main-thread time in one page load, in thread CPU ms: each task the page's main thread ran (a trace's
 * RunTask, its thread time `tdur`, which counts the CPU throttler's share and not the time the OS gave other
 * processes) times the share of the V8 CPU profile's samples in it that have a module frame (a script under
 * /h3probe/, or WebAssembly) on the stack. A task without a sample (shorter than the sampling interval, or
 * descheduled throughout) counts nothing. Also wallMs: the same over the tasks' wall time.
 */
export function moduleMainThreadMs(profile, events, pageUrl, detail = null) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const own = new Map(); // node id -> whether a module frame is on its stack
  const isOwn = (id) => {
    if (own.has(id)) return own.get(id);
    const frame = byId.get(id).callFrame;
    const result = servedUnderModule(frame.url) || frame.url.startsWith('wasm://') || (parent.has(id) && isOwn(parent.get(id)));
    own.set(id, result);
    return result;
  };
  const samples = []; // [time µs, own]
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    samples.push([t, isOwn(profile.samples[i]), profile.samples[i]]);
  }
  // The page's renderer process (the frame committed with its URL), and its main thread.
  const committed = events.find((e) => e.name === 'FrameCommittedInBrowser' && e.args?.data?.url?.startsWith(pageUrl));
  if (!committed) throw new Error(`no frame of ${pageUrl} in the trace`);
  const pid = committed.args.data.processId;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.pid === pid && e.args.name === 'CrRendererMain');
  if (!main) throw new Error('no renderer main thread in the trace');
  let ms = 0;
  let wallMs = 0;
  let i = 0;
  const tasks = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && e.pid === main.pid && e.tid === main.tid)
    .sort((x, y) => x.ts - y.ts);
  for (const task of tasks) {
    while (i < samples.length && samples[i][0] < task.ts) i += 1;
    let all = 0;
    let mine = 0;
    for (let j = i; j < samples.length && samples[j][0] <= task.ts + task.dur; j++) {
      all += 1;
      if (samples[j][1]) mine += 1;
    }
    if (!mine) continue;
    ms += ((task.tdur ?? 0) * mine) / all / 1000;
    if (detail) {
      const leaf = new Map();
      for (let j = i; j < samples.length && samples[j][0] <= task.ts + task.dur; j++) {
        if (!samples[j][1]) continue;
        const names = [];
        for (let id = samples[j][2]; id !== undefined && names.length < 4; id = parent.get(id)) {
          const f = byId.get(id).callFrame;
          names.push(`${f.functionName || '?'}@${f.url.split('/').pop()}:${f.columnNumber}`);
        }
        const key = names.join(' < ');
        leaf.set(key, (leaf.get(key) || 0) + 1);
      }
      detail.push({ ms: ((task.tdur ?? 0) * mine) / all / 1000, top: [...leaf].sort((a, b) => b[1] - a[1]).slice(0, 2) });
    }
    wallMs += (task.dur * mine) / all / 1000;
  }
  return { ms, wallMs };
}

/**
 * One throttled page load with one search; resolves with {longtasks, frames, moduleFrames, moduleScripts, mainMs,
 * state, runContext}. config: extra config keys (e.g. {sampleRate: 0} for the control, {worker: false}).
 */
export async function throttledSearch(browser, stack, { rate = 4, config = {}, settleMs = 1500 } = {}) {
  const tab = await openPage(browser, null);
  try {
    await tab.page.addInitScript(observeLongTasks);
    const cdp = await tab.context.newCDPSession(tab.page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate });
    const events = [];
    cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
    const traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.start', { categories: 'toplevel,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
    await cdp.send('Profiler.start');
    await tab.page.goto(experimentUrl(stack, config));
    await tab.page.fill('#query', 'throttled');
    await tab.page.press('#query', 'Enter');
    // Awaited once, not polled: polling status() would itself call into the module and allocate.
    const { state, beacon } = await tab.page.evaluate(() => window.h3probeDone());
    await tab.page.waitForTimeout(settleMs); // a frame is reported once it has ended
    const { profile } = await cdp.send('Profiler.stop');
    await cdp.send('Tracing.end');
    await traced;
    const seen = await tab.page.evaluate(() => window.__h3probeLongTasks);
    const long = (e) => e.duration >= LONG_TASK_MS;
    const frames = seen.frames.filter(long);
    return {
      state,
      runContext: beacon ? JSON.parse(beacon).context.run_context : '',
      ...(({ ms, wallMs }) => ({ mainMs: ms, mainWallMs: wallMs }))(moduleMainThreadMs(profile, events, stack.urls.page)),
      longtasks: seen.longtasks.filter(long),
      frames,
      // A frame can hold several short tasks; a single run of the module's script that long is a long task of its own.
      moduleFrames: frames.filter((f) => f.scripts.some(moduleScript)),
      moduleScripts: frames.flatMap((f) => f.scripts).filter((s) => moduleScript(s) && s.duration >= LONG_TASK_MS),
    };
  } finally {
    await tab.context.close();
  }
}

/** The arms the benchmark compares: the probe with its core in a Worker, on the main thread, and the control. */
export const ARMS = Object.freeze({ worker: {}, main: { worker: false }, control: { sampleRate: 0 } });

/**
 * n loads of each arm, interleaved; per arm the module's main-thread ms per load and the counts of long tasks and of
 * frames attributed to the module.
 */
export async function compareLongTasks(browser, stack, { loads = 20, rate = 4, arms = ARMS, onLoad = () => {} } = {}) {
  const out = {};
  for (const name of Object.keys(arms)) {
    out[name] = { loads: [], mainMs: [], mainWallMs: [], longtasks: 0, moduleFrames: 0, loadsWithModuleFrame: 0, moduleScripts: 0,
      loadsWithModuleScript: 0, worstModuleMs: 0, worstFrameMs: 0 };
  }
  for (let i = 0; i < loads; i++) {
    for (const [name, config] of Object.entries(arms)) {
      const r = await throttledSearch(browser, stack, { rate, config });
      const o = out[name];
      o.loads.push(r);
      o.mainMs.push(r.mainMs);
      o.mainWallMs.push(r.mainWallMs);
      o.longtasks += r.longtasks.length;
      o.moduleFrames += r.moduleFrames.length;
      if (r.moduleFrames.length) o.loadsWithModuleFrame += 1;
      o.moduleScripts += r.moduleScripts.length;
      if (r.moduleScripts.length) o.loadsWithModuleScript += 1;
      for (const sc of r.moduleScripts) o.worstModuleMs = Math.max(o.worstModuleMs, sc.duration);
      for (const f of r.moduleFrames) o.worstFrameMs = Math.max(o.worstFrameMs, f.duration);
      onLoad(name, i, r);
    }
  }
  return out;
}
