// `npm run bench:interaction -- [--loads 5] [--rate 4] [--with-main] [--tiny]`: what the probe does to a click right
// after the search. Chromium, CPU slowed down `rate` times; each page load searches once, and a real click (CDP input)
// lands 0, 50, 100 or 200 ms after the page called searchCompleted(). Its input delay is read with Event Timing
// (processingStart - startTime of the click's PerformanceEventTiming entry; the page's click handler works 20 ms so
// that every click has an entry). Arms: the probe with its core in a Worker, sampleRate 0 (the control), and with
// --with-main the core on the main thread. Prints the median input delay per offset and arm, and the difference to the
// control; the load average. --tiny: 1 load per offset and arm.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startStack } from '../devstack/stack.mjs';
import { launchBrowser, openPage } from '../cli/chromium.mjs';
import { experimentUrl } from '../devstack/pageLoad.mjs';

const { values: args } = parseArgs({ options: {
  loads: { type: 'string', default: '5' }, rate: { type: 'string', default: '4' }, 'with-main': { type: 'boolean', default: false },
  tiny: { type: 'boolean', default: false },
} });
const loads = args.tiny ? 1 : Number(args.loads);
const rate = Number(args.rate);
const OFFSETS_MS = [0, 50, 100, 200];
const ARMS = { worker: {}, ...(args['with-main'] ? { main: { worker: false } } : {}), control: { sampleRate: 0 } };

// Runs in the page before its scripts: notes when the page calls searchCompleted() (the test page marks the body just
// before), a click handler that works 20 ms, and the Event Timing entries of clicks.
function watchClicks() {
  const seen = { searchAt: null, clicks: [] };
  window.__interaction = seen;
  new MutationObserver(() => {
    if (seen.searchAt === null && document.body.dataset.searches === '1') seen.searchAt = performance.now();
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-searches'] });
  addEventListener('click', () => {
    const until = performance.now() + 20;
    while (performance.now() < until);
  });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      // Only the injected click: pressing Enter in the search form clicks its submit button too, before the search.
      if (e.name === 'click' && seen.searchAt !== null && e.startTime >= seen.searchAt) seen.clicks.push({ start: e.startTime, delay: e.processingStart - e.startTime });
    }
  }).observe({ type: 'event', durationThreshold: 16, buffered: true });
}

async function clickAfterSearch(browser, stack, config, offsetMs) {
  const tab = await openPage(browser, null);
  try {
    await tab.page.addInitScript(watchClicks);
    const cdp = await tab.context.newCDPSession(tab.page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate });
    await tab.page.goto(experimentUrl(stack, config));
    await tab.page.fill('#query', 'interaction');
    await tab.page.press('#query', 'Enter');
    await tab.page.waitForFunction(() => window.__interaction.searchAt !== null, null, { polling: 'raf' });
    if (offsetMs) await new Promise((resolve) => setTimeout(resolve, offsetMs));
    await tab.page.mouse.click(5, 5);
    await tab.page.waitForFunction(() => window.__interaction.clicks.length > 0, null, { timeout: 10000 });
    const { searchAt, clicks } = await tab.page.evaluate(() => window.__interaction);
    await tab.page.evaluate(() => window.h3probeDone());
    return { delay: clicks[0].delay, at: clicks[0].start - searchAt };
  } finally {
    await tab.context.close();
  }
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const stack = await startStack();
const browser = await launchBrowser(stack);
try {
  const load0 = os.loadavg()[0].toFixed(1);
  const out = {}; // arm -> offset -> [{delay, at}]
  for (let i = 0; i < loads; i++) {
    for (const offset of OFFSETS_MS) {
      for (const [name, config] of Object.entries(ARMS)) {
        ((out[name] ??= {})[offset] ??= []).push(await clickAfterSearch(browser, stack, config, offset));
      }
    }
  }
  console.log(`Chromium, CPU throttled ${rate}x, ${loads} loads per offset and arm; input delay of a click (Event Timing), ms; load average ${load0} -> ${os.loadavg()[0].toFixed(1)}`);
  console.log(`offset (click at, median) ${Object.keys(ARMS).map((a) => a.padStart(8)).join(' ')}   ${Object.keys(ARMS).filter((a) => a !== 'control').map((a) => `Δ ${a}`.padStart(10)).join(' ')}`);
  const deltas = {};
  for (const offset of OFFSETS_MS) {
    const med = Object.fromEntries(Object.keys(ARMS).map((a) => [a, median(out[a][offset].map((r) => r.delay))]));
    const at = median(Object.values(out).flatMap((o) => o[offset].map((r) => r.at)));
    const diffs = Object.keys(ARMS).filter((a) => a !== 'control').map((a) => {
      (deltas[a] ??= []).push(med[a] - med.control);
      return (med[a] - med.control).toFixed(1).padStart(10);
    });
    console.log(`+${String(offset).padEnd(3)} ms (${at.toFixed(0).padStart(4)} ms)      ${Object.values(med).map((m) => m.toFixed(1).padStart(8)).join(' ')}   ${diffs.join(' ')}`);
  }
  for (const [arm, d] of Object.entries(deltas)) {
    console.log(`${arm}: median over offsets of (median delay - control's) ${median(d).toFixed(1)} ms (budget 2 ms, not asserted)`);
  }
} finally {
  await browser.close();
  await stack.stop();
}
