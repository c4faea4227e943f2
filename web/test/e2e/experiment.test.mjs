// The experiment end to end: real headless Chromium, real Caddy (HTTP/2 and HTTP/3), the C++ decoder, real SQLite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack } from '../../stack/stack.mjs';
import { launchBrowser, openPage } from '../../cli/chromium.mjs';
import { aaConfig, experimentUrl } from '../../launch/pageLoad.mjs';
import { countModuleLeaks, moduleLeaks, NO_LEAKS } from './moduleLeaks.mjs';
import { networkMsOf, recordWorkerEntries, workerEntries } from './workerEntries.mjs';

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser(stack);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

// Opens the test page, records every request the page makes, searches `searches` times and waits for one run.
async function loadAndSearch({ searches = 1, config = {}, init } = {}) {
  const before = stack.store.countRuns();
  const tab = await openPage(browser, null);
  if (init) await tab.page.addInitScript(init);
  const requests = [];
  tab.page.on('request', (r) => requests.push(r.url()));
  await tab.page.goto(experimentUrl(stack, config));
  for (let i = 0; i < searches; i++) {
    await tab.page.fill('#query', `search ${i}`);
    await tab.page.press('#query', 'Enter');
    await tab.page.waitForFunction((n) => Number(document.body.dataset.searches) === n, i + 1);
  }
  await stack.collector.waitForRuns(before + 1, 30000);
  // The run is over for the page once the worker has told it its beacon went (the collector may have stored it first).
  const status = await tab.page.evaluate(() => window.h3probeDone());
  const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
  assert.ok(run, `a run is stored for page load ${status.pageLoadId}`);
  return { tab, requests, status, run, samples: stack.store.requestsFor(run.run_id) };
}

test('one search runs 3 pre-warm, 5 control and 5 treatment requests, beaconed once and stored in SQLite', async () => {
  const { tab, samples, run, status } = await loadAndSearch();
  const byPhase = (p) => samples.filter((s) => s.phase === p);
  assert.equal(byPhase('prewarm').length, 3);
  assert.deepEqual(byPhase('prewarm').map((s) => s.origin), ['h3', 'h3', 'h2']);
  assert.equal(byPhase('control').length, 5);
  assert.equal(byPhase('treatment').length, 5);
  assert.equal(run.outcome, 'complete');
  assert.equal(run.run_order, 'h2-first');
  assert.equal(status.state, 'started');
  assert.equal(status.run, 'done');
  assert.equal(status.beaconQueued, true);
  assert.deepEqual(status.errors, []);
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('the core runs in a Worker: each network_ms is its own Resource Timing entry\'s, to the microsecond', async () => {
  const { tab, status, run } = await loadAndSearch({ init: recordWorkerEntries });
  assert.equal(run.run_context, 'worker');
  assert.equal(run.worker_fallback, '');
  // The page's own timeline has none of the probe's requests: they were made by the worker.
  assert.equal(await tab.page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('h3probe=')).length), 0);
  const entries = await workerEntries(tab.page);
  const byUrl = new Map(entries.map((e) => [e.name, e]));
  const beacon = JSON.parse(status.beacon);
  const runId = beacon.run_id;
  assert.equal(beacon.samples.length, 13);
  for (const s of beacon.samples) {
    const url = [...byUrl.keys()].find((u) => u.endsWith(`h3probe=${runId}-${s.phase}-${s.idx}`));
    assert.ok(url, `the worker's entry for ${s.phase}[${s.idx}]`);
    const entry = byUrl.get(url);
    assert.equal(s.network_ms, networkMsOf(entry), `${s.phase}[${s.idx}] network_ms`);
    assert.equal(s.protocol, entry.nextHopProtocol);
    assert.equal(s.server_protocol, entry.serverTiming.find((t) => t.name === 'proto').description);
  }
  assert.deepEqual(status.errors, []);
  await tab.context.close();
});

test('with worker: false the core runs on the main thread, and the beacon says so', async () => {
  const { tab, status, run, samples } = await loadAndSearch({ config: { worker: false } });
  assert.equal(run.run_context, 'main');
  assert.equal(run.worker_fallback, 'disabled', 'why: the config said so');
  assert.equal(run.outcome, 'complete');
  assert.equal(samples.filter((s) => s.request_class.startsWith('usable_')).length, 10);
  const own = await tab.page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('h3probe=')).length);
  assert.equal(own, 13, 'the requests are in the page\'s own timeline');
  assert.deepEqual(status.errors, []);
  await tab.context.close();
});

