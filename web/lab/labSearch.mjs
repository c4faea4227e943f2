// One page load of the test page inside the lab with one search; reads the run's beacon from the page, validates it with
// the C++ validator (as the collector would) and stores it. The lab has no collector: see startLab.mjs.

/** Resolves to the validated beacon; throws if no beacon appears within timeoutMs or the validator rejects it. */
export async function labSearch(browser, url, { validate, store, timeoutMs = 30000, query = 'quarterly report' }) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { timeout: timeoutMs });
    await page.fill('#query', query);
    await page.press('#query', 'Enter');
    // Polled slowly: the page's main thread is not what is measured (Resource Timing is), but keep it quiet anyway.
    const handle = await page.waitForFunction(() => window.h3probeStatus?.().beacon, null, { timeout: timeoutMs, polling: 100 });
    const text = await handle.jsonValue();
    const result = validate(text);
    if (!result.ok) throw new Error(`beacon rejected by the validator: ${result.error}`);
    store.insertBeacon(result.beacon, { region: 'lab' });
    return result.beacon;
  } finally {
    await context.close();
  }
}
