// The payload mode end to end in Chromium and Firefox: config payloadBytes makes the arms fetch /noop?bytes=N from the
// local stack's Caddy (the origins' own rule, web/server/originRules.mjs), pre-warm stays the no-op; the stored run says
// its mode, each stored request the body size its browser reported, and the report reads that mode alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStack } from '../../stack/stack.mjs';
import { ENGINES, engineMissing, launchEngine, openTab } from '../../cli/browsers.mjs';
import { experimentUrl } from '../../launch/pageLoad.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { recordWorkerEntries } from './workerEntries.mjs';

const PAYLOAD = 131072;
const core = await loadH3probeNode();

for (const engine of ENGINES) {
  const missing = engineMissing(engine);
  describe(`${engine}: payloadBytes ${PAYLOAD}`, { skip: missing || false }, () => {
    let stack;
    let browser;
    before(async () => {
      stack = await startStack({ core });
      browser = await launchEngine(engine, stack);
    });
    after(async () => {
      await browser?.close();
      await stack?.stop();
    });

    // One page load with one search and `config`; resolves to the stored run, its requests and the worker's entries.
    async function searchOnce(config) {
      const runsBefore = stack.store.countRuns();
      const tab = await openTab(browser);
      try {
        await tab.page.addInitScript(recordWorkerEntries);
        await tab.page.goto(experimentUrl(stack, config));
        await tab.page.fill('#query', 'quarterly report');
        await tab.page.press('#query', 'Enter');
        await stack.collector.waitForRuns(runsBefore + 1, 30000);
        const status = await tab.page.evaluate(() => window.h3probeDone());
        assert.deepEqual(status.errors, []);
        const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(status.pageLoadId);
        assert.ok(run, `a run is stored for page load ${status.pageLoadId}`);
        return { run, requests: stack.store.requestsFor(run.run_id), entries: await tab.page.evaluate(() => window.__workerEntries) };
      } finally {
        await tab.context.close();
      }
    }

    test('the arms fetch N bytes, pre-warm the no-op; the stored body sizes are what the browser reported', async () => {
      const { run, requests, entries } = await searchOnce({ payloadBytes: PAYLOAD });
      assert.equal(run.outcome, 'complete');
      assert.equal(run.payload_bytes, PAYLOAD);
      assert.equal(requests.length, 13);
      for (const q of requests) {
        const where = `${q.phase}[${q.idx}]`;
        const entry = entries.find((e) => e.name.includes(`h3probe=${run.run_id}-${q.phase}-${q.idx}`));
        assert.ok(entry, `${where}: the worker's entry`);
        assert.equal(new URL(entry.name).searchParams.get('bytes'), q.phase === 'prewarm' ? null : String(PAYLOAD), `${where} URL`);
        assert.equal(q.result, 'ok', `${where} result`);
        if (q.phase === 'prewarm') {
          assert.equal(q.http_status, 204, `${where} status`);
          assert.equal(q.body_bytes, 0, `${where} body`);
          continue;
        }
        assert.equal(q.http_status, 200, `${where} status`);
        assert.equal(q.protocol, q.phase === 'control' ? 'h2' : 'h3', `${where} protocol`);
        assert.equal(q.request_class, q.phase === 'control' ? 'usable_control' : 'usable_treatment', `${where} class`);
        // Both browsers report the body's size to a worker for a response with Timing-Allow-Origin: all of it, uncompressed.
        assert.equal(q.body_bytes, entry.encodedBodySize, `${where} body_bytes is the entry's encodedBodySize`);
        assert.equal(q.body_bytes, PAYLOAD, `${where} body_bytes`);
        assert.ok(entry.transferSize >= PAYLOAD, `${where} transferSize ${entry.transferSize}`);
      }
    });

    test('the report reads one payload mode at a time and names the other', async () => {
      await searchOnce({});  // a no-op run beside the payload run
      const noop = (await makeReport(core, { db: stack.store.db })).report;
      const payload = (await makeReport(core, { db: stack.store.db, payloadBytes: PAYLOAD })).report;
      assert.equal(noop.payloadBytes, 0);
      assert.equal(noop.storedRuns, 1);
      assert.equal(payload.payloadBytes, PAYLOAD);
      assert.equal(payload.storedRuns, 1);
      assert.deepEqual(payload.payloadModes, [{ bytes: 0, runs: 1 }, { bytes: PAYLOAD, runs: 1 }]);
      assert.equal(payload.groups[0].arms.h2.n, 5);
      assert.equal(payload.groups[0].arms.h3.n, 5);
    });
  });
}
