// Headless Chromium through puppeteer-core over the DevTools protocol (CDP): its launch against a set of servers
// (h3probe doctor --browser and trial, and the dev stack, the lab and the tests). Its pages: browsers.mjs's openTab().
import { CHROMIUM_PATH } from './chromiumArgs.mjs';

// The flags and the binary's path live apart from the driver: h3probe trial --open prints them without puppeteer-core.
export { CHROMIUM_PATH, chromiumArgs } from './chromiumArgs.mjs';

/**
 * puppeteer-core, which drives Chromium and Firefox: loaded by a launch (its 470 modules), not by an import of these
 * files. It is not a dependency of the package: a user installs it for headless runs, so a caller that needs it awaits
 * this first to say so when it is missing.
 */
export async function loadDriver() {
  return (await import('puppeteer-core')).default;
}

/**
 * Launches headless Chromium with these flags (puppeteer adds its automation defaults and a temporary profile of its
 * own, removed on close). The DevTools protocol runs over a pipe (fds 3 and 4), not a port: executablePath may be a
 * wrapper that execs Chromium in another network namespace (`ip netns exec` passes the fds through).
 */
export async function launchChromium(args, { executablePath = CHROMIUM_PATH } = {}) {
  const puppeteer = await loadDriver();
  // Signals are the caller's (h3probe trial, the lab and the dev stack stop their servers on SIGINT): puppeteer's own
  // handlers would kill the browser and exit at once, before that cleanup. Chromium ends with its pipe anyway.
  return puppeteer.launch({ executablePath, headless: true, pipe: true, args,
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
}

/**
 * stack: an object with chromiumArgs({forceQuic, extra}) (the dev stack's startStack(), or doctor's servers); forceQuic:
 * false reproduces the Alt-Svc-not-followed trap; extra: more flags.
 */
export function launchBrowser(stack, { forceQuic = true, extra = [] } = {}) {
  return launchChromium(stack.chromiumArgs({ forceQuic, extra }));
}
