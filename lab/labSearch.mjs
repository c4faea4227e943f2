// One page load of the test page inside the lab with one search; reads the run's beacon from the page, decodes it with
// the C++ decoder and stores the rows, as the collector would. The lab has no collector: see startLab.mjs.
import { searchPage, waitForBeacon } from '../web/launch/pageLoad.mjs';

/** Resolves to the beacon as the page sent it (parsed); throws if none appears within timeoutMs or the decoder rejects it. */
export async function labSearch(browser, url, { core, store, timeoutMs = 30000, query = 'quarterly report' }) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await searchPage(page, url, { query, timeoutMs });
    const { beacon: text } = await waitForBeacon(page, timeoutMs);
    const decoded = core.decodeBeacon(text);
    if (!decoded.ok) throw new Error(`beacon rejected by the decoder: ${decoded.error}`);
    store.insertBeacon(decoded, { region: 'lab' });
    return JSON.parse(text);
  } finally {
    await context.close();
  }
}
