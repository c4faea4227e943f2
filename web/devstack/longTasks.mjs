// Main-thread cost of the module: page loads in Chromium with the CPU slowed down (CDP Emulation.setCPUThrottlingRate),
// each with one search, recording every long task (≥ 50 ms) and every long animation frame with the scripts it ran.
// A frame counts against the module when one of its scripts was served under /h3probe/ (the gate, the run, the glue)
// or is the WebAssembly code; a control with sampleRate 0 (the module loads its gate and stops) shows the page's own.
import { openPage } from './chromium.mjs';
import { experimentUrl } from './pageLoad.mjs';

export const LONG_TASK_MS = 50;

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
 * One throttled page load with one search; resolves with {longtasks, frames, moduleFrames, state}.
 * config: extra config keys (e.g. {sampleRate: 0} for the control).
 */
export async function throttledSearch(browser, stack, { rate = 4, config = {}, settleMs = 1500 } = {}) {
  const tab = await openPage(browser, null);
  try {
    await tab.page.addInitScript(observeLongTasks);
    const cdp = await tab.context.newCDPSession(tab.page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate });
    await tab.page.goto(experimentUrl(stack, config));
    await tab.page.fill('#query', 'throttled');
    await tab.page.press('#query', 'Enter');
    // Awaited once, not polled: polling status() would itself call into the module and allocate.
    const { state } = await tab.page.evaluate(() => window.h3probeDone());
    await tab.page.waitForTimeout(settleMs); // a frame is reported once it has ended
    const seen = await tab.page.evaluate(() => window.__h3probeLongTasks);
    const long = (e) => e.duration >= LONG_TASK_MS;
    const frames = seen.frames.filter(long);
    return {
      state,
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

/** n loads of the probe and n of the control; per arm the count of long tasks and of frames attributed to the module. */
export async function compareLongTasks(browser, stack, { loads = 20, rate = 4, onLoad = () => {} } = {}) {
  const arms = { probe: {}, control: { sampleRate: 0 } };
  const out = {};
  for (const name of Object.keys(arms)) {
    out[name] = { loads: [], longtasks: 0, moduleFrames: 0, loadsWithModuleFrame: 0, moduleScripts: 0, loadsWithModuleScript: 0, worstModuleMs: 0 };
  }
  for (let i = 0; i < loads; i++) {
    for (const [name, config] of Object.entries(arms)) {
      const r = await throttledSearch(browser, stack, { rate, config });
      const o = out[name];
      o.loads.push(r);
      o.longtasks += r.longtasks.length;
      o.moduleFrames += r.moduleFrames.length;
      if (r.moduleFrames.length) o.loadsWithModuleFrame += 1;
      o.moduleScripts += r.moduleScripts.length;
      if (r.moduleScripts.length) o.loadsWithModuleScript += 1;
      for (const sc of r.moduleScripts) o.worstModuleMs = Math.max(o.worstModuleMs, sc.duration);
      onLoad(name, i, r);
    }
  }
  return out;
}
