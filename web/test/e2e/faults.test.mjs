// The probe under real-world faults, in real Chromium and real Firefox ESR against real Caddy, with the core in its
// Worker (the default) unless a case says otherwise: every case checks what the beacon says, where the core ran,
// that the report's counts grew by exactly what the beacon's own summary says (the page and the collector classify
// every request by the same C++ rule), and that the page saw no uncaught error, no unhandled rejection and no
// console output from the module.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack } from '../../stack/stack.mjs';
import { distRoot } from '../../stack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { ENGINES, engineMissing, launchEngine, openTab } from '../../cli/browsers.mjs';
import { experimentUrl } from '../../launch/pageLoad.mjs';
import { countModuleLeaks, moduleLeaks, NO_LEAKS } from './moduleLeaks.mjs';
import { recordPageBeacons } from './pageBeacons.mjs';

const core = await loadH3probeNode();
// What the browser itself reports on the console when a load fails; anything else on the console came from page code.
const BROWSER_REPORTS = /Failed to load resource|net::ERR_|Refused to|Content Security Policy/;

// A stack and a browser of `engine` for the cases of one describe().
function stackIn(engine, stackOptions, browserOptions = {}) {
  const ctx = {};
  before(async () => {
    ctx.stack = await startStack({ core, ...stackOptions });
    ctx.browser = await launchEngine(engine, ctx.stack, browserOptions);
  });
  after(async () => {
    await ctx.browser?.close();
    await ctx.stack?.stop();
  });
  return ctx;
}

