// One page load of the test page with one search, as a user would do it; shared by `npm start` and the e2e tests.
import { openTab } from '../cli/browsers.mjs';

/**
 * The config keys of an A/A test on the stack's (or the lab's) second origins: aa 'h2' or 'h3' puts both arms on that
 * protocol, control on the first origin of its kind and treatment on the second; null or undefined: the experiment.
 */
export function aaConfig(urls, aa) {
  if (aa === null || aa === undefined) return {};
  if (aa === 'h2') return { arms: 'h2-h2', aaOrigin: urls.h2bOrigin };
  if (aa === 'h3') return { arms: 'h3-h3', aaOrigin: urls.h3bOrigin };
  throw new Error(`--aa must be h2 or h3, got "${aa}"`);
}

// The test page reads its experiment config from the query string (web/page/search.js).
export function experimentUrl(stack, config = {}) {
  const params = new URLSearchParams({ h2Origin: stack.urls.h2Origin, h3Origin: stack.urls.h3Origin, ...config });
  return `${stack.urls.page}?${params}`;
}

/** The user's part of a page load: open url, type a query into the test page's search box, press Enter. */
export async function searchPage(page, url, { query = 'quarterly report', timeoutMs = 30000 } = {}) {
  await page.goto(url, { timeout: timeoutMs });
  await page.fill('#query', query);
  await page.press('#query', 'Enter');
}

/**
 * Resolves to {pageLoadId, beacon (its text), queued} once the page's module has a beacon (Playwright pages). Polled
 * slowly: the page's main thread is not what is measured (Resource Timing is), but keep it quiet anyway.
 */
export async function waitForBeacon(page, timeoutMs = 30000) {
  const handle = await page.waitForFunction(() => {
    const s = window.h3probeStatus?.();
    return s?.beacon ? { pageLoadId: s.pageLoadId, beacon: s.beacon, queued: s.beaconQueued } : null;
  }, null, { timeout: timeoutMs, polling: 100 });
  return handle.jsonValue();
}

// Opens a fresh browser context (its own connections, as a new visitor), searches once, waits for the run's beacon
// to be stored, and returns the stored run row with the summary the page's module computed (the beacon's own).
// launched: from launchEngine() (browsers.mjs), any engine.
export async function searchOnce(launched, stack, url, { expectRuns, timeoutMs = 30000, query = 'quarterly report' } = {}) {
  const { page, context } = await openTab(launched);
  try {
    await searchPage(page, url, { query, timeoutMs });
    await stack.collector.waitForRuns(expectRuns, timeoutMs);
    // whenDone(): the worker tells the page its beacon went once the collector has answered, maybe after storing it.
    const { pageLoadId, beacon } = await page.evaluate(() => window.h3probeDone());
    const run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(pageLoadId);
    if (!run) throw new Error(`no stored run for page load ${pageLoadId}`);
    return { ...run, summary: JSON.parse(beacon).summary };
  } finally {
    await context.close();
  }
}
