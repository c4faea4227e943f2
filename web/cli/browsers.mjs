// The browsers h3probe drives (`h3probe doctor --browser`, and the dev stack's `npm start --browsers` and fault matrix),
// both through puppeteer-core: Chromium over the DevTools protocol (CDP), Firefox ESR over WebDriver BiDi. One small
// tab interface over puppeteer's Page (tabPage()), so that each runs the same steps in each.
import fs from 'node:fs';
import { launchBrowser } from './chromium.mjs';
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
 * Records what a puppeteer Page shows of errors: its 'pageerror' and console events and, through a script run before
 * the page's own, the uncaught errors and unhandled rejections its code lets escape. Returns { recorded, messages,
 * inPage() }.
 */
async function watchPage(page) {
  const recorded = [];
  const messages = [];
  page.on('pageerror', (err) => recorded.push({ type: 'pageerror', text: String(err?.stack ?? err) }));
  page.on('console', (msg) => {
    messages.push({ type: msg.type(), text: msg.text() });
    if (msg.type() === 'error') recorded.push({ type: 'console.error', text: msg.text() });
  });
  await page.evaluateOnNewDocument(() => {
    window.__h3probeTestErrors = [];
    window.addEventListener('error', (e) => window.__h3probeTestErrors.push({ type: 'error', text: String(e.error?.stack ?? e.message) }));
    window.addEventListener('unhandledrejection', (e) =>
      window.__h3probeTestErrors.push({ type: 'unhandledrejection', text: String(e.reason?.stack ?? e.reason) }));
  });
  const inPage = () => page.evaluate(() => window.__h3probeTestErrors ?? []).catch(() => []);
  return { recorded, messages, inPage };
}

/**
 * A fresh tab in a browser context of its own (its own connections, as a new visitor), at url when one is given:
 * { page (tabPage()'s interface), context (puppeteer's BrowserContext), messages(), errors(), uncaught() }; errors()
 * resolves with [{type, text}] from pageerror, console.error and the page's window handlers. launched: from
 * launchEngine(), or a Chromium Browser on its own (the lab's, the tests').
 */
export async function openTab(launched, url = null) {
  const { engine, browser } = launched.engine ? launched : { engine: 'chromium', browser: launched };
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const { recorded, messages, inPage } = await watchPage(page);
  if (url) await page.goto(url, { waitUntil: 'load' });
  return {
    page: tabPage(page),
    context,
    messages: () => [...messages],
    async errors() { return [...recorded, ...await inPage()]; },
    /** Only what the page's own code let escape: uncaught errors and unhandled rejections (not the browser's own
     *  console reports of failed loads, which a test that makes loads fail expects). Over BiDi, Firefox's reports of
     *  blocked loads (CORS, CSP) also arrive as 'pageerror', so there only the page's own listeners count. */
    async uncaught() { return [...(engine === 'chromium' ? recorded.filter((e) => e.type === 'pageerror') : []), ...await inPage()]; },
  };
}

/**
 * The tab interface over a puppeteer Page: goto() waits for 'load'; waitForFunction(fn, arg, {timeout, polling}),
 * addInitScript(fn), fill(selector, text), press(selector, key), waitForTimeout(ms) and locator(selector).count() as
 * the steps that load a page as a user would name them; puppeteer: the Page itself, for what the interface leaves out
 * (screenshots, the viewport, a CDP session, the keyboard).
 */
export function tabPage(page) {
  return {
    puppeteer: page,
    goto: (url, options = {}) => page.goto(url, { waitUntil: 'load', ...options }),
    addInitScript: (fn) => page.evaluateOnNewDocument(fn),
    on: (event, handler) => page.on(event, handler),
    evaluate: (fn, arg) => (arg === undefined ? page.evaluate(fn) : page.evaluate(fn, arg)),
    waitForFunction: (fn, arg, { timeout = 30000, polling } = {}) => {
      const options = { timeout, ...(polling === undefined ? {} : { polling }) };
      return arg === undefined || arg === null ? page.waitForFunction(fn, options) : page.waitForFunction(fn, options, arg);
    },
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
