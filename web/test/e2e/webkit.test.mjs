// The experiment end to end in WebKit: WebKitGTK's MiniBrowser driven by WebKitWebDriver (Debian webkit2gtk-driver) over
// classic WebDriver (selenium-webdriver), real Caddy, the C++ validator, real SQLite. WebKitGTK speaks no HTTP/3: the
// test checks that the probe records what it does get, that nothing is counted in the HTTP/3 arm, and that nothing
// breaks in the page. What WebKitGTK exposes is in docs/record/platform-notes.md ("WebKitGTK").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { By, Key } from 'selenium-webdriver';
import { startStack } from '../../stack/stack.mjs';
import { launchWebKit, webkitMissing } from '../../launch/webkit.mjs';
import { experimentUrl } from '../../launch/pageLoad.mjs';
import { fromUserAgent } from '../../server/browserFor.mjs';
import { networkMsOf, RECORD_WORKER_ENTRIES } from './workerEntries.mjs';
import { RECORD_PAGE_BEACONS } from './pageBeacons.mjs';

const missing = webkitMissing();

let stack;
let slowStack; // its no-op answers after 300 ms: a run long enough to hide the page in the middle of it
let webkit;

before(async () => {
  if (missing) return;
  stack = await startStack();
  slowStack = await startStack({ noopDelayMs: 300 });
  webkit = await launchWebKit(stack); // the host names resolve to loopback: the same session loads either stack's page
}, { timeout: 60000 });

after(async () => {
  await webkit?.close();
  await stack?.stop();
  await slowStack?.stop();
});

// Classic WebDriver has no page-error events (WebKitWebDriver 2.50 refuses a BiDi session), so the page records its
// own, from the moment this runs: after load, before the search that starts the probe.
const RECORD_ERRORS = `window.__h3probeTestErrors = [];
  addEventListener('error', (e) => __h3probeTestErrors.push({ type: 'error', text: String(e.error?.stack ?? e.message) }));
  addEventListener('unhandledrejection', (e) =>
    __h3probeTestErrors.push({ type: 'unhandledrejection', text: String(e.reason?.stack ?? e.reason) }));`;

// What the browser exposes, read in the page after the run: the probe's own Resource Timing entries (by the run's
// h3probe= URL tag), and the features the compatibility table lists.
const READ_PAGE = `const own = window.__workerEntries;
  const inPage = performance.getEntriesByType('resource').filter((e) => e.name.includes('h3probe=')).length;
  const ticks = [];
  let last = performance.now();
  for (const t0 = last; ticks.length < 50 && performance.now() - t0 < 200;) {
    const now = performance.now();
    if (now !== last) { ticks.push(now - last); last = now; }
  }
  return {
    userAgent: navigator.userAgent,
    sendBeacon: typeof navigator.sendBeacon === 'function',
    serverTimingApi: typeof PerformanceServerTiming === 'function',
    minTickMs: Math.min(...ticks),
    entries: own.map((e) => ({ name: e.name, nextHopProtocol: e.nextHopProtocol, transferSize: e.transferSize,
      requestStart: e.requestStart, responseStart: e.responseStart, fetchStart: e.fetchStart, responseEnd: e.responseEnd,
      serverTiming: e.serverTiming.map((t) => t.name) })),
    inPage,
    errors: window.__h3probeTestErrors,
  };`;

