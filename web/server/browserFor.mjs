// Which browser sent a beacon: the engine and its major version, nothing finer. Read by the collector from the headers
// of the request that carried the beacon, so the page module spends no byte on it and older modules get it too.
//
// 1. User-Agent Client Hints. Chromium-based browsers send the low-entropy hint Sec-CH-UA on every secure request,
//    beacons included: a list of brands with major versions, e.g. `"Chromium";v="131", "Not_A Brand";v="24",
//    "Google Chrome";v="131"`. The "Chromium" brand names the engine and its version (Chrome, Edge, Opera, Brave and
//    headless Chromium all list it); the other brands, and the deliberately meaningless "GREASE" one, are ignored.
// 2. Otherwise the User-Agent string, by these rules in order:
//    - iPhone, iPad or iPod: every browser there runs on WebKit: webkit, its major from "Version/N" (the Safari version)
//      or from the OS version ("OS 17_4");
//    - "Firefox/N": firefox N (Gecko's version is Firefox's);
//    - "Chrome/N", "Chromium/N" or "HeadlessChrome/N": chromium N (a Chromium without client hints, or an old one);
//    - "AppleWebKit/" with "Version/N": webkit N (Safari, WebKitGTK, WPE);
//    - anything else: other, no version.

export const BROWSERS = Object.freeze(['chromium', 'firefox', 'webkit', 'other']);

const MAX_HEADER = 512; // longer headers are read this far: a brand list or a User-Agent is far shorter

/** headers: Node's req.headers (lower-case names). Returns { browser: one of BROWSERS, browserMajor: number | null }. */
export function browserFor(headers = {}) {
  const hints = fromClientHints(String(headers['sec-ch-ua'] ?? '').slice(0, MAX_HEADER));
  return hints ?? fromUserAgent(String(headers['user-agent'] ?? '').slice(0, MAX_HEADER));
}

function fromClientHints(header) {
  for (const m of header.matchAll(/"([^"]*)"\s*;\s*v\s*=\s*"(\d+)/g)) {
    if (m[1] === 'Chromium') return found('chromium', m[2]);
  }
  return null;
}

export function fromUserAgent(ua) {
  let m;
  if (/\b(?:iPhone|iPad|iPod)\b/.test(ua)) {
    m = /\bVersion\/(\d+)/.exec(ua) ?? /\bOS (\d+)_/.exec(ua);
    return found('webkit', m?.[1]);
  }
  if ((m = /\bFirefox\/(\d+)/.exec(ua))) return found('firefox', m[1]);
  if ((m = /\b(?:HeadlessChrome|Chromium|Chrome)\/(\d+)/.exec(ua))) return found('chromium', m[1]);
  if (/\bAppleWebKit\//.test(ua) && (m = /\bVersion\/(\d+)/.exec(ua))) return found('webkit', m[1]);
  return { browser: 'other', browserMajor: null };
}

function found(browser, major) {
  const n = Number(major);
  return { browser, browserMajor: Number.isInteger(n) && n > 0 && n < 10000 ? n : null };
}
