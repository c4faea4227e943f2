// End-to-end helpers: launch headless Chromium against a running stack and open pages that record every error they raise.
import { chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.H3PROBE_CHROMIUM ?? '/usr/bin/chromium';

/** stack: the object from startStack(); forceQuic: false reproduces the Alt-Svc-not-followed trap; extra: more flags. */
export function launchBrowser(stack, { forceQuic = true, extra = [] } = {}) {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: stack.chromiumArgs({ forceQuic, extra }) });
}

/** Opens url in a fresh context; errors() resolves with [{type, text}] from pageerror, console.error and window handlers. */
export async function openPage(browser, url, { waitUntil = 'load' } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const recorded = [];
  const messages = [];
  page.on('pageerror', (err) => recorded.push({ type: 'pageerror', text: String(err?.stack ?? err) }));
  page.on('console', (msg) => {
    messages.push({ type: msg.type(), text: msg.text() });
    if (msg.type() === 'error') recorded.push({ type: 'console.error', text: msg.text() });
  });
  await page.addInitScript(() => {
    window.__h3probeTestErrors = [];
    window.addEventListener('error', (e) => window.__h3probeTestErrors.push({ type: 'error', text: String(e.error?.stack ?? e.message) }));
    window.addEventListener('unhandledrejection', (e) =>
      window.__h3probeTestErrors.push({ type: 'unhandledrejection', text: String(e.reason?.stack ?? e.reason) }));
  });
  if (url) await page.goto(url, { waitUntil });
  return {
    page,
    context,
    messages: () => [...messages],
    async errors() {
      const inPage = await page.evaluate(() => window.__h3probeTestErrors ?? []).catch(() => []);
      return [...recorded, ...inPage];
    },
    /** Only what the page's own code let escape: uncaught errors and unhandled rejections (not the browser's own
     *  console reports of failed loads, which a test that makes loads fail expects). */
    async uncaught() {
      const inPage = await page.evaluate(() => window.__h3probeTestErrors ?? []).catch(() => []);
      return [...recorded.filter((e) => e.type === 'pageerror'), ...inPage];
    },
  };
}