// Loads the test page with `config`, searches `searches` times, and waits for a stored beacon (or, with
// expectBeacon false, gives a beacon time to arrive and checks none did). Every beacon stored is the only one the
// collector saw of its run: accepted once, no duplicate.
// context: where the core must have run (the beacon's run_context); fallback: why it left the Worker (its
// worker_fallback, '' in the Worker). loadError: the reason the gate's load_error beacon must give (no core ran: the
// stored run has no measurement). afterEnd(page): what the page does once the run is over (whenDone resolved);
// settleMs: how long a late beacon then has to arrive before the collector's counts are read.
async function probe(ctx, { config = {}, searches = 1, expectBeacon = true, beforeSearch, waitFor, loadError,
  context = config.worker === false ? 'main' : 'worker', fallback = config.worker === false ? 'disabled' : '', afterEnd,
  settleMs = 0 } = {}) {
  const { stack, browser } = ctx;
  const runsBefore = stack.store.countRuns();
  const countsBefore = await reportCounts(stack);
  const seenBefore = { ...stack.collector.metrics };
  const tab = await openTab(browser);
  await tab.page.addInitScript(countModuleLeaks);
  await tab.page.addInitScript(recordPageBeacons);
  if (beforeSearch?.init) await tab.page.addInitScript(beforeSearch.init);
  const requests = [];
  tab.page.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
  // What became of each beacon request the browser made, for a failure to say where a beacon was lost.
  const beaconFates = [];
  const isBeacon = (r) => new URL(r.url()).pathname === '/beacon';
  // (Playwright's response() is a promise, puppeteer's not: either way, nothing here may throw into the driver.)
  tab.page.on('requestfinished', (r) => isBeacon(r) && Promise.resolve().then(() => r.response())
    .then((res) => res?.status() ?? 'no response', () => 'no response').then((fate) => beaconFates.push(String(fate))));
  tab.page.on('requestfailed', (r) => isBeacon(r) && beaconFates.push(`failed: ${r.failure()?.errorText}`));
  await tab.page.goto(experimentUrl(stack, config));
  for (let i = 0; i < searches; i++) {
    await tab.page.fill('#query', `search ${i}`);
    await tab.page.press('#query', 'Enter');
    await tab.page.waitForFunction((n) => Number(document.body.dataset.searches) === n, i + 1);
  }
  if (waitFor) await waitFor(tab.page);
  let run = null;
  if (loadError) {
    // The gate's own beacon: one, with the reason, and nothing measured.
    await stack.collector.waitForRuns(runsBefore + 1, 20000).catch(async (error) => {
      const { state, beaconQueued, errors } = await tab.page.evaluate(() => window.h3probeStatus());
      throw new Error(`${error.message}; the page: state ${state}, beaconQueued ${beaconQueued}, errors ${JSON.stringify(errors)}; ` +
        `its beacon requests: ${JSON.stringify(beaconFates)}, sendBeacon calls ${await tab.page.evaluate(() => window.__pageBeacons.length)}`);
    });
    const pageLoadId = await tab.page.evaluate(() => window.h3probeStatus().pageLoadId);
    run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(pageLoadId);
    assert.ok(run, 'the load_error beacon of this page load is stored');
    assert.equal(run.outcome, 'load_error');
    assert.equal(run.reason, loadError, `the reason (error: ${run.error})`);
    assert.equal(stack.store.db.prepare('SELECT count(*) FROM requests WHERE run_id = ?').pluck().get(run.run_id), 0);
    await tab.page.waitForTimeout(500);
    assert.equal(stack.store.countRuns(), runsBefore + 1, 'one beacon per page load');
  } else if (expectBeacon) {
    await stack.collector.waitForRuns(runsBefore + 1, 20000);
    // The run is over for the page once the worker has told it its beacon went (the collector may have stored it first).
    const { pageLoadId } = await tab.page.evaluate(() => window.h3probeDone());
    run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(pageLoadId);
    assert.ok(run, 'the run of this page load is stored');
    // What the page's module summarised and what the report counts from the stored classes must agree.
    const { summary } = JSON.parse(await tab.page.evaluate(() => window.h3probeStatus().beacon));
    const after = await reportCounts(stack);
    assert.deepEqual({ usable: after.usable - countsBefore.usable, fallbacks: after.fallbacks - countsBefore.fallbacks,
      excluded: after.excluded - countsBefore.excluded }, { usable: summary.control.n + summary.treatment.n,
      fallbacks: summary.treatment.fallbacks + summary.control.fallbacks, excluded: summary.control.excluded + summary.treatment.excluded },
    'the report counts this run as the beacon summary does');
  } else {
    await tab.page.waitForTimeout(1500);
    assert.equal(stack.store.countRuns(), runsBefore, 'no beacon stored');
  }
  if (afterEnd) {
    await tab.page.evaluate(() => window.h3probeDone());
    await afterEnd(tab.page);
  }
  if (settleMs) await tab.page.waitForTimeout(settleMs);
  const seen = { accepted: stack.collector.metrics.accepted - seenBefore.accepted,
    duplicate: stack.collector.metrics.duplicate - seenBefore.duplicate };
  if (run) assert.deepEqual(seen, { accepted: 1, duplicate: 0 }, 'the collector saw one beacon of this page load');
  const pageBeacons = await tab.page.evaluate(() => window.__pageBeacons);
  const status = await tab.page.evaluate(() => window.h3probeStatus());
  const touched = await tab.page.evaluate(() => window.__touched ?? null);
  // However the run ended, or if it never started, nothing of the module keeps running in the page.
  const leaks = await moduleLeaks(tab.page);
  if (status.run === 'done' || status.state !== 'started') assert.deepEqual(leaks, NO_LEAKS, 'nothing left running');
  // The beacon as the page sent it (the collector keeps rows, not the text).
  const beacon = run && JSON.parse(status.beacon);
  if (run && !loadError) {
    assert.equal(run.run_context, context, 'where the core ran');
    assert.equal(run.worker_fallback, fallback, 'why it left the Worker');
    assert.equal(beacon.context.worker_fallback, fallback);
  }
  const samples = beacon ? beacon.samples : [];
  const phase = (p) => samples.filter((s) => s.phase === p);
  const probeRequests = requests.filter((r) => r.url.includes('/noop'));
  await assertPageUnharmed(tab);
  await tab.context.close();
  return { status, run, beacon, samples, phase, requests, probeRequests, touched, leaks, pageBeacons };
}

// The overall counts of the report over everything the stack stored so far: the requests over their arm's protocol
// (the run summary's n; the report's arms hold every request as assigned, docs/design.md 3.3), the fallbacks and the rest.
async function reportCounts(stack) {
  const [all] = (await makeReport(core, { db: stack.store.db })).report.groups;
  const notUsable = Object.entries(all.excluded).filter(([c]) => c !== 'missing_metric').reduce((a, [, n]) => a + n, 0);
  const excluded = Object.values(all.excluded).reduce((a, b) => a + b, 0);
  return { usable: all.requests - notUsable, fallbacks: all.excluded.fallback, excluded };
}