test('WebKitGTK: one search runs the probe once, beaconed and stored as webkit; nothing counted as HTTP/3, no page error', { skip: missing, timeout: 60000 }, async (t) => {
  const { driver } = webkit;
  const runsBefore = stack.store.countRuns();
  await driver.get(experimentUrl(stack));
  await driver.executeScript(RECORD_ERRORS);
  await driver.executeScript(RECORD_WORKER_ENTRIES);
  // The page's module script may still be running when the driver returns from get() on a loaded machine: wait for its
  // status function rather than read it once (a module that failed to load never defines it, and this fails).
  await driver.wait(async () => (await driver.executeScript('return typeof window.h3probeStatus')) === 'function', 10000)
    .catch(() => {});
  assert.equal(await driver.executeScript('return typeof window.h3probeStatus'), 'function', 'the module loaded');
  await driver.findElement(By.css('#query')).sendKeys('quarterly report', Key.ENTER);
  await driver.wait(async () => Number(await driver.executeScript('return document.body.dataset.searches')) === 1, 10000);
  await stack.collector.waitForRuns(runsBefore + 1, 30000);
  // whenDone(): the worker tells the page its beacon went once the collector has answered, maybe after storing it.
  const status = await driver.executeAsyncScript('window.h3probeDone().then(arguments[arguments.length - 1])');
  const page = await driver.executeScript(READ_PAGE);

  const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
  assert.ok(run, `a run is stored for page load ${status.pageLoadId}`);
  assert.equal(stack.store.countRuns(), runsBefore + 1, 'the probe ran once');
  assert.equal(run.outcome, 'complete');
  assert.equal(run.run_context, 'worker');
  assert.equal(run.worker_fallback, '');
  assert.equal(page.inPage, 0, 'the probe\'s requests are the worker\'s, not in the page\'s timeline');
  assert.deepEqual(status.errors, []);
  // No client hints in WebKit: the collector's User-Agent parse names the engine (browserFor.mjs).
  assert.equal(run.browser, 'webkit', `stored browser for ${page.userAgent}`);
  assert.equal(run.browser_major, fromUserAgent(page.userAgent).browserMajor);

  const samples = stack.store.requestsFor(run.run_id);
  const byPhase = (p) => samples.filter((s) => s.phase === p);
  assert.equal(byPhase('prewarm').length, 3);
  assert.equal(byPhase('control').length, 5);
  assert.equal(byPhase('treatment').length, 5);
  const entryOf = (s) => page.entries.find((e) => e.name.endsWith(`h3probe=${run.run_id}-${s.phase}-${s.idx}`));
  for (const s of [...byPhase('control'), ...byPhase('treatment')]) {
    const where = `${s.phase}[${s.idx}]`;
    const entry = entryOf(s);
    assert.ok(entry, `${where}: its Resource Timing entry is in the worker's timeline`);
    assert.equal(s.network_ms, networkMsOf(entry), `${where} network_ms`);
    // The protocol the probe stored is the one the browser reported; WebKitGTK (libsoup) has no HTTP/3, so the
    // "HTTP/3" origin was reached over HTTP/2 on TCP (Caddy serves both on its port).
    assert.equal(s.protocol, entry.nextHopProtocol, `${where} protocol`);
    assert.equal(s.protocol, 'h2', `${where} nextHopProtocol`);
    assert.ok(entry.requestStart > 0 && entry.responseStart > 0, `${where}: detailed timing exposed (Timing-Allow-Origin)`);
    // A whole-millisecond clock on loopback: fetchStart and responseEnd can fall in the same millisecond, so 0 is a
    // true reading here; a whole number of milliseconds it must be.
    assert.ok(Number.isInteger(s.network_ms) && s.network_ms >= 0, `${where} network_ms ${s.network_ms}`);
    // WebKitGTK hides serverTiming and transferSize (0) from cross-origin entries even with Timing-Allow-Origin: *.
    // transferSize 0 on the body-less 204 is not read as a cache hit (resource_timing.cpp): control counts, and the
    // "HTTP/3" arm's requests, over h2, are fallbacks.
    assert.equal(s.server_protocol, entry.serverTiming.includes('proto') ? 'HTTP/2.0' : '', `${where} server_protocol`);
    const expected = s.phase === 'control' ? 'usable_control' : 'fallback';
    assert.equal(s.request_class, expected, `${where} class (transferSize ${entry.transferSize})`);
    assert.notEqual(s.request_class, 'usable_treatment', `${where}: nothing over h2 counts in the HTTP/3 arm`);
  }

  // The browser module's own summary (the beacon's) agrees: no HTTP/3 latency, and no difference computed from nothing.
  const { summary } = JSON.parse(status.beacon);
  const count = (cls) => samples.filter((s) => s.request_class === cls).length;
  assert.equal(summary.treatment.n, 0);
  assert.equal(summary.control.n, count('usable_control'));
  assert.equal(summary.treatment.fallbacks, count('fallback'));

  // Timer resolution: WebKitGTK's clock steps in whole milliseconds (the smallest of up to 50 steps over 200 ms). The
  // beacon's figure is the module's shorter look (about 4 ms, web/src/clientContext.js): never finer than the clock,
  // and on a loaded machine now and then far coarser (a preempted step), so it is not held to 1 here.
  assert.ok(Math.abs(page.minTickMs - 1) < 0.01, `performance.now() steps by ${page.minTickMs} ms`);
  assert.ok(run.timer_resolution_ms >= page.minTickMs - 0.01, `timer_resolution_ms ${run.timer_resolution_ms}`);
  assert.ok(page.sendBeacon, 'navigator.sendBeacon');
  assert.deepEqual(page.errors, [], 'no uncaught error or unhandled rejection in the page');
  const classes = [...new Set(samples.filter((s) => s.phase !== 'prewarm').map((s) => s.request_class))];
  const median = (p) => byPhase(p).map((s) => s.network_ms).sort((a, b) => a - b)[2];
  t.diagnostic(`webkit: ${page.userAgent}; browser_major ${run.browser_major}; nextHopProtocol ${protocolsOf(page)}; ` +
    `transferSize ${page.entries.map((e) => e.transferSize).join(',')}; serverTiming ${page.serverTimingApi ? 'API present, ' : ''}` +
    `${page.entries.some((e) => e.serverTiming.length) ? 'exposed' : 'empty'}; timer_resolution_ms ${run.timer_resolution_ms} ` +
    `(smallest tick ${page.minTickMs}); classes ${classes.join(',')}; median network_ms (stored, not counted) ` +
    `control ${median('control')}, treatment ${median('treatment')}; summary ${JSON.stringify(summary)}`);
});

