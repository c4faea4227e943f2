// What each engine does with fetch(url, {method: 'POST', keepalive: true}) from a dedicated module Worker, the way the
// probe's worker sends a run's beacon (docs/record/platform-notes.md, "keepalive in a Worker"): Chromium, Firefox ESR and
// WebKitGTK against the real collector. A beacon sent while the worker lives arrives in each; a worker ended right
// after the call (the page terminating it, as a page being left does) loses it in Chromium and keeps it in Firefox and
// WebKitGTK (where it is lost, a request already under way may still arrive: the test asks for one try in five lost);
// without keepalive every engine can lose it, which shows the check can tell.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from '../../stack/stack.mjs';
import { engineMissing, launchEngine, openTab } from '../../cli/browsers.mjs';
import { launchWebKit, webkitMissing } from '../../launch/webkit.mjs';

// The worker: fetch() with the page's options, then at once either waits for the answer, tells the page it called
// fetch() (the page then terminates it), or ends itself.
const WORKER = `addEventListener('message', async ({ data }) => {
  const sent = fetch(data.url, { method: 'POST', body: data.body, keepalive: data.keepalive, credentials: 'omit', mode: 'no-cors' });
  if (data.end !== 'answer') postMessage('called');
  if (data.end === 'close') close();
  if (data.end === 'answer') await sent.then(() => postMessage('answered'), (error) => postMessage(String(error)));
});`;

// Runs in the page: starts the worker, asks for one beacon, resolves with the worker's word (after terminating it).
const PAGE = `(url, body, keepalive, end) => new Promise((resolve) => {
  const worker = new Worker('/fixtures/keepalive-worker.js', { type: 'module' });
  worker.onmessage = ({ data }) => {
    if (end === 'terminate') worker.terminate();
    resolve(data);
  };
  worker.onerror = (event) => resolve('worker error: ' + event.message);
  worker.postMessage({ url, body, keepalive, end });
})`;

// What each engine keeps of a keepalive beacon whose worker ends right after the call (docs/record/platform-notes.md).
const KEPT_WHEN_TERMINATED = { chromium: false, firefox: true, webkit: true };
const TRIES = 5;
// Where a loss is a race (a request may get under way before the worker ends), the tries go on until one is lost, up
// to this many: at 5 a fixed count, all 5 arrived once in Chromium on an idle machine.
const MAX_TRIES_FOR_A_LOSS = 25;

let stack;
before(async () => {
  stack = await startStack({ fixtures: { 'keepalive-worker.js': WORKER } });
});
after(async () => {
  await stack?.stop();
});

let seq = 0;
// A load_error beacon (the smallest the collector stores) with a fresh run_id.
function beacon() {
  const runId = `keepalive${process.pid}x${(seq += 1)}`;
  return { runId, body: JSON.stringify({ schema: 'h3probe/1', run_id: runId, page_load_id: runId, config_id: 'keepalive',
    outcome: 'load_error', reason: 'run_import', run_ms: 1, samples: [] }) };
}
const stored = (runId) => Boolean(stack.store.db.prepare('SELECT 1 FROM runs WHERE run_id = ?').get(runId));

// Sends beacons as arrives() does until one is lost, at most MAX_TRIES_FOR_A_LOSS; returns whether each arrived.
async function untilLost(openPage, how) {
  const arrived = [];
  while (arrived.length < MAX_TRIES_FOR_A_LOSS && !arrived.includes(false)) arrived.push(await arrives(await openPage(), how));
  return arrived;
}

// Sends one beacon from a fresh page of `engine` (run(expression) evaluates in it) and says whether it was stored.
async function arrives(run, { keepalive, end }) {
  const { runId, body } = beacon();
  const word = await run(`(${PAGE})(${JSON.stringify(stack.urls.beacon)}, ${JSON.stringify(body)}, ${keepalive}, ${JSON.stringify(end)})`);
  assert.equal(word, end === 'answer' ? 'answered' : 'called', 'the worker ran');
  await new Promise((resolve) => setTimeout(resolve, 1000)); // a beacon on its way has long arrived on loopback
  return stored(runId);
}

function cases(engine, openPage) {
  test(`${engine}: a keepalive beacon from a worker that waits for the answer arrives`, async () => {
    assert.equal(await arrives(await openPage(), { keepalive: true, end: 'answer' }), true);
  });
  // Where the engine does not keep it, the worker's end races a request already under way: lost in some tries, not all
  // (CI once saw 1 of 3 lost, and once 0 of 5): at least once in MAX_TRIES_FOR_A_LOSS.
  for (const end of ['terminate', 'close']) {
    const how = end === 'terminate' ? 'terminated by the page' : 'that ends itself';
    const kept = KEPT_WHEN_TERMINATED[engine];
    test(`${engine}: a keepalive beacon from a worker ${how} right after the call ${kept ? `still arrives (${TRIES} tries)` : `can be lost (in ${MAX_TRIES_FOR_A_LOSS} tries, at least once)`}`, async () => {
      if (kept) {
        const arrived = [];
        for (let i = 0; i < TRIES; i++) arrived.push(await arrives(await openPage(), { keepalive: true, end }));
        assert.deepEqual(arrived, Array(TRIES).fill(true));
      } else {
        const arrived = await untilLost(openPage, { keepalive: true, end });
        assert.ok(arrived.includes(false), `arrived: ${arrived}`);
      }
    });
  }
  // The page's terminate() races the request here: a request already under way may still arrive (Firefox once in a
  // run of the whole suite), so the control asks only that termination can lose it.
  test(`${engine}: without keepalive, the beacon of a worker terminated right after the call is lost (in ${MAX_TRIES_FOR_A_LOSS} tries, at least once)`, async () => {
    const arrived = await untilLost(openPage, { keepalive: false, end: 'terminate' });
    assert.ok(arrived.includes(false), `arrived: ${arrived}`);
  });
}

for (const engine of ['chromium', 'firefox']) {
  describe(engine, { skip: engineMissing(engine) ?? false }, () => {
    let launched;
    const tabs = [];
    before(async () => {
      launched = await launchEngine(engine, stack);
    });
    after(async () => {
      for (const tab of tabs) await tab.context.close().catch(() => {});
      await launched?.close();
    });
    cases(engine, async () => {
      const tab = await openTab(launched);
      tabs.push(tab);
      await tab.page.goto(stack.urls.page);
      return (expression) => tab.page.evaluate(expression);
    });
  });
}

describe('webkit', { skip: webkitMissing() ?? false }, () => {
  let webkit;
  before(async () => {
    webkit = await launchWebKit(stack);
  }, { timeout: 60000 });
  after(async () => {
    await webkit?.close();
  });
  cases('webkit', async () => {
    await webkit.driver.get(stack.urls.page);
    return (expression) => webkit.driver.executeAsyncScript(`${expression}.then(arguments[arguments.length - 1])`);
  });
});
