// One page load of the test page inside the lab with one search; reads the run's beacon from the page, decodes it with
// the C++ decoder and stores the rows, as the collector would. The lab has no collector: see startLab.mjs.

/** Resolves to the beacon as the page sent it (parsed); throws if none appears within timeoutMs or the decoder rejects it. */
export async function labSearch(browser, url, { core, store, timeoutMs = 30000, query = 'quarterly report' }) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { timeout: timeoutMs });
    await page.fill('#query', query);
    await page.press('#query', 'Enter');
    // Polled slowly: the page's main thread is not what is measured (Resource Timing is), but keep it quiet anyway.
    const handle = await page.waitForFunction(() => window.h3probeStatus?.().beacon, null, { timeout: timeoutMs, polling: 100 });
    const text = await handle.jsonValue();
    const decoded = core.decodeBeacon(text);
    if (!decoded.ok) throw new Error(`beacon rejected by the decoder: ${decoded.error}`);
    store.insertBeacon(decoded, { region: 'lab' });
    return JSON.parse(text);
  } finally {
    await context.close();
  }
}
