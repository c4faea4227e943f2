// The browsers h3probe drives (`h3probe doctor --browser`, and the dev stack's `npm start --browsers` and fault matrix),
// behind one small tab interface, so that each runs the same steps in each: Chromium through Playwright (CDP), Firefox ESR through puppeteer-core (WebDriver
// BiDi; Playwright's Firefox needs its own patched build). The interface is the subset of Playwright's Page the tests use.
import fs from 'node:fs';
import { launchBrowser, openPage, watchPage } from './chromium.mjs';
import { FIREFOX_PATH, launchFirefox } from './firefox.mjs';

export const ENGINES = Object.freeze(['chromium', 'firefox']);

/** Why an engine cannot run here, or null. */
export function engineMissing(engine) {
  if (engine === 'firefox' && !fs.existsSync(FIREFOX_PATH)) return `Firefox not found at ${FIREFOX_PATH} (Debian package firefox-esr; npm run deps installs it)`;
  if (!ENGINES.includes(engine)) return `unknown browser "${engine}"; one of ${ENGINES.join(', ')}`;
  return null;
}

/**
 * Launches `engine` against the stack. forceQuic: Chromium's --origin-to-force-quic-on for the h3 origins; for Firefox
 * the closest thing, its Alt-Svc mapping pref (Firefox then tries HTTP/3 first, but may still fall back to TCP).
 * Resolves to { engine, browser, close() }.
 */
export async function launchEngine(engine, stack, { forceQuic = true } = {}) {
  const missing = engineMissing(engine);
  if (missing) throw new Error(missing);
  if (engine === 'chromium') {
    const browser = await launchBrowser(stack, { forceQuic });
    return { engine, browser, close: () => browser.close() };
  }
  const browser = await launchFirefox(stack, forceQuic ? {} : { extraPrefs: { 'network.http.http3.alt-svc-mapping-for-testing': '' } });
  return { engine, browser, close: () => browser.close() };
}

/**
 * A fresh tab in a context of its own (its own connections, as a new visitor): { page, context: {close}, messages(),
 * errors(), uncaught() }, page with Playwright's method names.
 */
export async function openTab(launched) {
  // A Playwright Browser on its own (the lab's, older callers) is Chromium.
  if (!launched.engine) return openPage(launched, null);
  if (launched.engine === 'chromium') return openPage(launched.browser, null);
  const context = await launched.browser.createBrowserContext();
  const page = await context.newPage();
  const { recorded, messages, inPage } = await watchPage(page, (fn) => page.evaluateOnNewDocument(fn));
  return {
    page: puppeteerAsPlaywright(page),
    context: { close: () => context.close() },
    messages: () => [...messages],
    async errors() { return [...recorded, ...await inPage()]; },
    // Only the page's own listeners: over BiDi, Firefox's reports of blocked loads (CORS, CSP) also arrive as
    // 'pageerror', so here that event cannot tell page code's uncaught errors from the browser's reports.
    async uncaught() { return inPage(); },
  };
}

// Playwright's argument orders over a puppeteer Page: waitForFunction(fn, arg, {timeout}), fill, press, click, locator().count().
export function puppeteerAsPlaywright(page) {
  return {
    goto: (url) => page.goto(url, { waitUntil: 'load' }),
    addInitScript: (fn) => page.evaluateOnNewDocument(fn),
    on: (event, handler) => page.on(event, handler),
    evaluate: (fn, arg) => (arg === undefined ? page.evaluate(fn) : page.evaluate(fn, arg)),
    waitForFunction: (fn, arg, { timeout = 30000 } = {}) => (arg === undefined || arg === null
      ? page.waitForFunction(fn, { timeout }) : page.waitForFunction(fn, { timeout }, arg)),
    async fill(selector, text) {
      await page.$eval(selector, (el) => { el.value = ''; });
      await page.type(selector, text);
    },
    click: (selector) => page.click(selector),
    async press(selector, key) {
      await page.focus(selector);
      await page.keyboard.press(key);
    },
    waitForTimeout: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    locator: (selector) => ({ count: async () => (await page.$$(selector)).length }),
  };
}
