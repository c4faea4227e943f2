// Headless Chromium through playwright-core: its launch against a set of servers (h3probe doctor --browser and trial,
// and the dev stack, the lab and the tests), and pages that record every error they raise.
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH } from './chromiumArgs.mjs';

// The flags and the binary's path live apart from the driver: h3probe trial --open prints them without playwright-core.
export { CHROMIUM_PATH, chromiumArgs } from './chromiumArgs.mjs';

/**
 * stack: an object with chromiumArgs({forceQuic, extra}) (the dev stack's startStack(), or doctor's servers); forceQuic:
 * false reproduces the Alt-Svc-not-followed trap; extra: more flags.
 */
export function launchBrowser(stack, { forceQuic = true, extra = [] } = {}) {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: stack.chromiumArgs({ forceQuic, extra }) });
}

/** Opens url in a fresh context; errors() resolves with [{type, text}] from pageerror, console.error and window handlers. */
/**
 * Records what a page shows of errors: its 'pageerror' and console events (Playwright's and puppeteer's pages name them
 * alike) and, through a script run before the page's own (addInitScript: the driver's way to add one), the uncaught
 * errors and unhandled rejections its code lets escape. Returns { recorded, messages, inPage() }.
 */
export async function watchPage(page, addInitScript) {
  const recorded = [];
  const messages = [];
  page.on('pageerror', (err) => recorded.push({ type: 'pageerror', text: String(err?.stack ?? err) }));
  page.on('console', (msg) => {
    messages.push({ type: msg.type(), text: msg.text() });
    if (msg.type() === 'error') recorded.push({ type: 'console.error', text: msg.text() });
  });
  await addInitScript(() => {
    window.__h3probeTestErrors = [];
    window.addEventListener('error', (e) => window.__h3probeTestErrors.push({ type: 'error', text: String(e.error?.stack ?? e.message) }));
    window.addEventListener('unhandledrejection', (e) =>
      window.__h3probeTestErrors.push({ type: 'unhandledrejection', text: String(e.reason?.stack ?? e.reason) }));
  });
  const inPage = () => page.evaluate(() => window.__h3probeTestErrors ?? []).catch(() => []);
  return { recorded, messages, inPage };
}

export async function openPage(browser, url, { waitUntil = 'load' } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const { recorded, messages, inPage } = await watchPage(page, (fn) => page.addInitScript(fn));
  if (url) await page.goto(url, { waitUntil });
  return {
    page,
    context,
    messages: () => [...messages],
    async errors() { return [...recorded, ...await inPage()]; },
    /** Only what the page's own code let escape: uncaught errors and unhandled rejections (not the browser's own
     *  console reports of failed loads, which a test that makes loads fail expects). */
    async uncaught() { return [...recorded.filter((e) => e.type === 'pageerror'), ...await inPage()]; },
  };
}
