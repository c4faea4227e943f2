// The experiment end to end in a second browser: headless Firefox ESR (puppeteer-core over WebDriver BiDi), real Caddy
// (HTTP/2 and HTTP/3), the C++ validator, real SQLite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startStack } from '../../stack/stack.mjs';
import { FIREFOX_PATH, launchFirefox, openFirefoxPage } from '../../cli/firefox.mjs';
import { experimentUrl } from '../../launch/pageLoad.mjs';
import { networkMsOf, recordWorkerEntries } from './workerEntries.mjs';

const missing = fs.existsSync(FIREFOX_PATH) ? false
  : `Firefox not found at ${FIREFOX_PATH} (Debian package firefox-esr; npm run deps installs it)`;

let stack;
let browser;

before(async () => {
  if (missing) return;
  stack = await startStack();
  browser = await launchFirefox(stack);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('Firefox: one search runs 3 pre-warm, 5 control (h2) and 5 treatment (h3) requests, beaconed and stored', { skip: missing }, async (t) => {
  const runsBefore = stack.store.countRuns();
  const tab = await openFirefoxPage(browser);
  try {
    await tab.page.evaluateOnNewDocument(recordWorkerEntries);
    await tab.page.goto(experimentUrl(stack), { waitUntil: 'load' });
    await tab.page.type('#query', 'quarterly report');
    await tab.page.keyboard.press('Enter');
    await tab.page.waitForFunction(() => Number(document.body.dataset.searches) === 1, { timeout: 10000 });
    await stack.collector.waitForRuns(runsBefore + 1, 30000);
    const status = await tab.page.evaluate(() => window.h3probeDone());
    const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
    assert.ok(run, `a run is stored for page load ${status.pageLoadId}`);
    assert.equal(run.outcome, 'complete');
    assert.equal(run.run_context, 'worker');
    assert.equal(run.worker_fallback, '');
    assert.deepEqual(status.errors, []);
    // The worker's own Resource Timing entries: each stored network_ms is its entry's, to the microsecond.
    const entries = await tab.page.evaluate(() => window.__workerEntries);
    const entryOf = (s) => entries.find((e) => e.name.endsWith(`h3probe=${run.run_id}-${s.phase}-${s.idx}`));

    const samples = stack.store.requestsFor(run.run_id);
    const byPhase = (p) => samples.filter((s) => s.phase === p);
    assert.equal(byPhase('prewarm').length, 3);
    assert.deepEqual(byPhase('prewarm').map((s) => s.origin), ['h3', 'h3', 'h2']);
    assert.equal(byPhase('control').length, 5);
    assert.equal(byPhase('treatment').length, 5);
    for (const s of [...byPhase('control'), ...byPhase('treatment')]) {
      assert.equal(s.protocol, s.phase === 'control' ? 'h2' : 'h3', `${s.phase}[${s.idx}] nextHopProtocol`);
      assert.equal(s.result, 'ok', `${s.phase}[${s.idx}] result`);
      const entry = entryOf(s);
      assert.ok(entry, `${s.phase}[${s.idx}]: the worker's entry`);
      assert.equal(s.network_ms, networkMsOf(entry), `${s.phase}[${s.idx}] network_ms`);
      assert.equal(s.protocol, entry.nextHopProtocol);
      assert.equal(s.server_protocol, entry.serverTiming.find((x) => x.name === 'proto')?.description);
      // Firefox's clock ticks in whole milliseconds: a warm loopback request can take less than one tick, and reads 0.
      assert.ok(Number.isInteger(s.network_ms) && s.network_ms >= 0, `${s.phase}[${s.idx}] network_ms ${s.network_ms}`);
      // Firefox exposes serverTiming too: both ends agree.
      assert.equal(s.server_protocol, s.phase === 'control' ? 'HTTP/2.0' : 'HTTP/3.0', `${s.phase}[${s.idx}] server_protocol`);
    }
    // No client hints in Firefox: the collector named it from its User-Agent.
    assert.equal(run.browser, 'firefox');
    assert.ok(run.browser_major >= 115, `browser_major ${run.browser_major}`);
    const classes = samples.filter((s) => s.phase !== 'prewarm').map((s) => s.request_class);
    const summary = {
      control: { n: classes.filter((c) => c === 'usable_control').length },
      treatment: { n: classes.filter((c) => c === 'usable_treatment').length, fallbacks: classes.filter((c) => c === 'fallback').length },
    };
    assert.equal(summary.control.n, 5);
    assert.equal(summary.treatment.n, 5);
    assert.equal(summary.treatment.fallbacks, 0);

    // Firefox reduces timer precision (whole milliseconds here); the beacon must say so.
    const resolution = run.timer_resolution_ms;
    // Whole milliseconds: 1, or a multiple of it when the short measuring loop was preempted on a loaded machine.
    assert.ok(resolution >= 0.99 && Math.abs(resolution - Math.round(resolution)) < 0.01, `timer_resolution_ms ${resolution}`);
    // A QUIC connection's Resource Timing (docs/design.md, R15): the pre-warm opened one, and Firefox marks
    // secureConnectionStart at connectStart (QUIC carries TLS from its first packet), so its tls_ms is the whole handshake.
    const coldQuic = byPhase('prewarm').find((s) => s.origin === 'h3' && s.protocol === 'h3' && s.reused === 0);
    assert.ok(coldQuic, `the pre-warm opened a QUIC connection: ${JSON.stringify(byPhase('prewarm').map((s) => [s.protocol, s.reused]))}`);
    const quicEntry = entryOf(coldQuic);
    assert.equal(quicEntry.secureConnectionStart, quicEntry.connectStart, 'QUIC: secureConnectionStart is connectStart');
    assert.ok(quicEntry.connectEnd >= quicEntry.connectStart);
    assert.equal(coldQuic.tls_ms, coldQuic.connect_ms);
    const median = (p) => byPhase(p).map((s) => s.network_ms).sort((a, b) => a - b)[2];
    t.diagnostic(`firefox: timer_resolution_ms ${resolution}; median network_ms h2 ${median('control')}, h3 ${median('treatment')}`);

    assert.deepEqual(await tab.uncaught(), []);
  } finally {
    await tab.page.close().catch(() => {});
  }
});