// One page load of the slow stack with config, searched once; hide: 'mid-run' hides the page while the arms run,
// 'after' hides and leaves it once the run is over (whenDone). Resolves to the stored run, the beacon as the page
// knows it, the run_ids of the page's own sendBeacon calls, and what the collector saw meanwhile.
async function lifecycle(config, hide) {
  const { driver } = webkit;
  const seenBefore = { ...slowStack.collector.metrics };
  const runsBefore = slowStack.store.countRuns();
  await driver.get(experimentUrl(slowStack, config));
  await driver.wait(async () => (await driver.executeScript('return typeof window.h3probeStatus')) === 'function', 10000);
  await driver.executeScript(RECORD_ERRORS);
  await driver.executeScript(RECORD_PAGE_BEACONS);
  await driver.findElement(By.css('#query')).sendKeys('lifecycle', Key.ENTER);
  const HIDE = `Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));`;
  if (hide === 'mid-run') {
    await driver.wait(async () => (await driver.executeScript('return window.h3probeStatus().run')) === 'arms', 20000);
    await driver.executeScript(HIDE);
  }
  await slowStack.collector.waitForRuns(runsBefore + 1, 30000);
  const status = await driver.executeAsyncScript('window.h3probeDone().then(arguments[arguments.length - 1])');
  if (hide === 'after') await driver.executeScript(`${HIDE} dispatchEvent(new Event('pagehide'));`);
  await new Promise((resolve) => setTimeout(resolve, 1500)); // time for a second beacon of the run to arrive
  const run = slowStack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
  return {
    run, beacon: JSON.parse(status.beacon), pageBeacons: await driver.executeScript('return window.__pageBeacons'),
    errors: await driver.executeScript('return window.__h3probeTestErrors'),
    seen: { accepted: slowStack.collector.metrics.accepted - seenBefore.accepted,
      duplicate: slowStack.collector.metrics.duplicate - seenBefore.duplicate },
  };
}

test('WebKitGTK: the beacon of each path, exactly one per run: from the Worker at a visible end, from the page when hidden mid-run, from the page on the main thread', { skip: missing, timeout: 120000 }, async () => {
  for (const [name, config, hide, sender, outcome] of [
    ['visible to the end, then left', {}, 'after', 'worker', 'complete'],
    ['hidden mid-run', {}, 'mid-run', 'page', 'stopped'],
    ['on the main thread (worker: false), left after the end', { worker: false }, 'after', 'page', 'complete'],
  ]) {
    const { run, beacon, pageBeacons, seen, errors } = await lifecycle(config, hide);
    assert.ok(run, `${name}: the run is stored`);
    assert.deepEqual(seen, { accepted: 1, duplicate: 0 }, `${name}: the collector saw one beacon`);
    assert.equal(run.outcome, outcome, name);
    assert.equal(beacon.run_id, run.run_id, name);
    assert.equal(run.run_context, config.worker === false ? 'main' : 'worker', name);
    assert.deepEqual(pageBeacons, sender === 'page' ? [run.run_id] : [], `${name}: the beacon went from the ${sender}`);
    assert.deepEqual(errors, [], `${name}: no uncaught error or unhandled rejection in the page`);
  }
});

// A page whose CSP blocks workers (by <meta>), loading the module from the stack and running it once (config from its
// query): window.h3probeDone resolves with status() once the run is over.
const CSP_PAGE = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'self';
  script-src 'self' 'wasm-unsafe-eval'; worker-src 'none'; connect-src 'self' https://*.h3probe.test:*">
<script type="module" src="csp-app.js"></script>`;
const CSP_APP = `import { configure, searchCompleted, whenDone } from '/h3probe/h3probe.js';
configure(Object.fromEntries(new URLSearchParams(location.search)));
window.h3probeDone = searchCompleted().then(() => whenDone());`;

test('WebKitGTK: a CSP without worker-src makes new Worker throw and reports the violation later; the beacon says csp', { skip: missing, timeout: 60000 }, async () => {
  const { driver } = webkit;
  stack.writeFixture('csp.html', CSP_PAGE);
  stack.writeFixture('csp-app.js', CSP_APP);
  const runsBefore = stack.store.countRuns();
  const query = new URLSearchParams({ h2Origin: stack.urls.h2Origin, h3Origin: stack.urls.h3Origin });
  await driver.get(`${stack.urls.page}fixtures/csp.html?${query}`);
  await driver.wait(async () => (await driver.executeScript('return typeof window.h3probeDone')) === 'object', 10000);
  const status = await driver.executeAsyncScript('const done = arguments[arguments.length - 1]; window.h3probeDone.then(done);');
  await stack.collector.waitForRuns(runsBefore + 1, 30000);
  const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
  assert.ok(run, `a run is stored for page load ${status.pageLoadId}`);
  assert.equal(run.outcome, 'complete');
  assert.equal(run.run_context, 'main');
  assert.equal(run.worker_fallback, 'csp', `errors: ${status.errors.join('; ')}`);
  assert.match(status.errors.join('\n'), /^worker: /);
});

function protocolsOf(page) {
  return [...new Set(page.entries.map((e) => e.nextHopProtocol))].join(',');
}