test('once its beacon is sent, the module leaves no observer, timer or listener running in the page', async () => {
  const { tab, status } = await loadAndSearch({ init: countModuleLeaks });
  assert.equal(status.run, 'done');
  assert.deepEqual(await moduleLeaks(tab.page), NO_LEAKS);
  // status() still reads the finished run after the host is closed.
  assert.equal(typeof status.beacon, 'string');
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('every control sample went over h2 and every treatment sample over h3, with positive finite network times', async () => {
  const { tab, samples, run } = await loadAndSearch();
  for (const s of samples.filter((x) => x.phase !== 'prewarm')) {
    assert.equal(s.protocol, s.phase === 'control' ? 'h2' : 'h3', `${s.phase}[${s.idx}] nextHopProtocol`);
    assert.equal(s.result, 'ok');
    assert.equal(s.http_status, 204);
    assert.ok(Number.isFinite(s.network_ms) && s.network_ms > 0, `${s.phase}[${s.idx}] network_ms ${s.network_ms}`);
    assert.ok(s.request_ms >= 0 && s.response_ms >= 0 && s.queue_ms >= 0);
    // Pre-warm leaves both arms on warm connections: no measured request pays a handshake.
    assert.equal(s.reused, 1, `${s.phase}[${s.idx}] reused a warm connection`);
    // Both ends agree: the origin saw the protocol the browser names (Server-Timing, read by the module).
    assert.equal(s.server_protocol, s.phase === 'control' ? 'HTTP/2.0' : 'HTTP/3.0', `${s.phase}[${s.idx}] server_protocol`);
    assert.equal(s.request_class, `usable_${s.phase}`);
  }
  // The collector names the browser from the beacon request's own headers.
  assert.equal(run.browser, 'chromium');
  assert.ok(run.browser_major >= 100, `browser_major ${run.browser_major}`);
  const { summary } = JSON.parse(await tab.page.evaluate(() => window.h3probeStatus().beacon));
  assert.equal(summary.control.n, 5);
  assert.equal(summary.treatment.n, 5);
  assert.equal(summary.treatment.fallbacks, 0);
  assert.ok(Number.isFinite(summary.diff_median_ms));
  await tab.context.close();
});

test('searching three times on one page load runs the experiment once', async () => {
  const { tab, requests } = await loadAndSearch({ searches: 3 });
  const runsAfter = stack.store.countRuns();
  await tab.page.waitForTimeout(1500); // time for a second run to show up, were there one
  assert.equal(stack.store.countRuns(), runsAfter);
  assert.equal(requests.filter((u) => u.includes('/noop?h3probe=')).length, 13);
  assert.equal(requests.filter((u) => u.endsWith('.wasm')).length, 1);
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('nothing is fetched or run before a search completes', async () => {
  const runsBefore = stack.store.countRuns();
  const tab = await openPage(browser, null);
  const requests = [];
  tab.page.on('request', (r) => requests.push(r.url()));
  await tab.page.goto(experimentUrl(stack));
  await tab.page.waitForTimeout(1500);
  assert.deepEqual(requests.filter((u) => u.includes('/noop') || u.includes('/beacon')), []);
  // Before a search the module is one request: the gate. The run, the glue and the .wasm load after it.
  assert.deepEqual(requests.filter((u) => new URL(u).pathname.startsWith('/h3probe/')).map((u) => new URL(u).pathname),
    ['/h3probe/h3probe.js']);
  const status = await tab.page.evaluate(() => window.h3probeStatus());
  assert.equal(status.state, 'configured');
  assert.equal(stack.store.countRuns(), runsBefore);
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('an invalid config starts no run and says why, without an error in the page', async () => {
  const tab = await openPage(browser, null);
  const requests = [];
  tab.page.on('request', (r) => requests.push(r.url()));
  await tab.page.goto(experimentUrl(stack, { requestsPerArm: 0 }));
  await tab.page.fill('#query', 'x');
  await tab.page.press('#query', 'Enter');
  await tab.page.waitForFunction(() => window.h3probeStatus().state === 'invalid_config');
  const status = await tab.page.evaluate(() => window.h3probeStatus());
  assert.match(status.errors.join('\n'), /requestsPerArm: 0 is out of range/);
  assert.deepEqual(requests.filter((u) => u.includes('/noop')), []);
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('an A/A h3-h3 run warms both HTTP/3 origins and stores 5 + 5 usable h3 requests under arms h3-h3', async () => {
  const { tab, samples, run, requests } = await loadAndSearch({ config: { ...aaConfig(stack.urls, 'h3'), order: 'random' } });
  assert.equal(run.arms, 'h3-h3');
  assert.equal(run.outcome, 'complete');
  const probes = requests.filter((u) => u.includes('/noop?h3probe='));
  const host = (u) => new URL(u).hostname;
  assert.deepEqual(probes.filter((u) => u.includes('-prewarm-')).map(host),
    [stack.hosts.h3, stack.hosts.h3, stack.hosts.h3b, stack.hosts.h3b]);
  assert.ok(probes.filter((u) => u.includes('-control-')).every((u) => host(u) === stack.hosts.h3));
  assert.ok(probes.filter((u) => u.includes('-treatment-')).every((u) => host(u) === stack.hosts.h3b));
  assert.equal(probes.filter((u) => host(u) === stack.hosts.h2).length, 0);
  for (const phase of ['control', 'treatment']) {
    const arm = samples.filter((s) => s.phase === phase);
    assert.equal(arm.length, 5);
    for (const s of arm) {
      assert.equal(s.origin, 'h3');
      assert.equal(s.protocol, 'h3', `${phase}[${s.idx}] nextHopProtocol`);
      assert.equal(s.request_class, `usable_${phase}`);
      assert.equal(s.reused, 1, `${phase}[${s.idx}] reused a warm connection`);
    }
  }
  const record = stack.store.db.prepare('SELECT arms FROM run_records WHERE run = (SELECT rowid FROM runs WHERE run_id = ?)');
  assert.equal(record.pluck().get(run.run_id), 'h3-h3');
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('an A/A h2-h2 run never asks an HTTP/3 origin and stores 5 + 5 usable h2 requests under arms h2-h2', async () => {
  const { tab, samples, run, requests } = await loadAndSearch({ config: aaConfig(stack.urls, 'h2') });
  assert.equal(run.arms, 'h2-h2');
  const probes = requests.filter((u) => u.includes('/noop?h3probe='));
  assert.deepEqual(probes.filter((u) => u.includes('-prewarm-')).map((u) => new URL(u).hostname), [stack.hosts.h2, stack.hosts.h2b]);
  assert.ok(probes.every((u) => ![stack.hosts.h3, stack.hosts.h3b].includes(new URL(u).hostname)));
  const measured = samples.filter((s) => s.phase !== 'prewarm');
  assert.equal(measured.length, 10);
  assert.ok(measured.every((s) => s.protocol === 'h2' && s.request_class === `usable_${s.phase}`));
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});