async function assertPageUnharmed(tab) {
  assert.deepEqual(await tab.uncaught(), [], 'no uncaught error or unhandled rejection in the page');
  const own = tab.messages().filter((m) => !(m.type === 'error' && BROWSER_REPORTS.test(m.text)));
  assert.deepEqual(own, [], 'nothing on the console but the browser\'s own load failures');
  // The host page's search still works whatever the probe met.
  assert.equal(await tab.page.locator('#results li').count(), 5);
}

// Every case, in one engine.
function faultMatrix(engine) {
  const withStack = (stackOptions, browserOptions) => stackIn(engine, stackOptions, browserOptions);
  // Cases a browser cannot express are skipped in it with the reason (node:test prints it).
  const ONLY_CHROMIUM = (reason) => (engine === 'chromium' ? false : reason);
  describe('HTTP/3 origin with UDP closed (Caddy without h3: no QUIC listener, no Alt-Svc)', () => {
    const ctx = withStack({ h3: false }, { forceQuic: false });
    test('every treatment request is a fallback to h2, counted as one in the HTTP/3 arm', async () => {
      const { beacon, phase } = await probe(ctx);
      assert.equal(phase('treatment').length, 5);
      for (const s of phase('treatment')) assert.equal(s.protocol, 'h2');
      assert.equal(beacon.summary.treatment.n, 0);
      assert.equal(beacon.summary.treatment.fallbacks, 5);
      assert.equal(beacon.summary.control.n, 5);
      assert.equal(beacon.summary.diff_median_ms, null);
    });
  });

  describe('HTTP/3 origin with UDP closed, QUIC forced on (no TCP fallback allowed)', {
    skip: ONLY_CHROMIUM('Firefox has no switch that forbids the TCP fallback: its Alt-Svc mapping pref tries HTTP/3 first and falls back (the case above)'),
  }, () => {
    const ctx = withStack({ h3: false }, { forceQuic: true });
    test('treatment requests are network errors, never latencies, and the beacon is still sent', async () => {
      const { beacon, phase } = await probe(ctx);
      for (const s of phase('treatment')) {
        assert.equal(s.result, 'network_error');
        assert.equal(s.network_ms, null);
      }
      assert.equal(beacon.summary.treatment.n, 0);
      assert.equal(beacon.summary.control.n, 5);
      assert.equal(beacon.outcome, 'complete');
    });
  });

  describe('Chromium without the force-QUIC flag (Alt-Svc not trusted for a private certificate)', {
    skip: ONLY_CHROMIUM('a Chromium flag (--origin-to-force-quic-on); what Firefox does without its Alt-Svc mapping pref is not part of this matrix'),
  }, () => {
    const ctx = withStack({}, { forceQuic: false });
    test('the treatment arm silently went over h2: recorded as fallbacks, not as HTTP/3', async () => {
      const { beacon, phase } = await probe(ctx);
      for (const s of phase('treatment')) {
        assert.equal(s.origin, 'h3');
        assert.equal(s.protocol, 'h2');
      }
      assert.equal(beacon.summary.treatment.fallbacks, 5);
      assert.equal(beacon.summary.treatment.n, 0);
    });
  });

  describe('origins behind a proxy that forwards over HTTP/1.1 (Server-Timing says HTTP/1.1)', () => {
    const ctx = withStack({ claimProtocol: 'HTTP/1.1' });
    test('client and server disagree on every measured request: each is a protocol_mismatch, counted, never a latency', async () => {
      const { beacon, phase } = await probe(ctx);
      const measured = [...phase('control'), ...phase('treatment')];
      for (const s of measured) assert.equal(s.server_protocol, 'HTTP/1.1');
      // Chromium (QUIC forced) uses the protocol asked every time; Firefox may still take an h3 request over h2 now
      // and then (a fallback, which is checked first). Every other one is a mismatch.
      const asked = measured.filter((s) => s.protocol === s.origin);
      if (engine === 'chromium') assert.equal(asked.length, 10);
      assert.ok(asked.length >= 5, `requests over the protocol asked: ${asked.length}`);
      assert.equal(beacon.summary.control.n, 0);
      assert.equal(beacon.summary.treatment.n, 0);
      assert.equal(beacon.summary.treatment.fallbacks, 10 - asked.length, 'a mismatch is not a fallback');
      const { report } = await makeReport(core, { db: ctx.stack.store.db });
      assert.equal(report.groups[0].excluded.protocol_mismatch, asked.length);
      assert.ok(report.exclusions.includes('protocol_mismatch'));
    });
  });

  describe('HTTP/2 origin down', () => {
    const ctx = withStack({ h2Down: true });
    test('control requests are network errors and the beacon is still sent', async () => {
      const { beacon, phase } = await probe(ctx);
      for (const s of phase('control')) assert.equal(s.result, 'network_error');
      assert.equal(phase('prewarm').find((s) => s.origin === 'h2').result, 'network_error');
      assert.equal(beacon.summary.control.n, 0);
      assert.equal(beacon.summary.control.excluded, 5);
      assert.equal(beacon.summary.treatment.n, 5);
    });
  });

  describe('no-op endpoint answering 500', () => {
    const ctx = withStack({ noopStatus: 500 });
    test('every request is an http_error with status 500, a failure in both arms', async () => {
      const { beacon, samples } = await probe(ctx);
      assert.equal(samples.length, 13);
      for (const s of samples) {
        assert.equal(s.result, 'http_error');
        assert.equal(s.http_status, 500);
      }
      assert.equal(beacon.summary.control.n + beacon.summary.treatment.n, 0);
    });
  });

  describe('no-op endpoint answering after the per-request timeout', () => {
    const ctx = withStack({ noopDelayMs: 600 });
    test('every request is a timeout, the run completes and its beacon says so', async () => {
      const { beacon, samples } = await probe(ctx, { config: { requestTimeoutMs: 200 } });
      assert.equal(samples.length, 13);
      for (const s of samples) {
        assert.equal(s.result, 'timeout');
        assert.equal(s.network_ms, null);
      }
      assert.equal(beacon.outcome, 'complete');
    });
  });

  describe('no-op endpoint slower than the run deadline', () => {
    const ctx = withStack({ noopDelayMs: 600 });
    test('the run ends at its deadline with requests in flight, and nothing of it keeps running', async () => {
      const { beacon, leaks } = await probe(ctx, { config: { runDeadlineMs: 1000 } });
      assert.equal(beacon.outcome, 'deadline');
      assert.ok(beacon.samples.some((s) => s.result === 'aborted'), 'a request was cut off');
      assert.deepEqual(leaks, NO_LEAKS);
    });
  });

  describe('Timing-Allow-Origin missing on the test origins', () => {
    const ctx = withStack({ tao: false });
    test('samples are timing_unavailable and no latency column holds a zero', async () => {
      const { run, samples } = await probe(ctx);
      for (const s of samples) {
        assert.equal(s.result, 'timing_unavailable');
        for (const k of ['network_ms', 'dns_ms', 'connect_ms', 'request_ms', 'response_ms', 'queue_ms']) assert.equal(s[k], null, k);
        assert.ok(s.fetch_ms > 0, 'the script-side time is still recorded');
      }
      const zeros = ctx.stack.store.db.prepare(`SELECT count(*) FROM requests WHERE run_id = ? AND
        (network_ms IS NOT NULL OR request_ms IS NOT NULL)`).pluck().get(run.run_id);
      assert.equal(zeros, 0);
    });
  });

  describe('beacon endpoint answering 500', () => {
    const ctx = withStack({ beaconStatus: 500 });
    test('the run completes and the page sees no exception', async () => {
      const { status, probeRequests } = await probe(ctx, { expectBeacon: false, waitFor: (page) =>
        page.waitForFunction(() => window.h3probeStatus().run === 'done') });
      assert.equal(status.run, 'done');
      assert.equal(status.beaconQueued, true);
      assert.equal(probeRequests.length, 13);
    });
  });

  describe('module loading fails', () => {
    const ctx = withStack({});
    before(() => {
      // moduleUrl's folder holds the worker and the JS glue, but its .wasm answers 404.
      for (const file of ['worker.js', 'h3probe_browser.mjs']) ctx.stack.writeFixture(file, fs.readFileSync(path.join(distRoot, file)));
    });
    test('WASM URL 404: the page is unaffected, no run starts, and a load_error beacon says wasm_fetch', async () => {
      const { status, probeRequests, requests } = await probe(ctx, { loadError: 'wasm_fetch',
        config: { moduleUrl: '/fixtures/h3probe_browser.mjs' },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.ok(requests.some((r) => r.url.endsWith('/fixtures/h3probe_browser.wasm')), 'the .wasm was asked for');
      assert.equal(probeRequests.length, 0);
      assert.equal(status.state, 'error');
      assert.ok(status.errors.length > 0);
    });
    test('the .wasm served as text/plain: a load_error beacon says wasm_type', async () => {
      ctx.stack.writeFixture('h3probe_browser.wasm', fs.readFileSync(path.join(distRoot, 'h3probe_browser.wasm')));
      // The page's fetch() hands the module the .wasm's bytes with another Content-Type, as a misconfigured server
      // would (Caddy types by extension). On the main thread, where the page's fetch() is the module's.
      const { status, probeRequests } = await probe(ctx, { loadError: 'wasm_type',
        config: { moduleUrl: '/fixtures/h3probe_browser.mjs', worker: false },
        beforeSearch: { init: () => {
          const fetchAsServed = window.fetch;
          window.fetch = (url, init) => (String(url).endsWith('/h3probe_browser.wasm')
            ? fetchAsServed(url, init).then((r) => new Response(r.body, { status: r.status, headers: { 'Content-Type': 'text/plain' } }))
            : fetchAsServed(url, init));
        } },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.equal(probeRequests.length, 0);
      assert.equal(status.beaconQueued, true);
      assert.equal(JSON.parse(status.beacon).reason, 'wasm_type');
      fs.rmSync(path.join(ctx.stack.runDir, 'fixtures', 'h3probe_browser.wasm')); // the 404 case needs it missing
    });
    test('the glue missing (and the .wasm beside it): a load_error beacon says glue_import', async () => {
      const { probeRequests } = await probe(ctx, { loadError: 'glue_import',
        config: { moduleUrl: '/fixtures/missing.mjs' },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.equal(probeRequests.length, 0);
    });
    test('a beacon URL the core would refuse: no load_error beacon is sent', async () => {
      const { status } = await probe(ctx, { expectBeacon: false,
        config: { moduleUrl: '/fixtures/missing/h3probe_browser.mjs', beaconUrl: '//elsewhere.example/beacon' },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.ok(!status.beacon, 'no beacon text in status()');
      assert.equal(status.state, 'error');
    });
    // The gate counts a config id in UTF-8 bytes, as the core does (web/src/loadErrorTarget.js, configRules.test.mjs).
    test('a config id of 80 bytes in 40 characters, which the core refuses: no load_error beacon is sent', async () => {
      const { status } = await probe(ctx, { expectBeacon: false,
        config: { moduleUrl: '/fixtures/missing/h3probe_browser.mjs', configId: '\u00e9'.repeat(40) },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.ok(!status.beacon, 'no beacon text in status()');
    });
    test('a config id of 64 bytes in 32 characters: the load_error beacon carries it, and the collector stores it', async () => {
      const { run } = await probe(ctx, { loadError: 'glue_import',
        config: { moduleUrl: '/fixtures/missing.mjs', configId: '\u00e9'.repeat(32) },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
      assert.equal(run.config_id, '\u00e9'.repeat(32));
    });
    // Where the browser refuses the beacon (sendBeacon returns false: a quota, an extension) or has none (Firefox with
    // beacons turned off), the gate sends its load_error beacon by a keepalive fetch, and it is stored.
    for (const [refusal, init] of [
      ['returns false', () => { navigator.sendBeacon = () => false; }],
      ['is missing', () => { delete navigator.sendBeacon; delete Navigator.prototype.sendBeacon; }], // (the first: pageBeacons' wrapper)
    ]) {
      test(`navigator.sendBeacon ${refusal}: the load_error beacon goes by a keepalive fetch, and the collector stores it`, async () => {
        const { status, run, requests } = await probe(ctx, { loadError: 'glue_import', config: { moduleUrl: '/fixtures/missing.mjs' },
          beforeSearch: { init }, waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
        assert.equal(status.beaconQueued, true);
        assert.equal(requests.filter((r) => new URL(r.url).pathname === '/beacon').length, 1, 'one beacon request, the fetch');
        assert.equal(run.reason, 'glue_import');
      });
    }
    test('a browser without Worker: the run completes on the main thread, and its beacon says no_worker', async () => {
      const { beacon, status } = await probe(ctx, { context: 'main', fallback: 'no_worker',
        beforeSearch: { init: () => { delete window.Worker; } } });
      assert.equal(beacon.outcome, 'complete');
      assert.equal(beacon.summary.control.n, 5);
      assert.deepEqual(status.errors, [], 'no Worker is no error');
    });
    test('a browser without WebAssembly: the probe does nothing at all', async () => {
      const { status, requests } = await probe(ctx, { expectBeacon: false,
        beforeSearch: { init: () => { delete window.WebAssembly; } } });
      assert.equal(status.state, 'unsupported');
      assert.equal(requests.filter((r) => r.url.includes('/noop') || /\/h3probe\/(run\.js|worker\.js|h3probe_browser\.)/.test(r.url)).length, 0);
    });
  });

  describe('the module deployed in part (its folder holds the gate and only some of the rest)', () => {
    const partial = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-partial-'));
    const ctx = withStack({ roots: { module: partial } });
    const deploy = (files) => {
      for (const f of fs.readdirSync(partial)) fs.rmSync(path.join(partial, f));
      for (const f of files) fs.copyFileSync(path.join(distRoot, f), path.join(partial, f));
    };
    after(() => fs.rmSync(partial, { recursive: true, force: true }));
    test('run.js missing: a load_error beacon says run_import', async () => {
      deploy(['h3probe.js']);
      await probe(ctx, { loadError: 'run_import',
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
    });
    test('worker.js missing: no Worker, no main-thread fallback, and a load_error beacon says worker_import', async () => {
      deploy(['h3probe.js', 'run.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']);
      await probe(ctx, { loadError: 'worker_import',
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'error') });
    });
  });

  describe('Content-Security-Policy without wasm-unsafe-eval', () => {
    const ctx = withStack({ pageCsp: "default-src 'self'; connect-src 'self' https://*.h3probe.test:*" });
    test('the page is unaffected, the probe makes no measurement, and a load_error beacon says csp', async () => {
      const { status, probeRequests } = await probe(ctx, { loadError: 'csp',
        waitFor: (page) => page.waitForFunction(() => ['error', 'started'].includes(window.h3probeStatus().state)) });
      assert.equal(status.state, 'error');
      assert.equal(probeRequests.length, 0);
    });
  });

  describe('Content-Security-Policy with wasm-unsafe-eval', () => {
    const ctx = withStack({ pageCsp: "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' https://*.h3probe.test:*" });
    test('the documented CSP lets the probe run', async () => {
      const { beacon } = await probe(ctx);
      assert.equal(beacon.outcome, 'complete');
      assert.equal(beacon.summary.treatment.n, 5);
    });
  });

  describe('Content-Security-Policy with worker-src \'none\'', () => {
    const ctx = withStack({ pageCsp: "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'none'; connect-src 'self' https://*.h3probe.test:*" });
    test('no Worker can start: the run falls back to the main thread, completes, its beacon says csp, and the page sends it once', async () => {
      const { beacon, status, pageBeacons, run } = await probe(ctx, { context: 'main', fallback: 'csp' });
      assert.deepEqual(pageBeacons, [run.run_id]);
      assert.equal(beacon.outcome, 'complete');
      assert.equal(beacon.summary.control.n, 5);
      assert.equal(beacon.summary.treatment.n, 5);
      // Why it ran there, in status() and in the beacon.
      assert.equal(status.errors.length, 1, status.errors.join('; '));
      assert.match(status.errors[0], /^worker: /);
      assert.deepEqual(beacon.errors, status.errors);
    });
  });

  describe('page lifecycle', () => {
    const ctx = withStack({ noopDelayMs: 300 });
    const hide = () => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    };
    // The page is left: hidden, then pagehide.
    const leave = () => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
      dispatchEvent(new Event('pagehide'));
    };
    // Long enough for a second beacon of the run (the worker's, after the page sent the partial one) to reach the
    // collector on loopback.
    const SETTLE_MS = 1500;
    for (const worker of [true, false]) {
      const where = worker ? 'in its Worker' : 'on the main thread';
      test(`tab hidden mid-run (core ${where}): the run stops, the page sends its partial beacon at once, and nothing else`, async () => {
        let running;
        const { beacon, phase, leaks, pageBeacons, run } = await probe(ctx, { config: { worker }, settleMs: SETTLE_MS,
          waitFor: async (page) => {
            await page.waitForFunction(() => window.h3probeStatus().run === 'arms');
            running = await moduleLeaks(page);
            await page.evaluate(hide);
          } });
        // Mid-run the counters see the module at work (so their zero after the run means something). In a Worker the
        // observer and the timers are the worker's: the page holds only the two listeners.
        assert.equal(running.observers, worker ? 0 : 1);
        assert.ok(worker ? running.timers === 0 : running.timers >= 1, `timers mid-run: ${running.timers}`);
        assert.equal(running.listeners, 2, 'visibilitychange and pagehide');
        assert.deepEqual(leaks, NO_LEAKS);
        assertStoppedAfterPrewarm(beacon, phase);
        assert.deepEqual(pageBeacons, [run.run_id], 'the page sent the partial beacon, synchronously');
      });
      test(`visible to the end (core ${where}): ${worker ? 'the worker sends the beacon with fetch keepalive, the page none' : 'the page sends the beacon'}; hidden and left just after, nothing more`, async () => {
        const { beacon, pageBeacons, run } = await probe(ctx, { config: { worker }, afterEnd: (page) => page.evaluate(leave),
          settleMs: SETTLE_MS });
        assert.equal(beacon.outcome, 'complete');
        assert.equal(beacon.context.visible_throughout, true);
        assert.deepEqual(pageBeacons, worker ? [] : [run.run_id]);
      });
    }
    // What a run hidden while its first arm (control) is in flight beacons: the pre-warm, the arm cut short.
    function assertStoppedAfterPrewarm(beacon, phase) {
      assert.equal(beacon.outcome, 'stopped');
      assert.equal(beacon.error, 'page hidden');
      assert.equal(beacon.context.visible_throughout, false);
      assert.equal(phase('prewarm').length, 3);
      assert.ok(phase('control').every((s) => s.result === 'aborted'), 'the control arm was cut short');
      assert.equal(phase('treatment').length, 0);
    }
    test('a search in a hidden tab starts no run', async () => {
      const { status, probeRequests } = await probe(ctx, { expectBeacon: false,
        waitFor: () => {}, beforeSearch: { init: () => {
          Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        } } });
      assert.equal(status.state, 'hidden');
      assert.equal(probeRequests.length, 0);
    });
    test('a search in a hidden tab, then one once the tab is visible: the second one runs', async () => {
      const { stack, browser } = ctx;
      const runsBefore = stack.store.countRuns();
      const tab = await openTab(browser);
      await tab.page.addInitScript(() => {
        window.__visibility = 'hidden';
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => window.__visibility });
      });
      await tab.page.goto(experimentUrl(stack));
      const search = async (n) => {
        await tab.page.fill('#query', `search ${n}`);
        await tab.page.press('#query', 'Enter');
        await tab.page.waitForFunction((k) => Number(document.body.dataset.searches) === k, n);
      };
      await search(1);
      await tab.page.waitForFunction(() => window.h3probeStatus().state === 'hidden');
      await tab.page.evaluate(() => { window.__visibility = 'visible'; });
      await search(2);
      await tab.page.waitForFunction(() => window.h3probeStatus().run === 'done', null, { timeout: 20000 });
      const result = await tab.page.evaluate(() => window.h3probeDone());
      assert.equal(result.state, 'started');
      assert.equal(result.run, 'done');
      await stack.collector.waitForRuns(runsBefore + 1, 20000);
      assert.deepEqual(await tab.uncaught(), []);
      await tab.context.close();
    });
  });

  describe('sampling and remote control', () => {
    const ctx = withStack({ fixtures: {
      'off.json': JSON.stringify({ enabled: false }),
      'zero.json': JSON.stringify({ sampleRate: 0 }),
      'bad.json': JSON.stringify({ requestsPerArm: 'many' }),
      'h3first.json': JSON.stringify({ order: 'h3-first', configId: 'remote-7' }),
    } });
    const noProbeTraffic = (requests) =>
      requests.filter((r) => r.url.includes('/noop') || /\/h3probe\/(run\.js|worker\.js|h3probe_browser\.)/.test(r.url) || r.url.includes('/beacon'));

    test('sample rate 0: no request at all, not even for the module', async () => {
      const { status, requests } = await probe(ctx, { expectBeacon: false, config: { sampleRate: 0 } });
      assert.equal(status.state, 'not_sampled');
      assert.deepEqual(noProbeTraffic(requests), []);
    });
    test('remote enabled:false turns the probe off: only the config is fetched', async () => {
      const { status, requests } = await probe(ctx, { expectBeacon: false, config: { remoteConfigUrl: '/fixtures/off.json' },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'disabled') });
      assert.equal(status.state, 'disabled');
      assert.equal(requests.filter((r) => r.url.includes('/fixtures/off.json')).length, 1);
      assert.deepEqual(noProbeTraffic(requests), []);
    });
    test('remote sampleRate 0 turns the probe off', async () => {
      const { status, requests } = await probe(ctx, { expectBeacon: false, config: { remoteConfigUrl: '/fixtures/zero.json' },
        waitFor: (page) => page.waitForFunction(() => window.h3probeStatus().state === 'not_sampled') });
      assert.deepEqual(noProbeTraffic(requests).filter((r) => !r.url.includes('/beacon')), []);
      assert.equal(status.state, 'not_sampled');
    });
    test('an invalid remote config: no run, and one error beacon saying why', async () => {
      const { beacon, status, probeRequests } = await probe(ctx, { config: { remoteConfigUrl: '/fixtures/bad.json' } });
      assert.equal(status.state, 'invalid_remote_config');
      assert.equal(beacon.outcome, 'error');
      assert.match(beacon.error, /requestsPerArm: must be an integer/);
      assert.deepEqual(beacon.samples, []);
      assert.equal(probeRequests.length, 0);
    });
    test('a remote config that cannot be fetched: no run, and an error beacon saying why', async () => {
      const { beacon, probeRequests } = await probe(ctx, { config: { remoteConfigUrl: '/fixtures/missing.json' } });
      assert.equal(beacon.outcome, 'error');
      assert.match(beacon.error, /remote config: HTTP 404/);
      assert.equal(probeRequests.length, 0);
    });
    test('a valid remote config is applied: its order and config id show in the beacon', async () => {
      const { beacon, samples } = await probe(ctx, { config: { remoteConfigUrl: '/fixtures/h3first.json', sampleRate: 1 } });
      assert.equal(beacon.order, 'h3-first');
      assert.equal(beacon.config_id, 'remote-7');
      assert.equal(beacon.sample_rate, 1);
      const measured = samples.filter((s) => s.phase !== 'prewarm');
      assert.equal(measured[0].phase, 'treatment', 'the HTTP/3 arm came first');
    });
  });

  describe('isolation from the host page', () => {
    const ctx = withStack({});
    test('no cookie sent, no storage touched, the Resource Timing buffer left alone; context without personal data', async () => {
      const init = () => {
        window.__touched = [];
        for (const name of ['clearResourceTimings', 'setResourceTimingBufferSize']) {
          const original = performance[name].bind(performance);
          performance[name] = (...args) => { window.__touched.push(name); return original(...args); };
        }
        for (const name of ['setItem', 'removeItem', 'clear']) {
          const original = Storage.prototype[name];
          Storage.prototype[name] = function (...args) { window.__touched.push(`storage.${name}`); return original.apply(this, args); };
        }
        document.cookie = 'session=secret-user-42; path=/';
      };
      const { beacon, probeRequests, touched } = await probe(ctx, { beforeSearch: { init },
        config: { configId: 'isolation' } });
      assert.deepEqual(touched, [], 'no storage call, no Resource Timing buffer call');
      assert.equal(probeRequests.length, 13);
      for (const r of probeRequests) {
        assert.equal(r.headers.cookie, undefined);
        assert.ok(!r.headers.referer, 'the host page URL is not sent to the test origins');
      }
      const text = JSON.stringify(beacon);
      assert.doesNotMatch(text, /secret-user-42|search%200|search 0|127\.0\.0\.1/);
      assert.match(beacon.context.page_origin, /^https:\/\/page\.h3probe\.test:\d+$/);
      assert.ok(beacon.context.timer_resolution_ms > 0 && beacon.context.timer_resolution_ms <= 1);
      assert.ok(beacon.context.module_load_ms > 0);
      assert.equal(beacon.context.visible_throughout, true);
      assert.equal(typeof beacon.context.effective_type, 'string');
    });
  });
}

for (const name of ENGINES) {
  describe(name, { skip: engineMissing(name) ?? false }, () => faultMatrix(name));
}
