// Headless Firefox ESR (Debian `firefox-esr`) through puppeteer-core over WebDriver BiDi, launched against a set of
// servers (h3probe doctor --browser, and the dev stack and the tests: HTTP/3 to its h3 origin, the test host names
// resolved to 127.0.0.1).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadDriver } from './chromium.mjs';

export const FIREFOX_PATH = process.env.H3PROBE_FIREFOX ?? '/usr/bin/firefox-esr';

/**
 * The Firefox prefs that point the browser at a stack ({hosts, ports}: its h3 and h3b origins) at address
 * (docs/record/platform-notes.md, "Firefox"); a caller overrides what does not fit (doctor: no forced resolution).
 */
export function firefoxPrefs(stack, address = '127.0.0.1') {
  const { hosts, ports } = stack;
  return {
    'network.http.http3.enable': true,
    // Firefox would only learn h3 from Alt-Svc; this mapping makes it use h3 for the h3 origins from the first request.
    'network.http.http3.alt-svc-mapping-for-testing': ['h3', 'h3b'].filter((k) => hosts[k] && ports[k])
      .map((k) => `${hosts[k]};h3=:${ports[k]}`).join(','),
    // Under automation (the remote agent) Firefox counts third-party roots as found and turns HTTP/3 off: without this
    // every request to the h3 origin went over h2 (Firefox 153 ESR, tried).
    'network.http.http3.disable_when_third_party_roots_found': false,
    // The test host names are not in any DNS: resolve them all to the stack's address (the DoH resolver stays off).
    'network.dns.forceResolve': address,
    'network.trr.mode': 5,
    // Quiet: no first-run pages, no update or telemetry traffic mixing into the run.
    'browser.shell.checkDefaultBrowser': false,
    'datareporting.policy.dataSubmissionEnabled': false,
    'toolkit.telemetry.enabled': false,
    'app.update.enabled': false,
  };
}

/**
 * Launches Firefox with a fresh profile of its own (a temp dir, removed on close). Resolves to the puppeteer Browser;
 * its close() also removes the profile.
 */
export async function launchFirefox(stack, { extraPrefs = {} } = {}) {
  const puppeteer = await loadDriver();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-firefox-'));
  let browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox',
      protocol: 'webDriverBiDi',
      executablePath: FIREFOX_PATH,
      headless: true,
      userDataDir: profile,
      acceptInsecureCerts: true,
      extraPrefsFirefox: { ...firefoxPrefs(stack), ...extraPrefs },
      timeout: 30000,
    });
  } catch (err) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  const close = browser.close.bind(browser);
  browser.close = async () => {
    try { await close(); } finally { fs.rmSync(profile, { recursive: true, force: true }); }
  };
  return browser;
}

