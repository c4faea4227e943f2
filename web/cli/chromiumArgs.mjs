// Headless Chromium's flags against a set of servers, and where its binary is: pure, so that what only prints or
// composes them (h3probe trial --open, the dev stack) needs no browser driver.
export const CHROMIUM_PATH = process.env.H3PROBE_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags tried on this machine (docs/record/platform-notes.md); no --user-data-dir: puppeteer's launch() makes a
 * temporary profile itself (and removes it on close). spki: the servers' certificate key hashes (base64 SHA-256,
 * comma-separated), trusted without a public root. quicOrigins: ['HOST:PORT', ...] forced onto QUIC when forceQuic. hostResolverRules: a
 * --host-resolver-rules value, or null for the system's resolver. extra: more flags.
 */
export function chromiumArgs({ spki, quicOrigins = [], forceQuic = true, hostResolverRules = null, extra = [] }) {
  return [
    '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--enable-quic',
    // The browser's built-in field-trial configuration stays off, as under the driver the flags were first tried with
    // (docs/record/platform-notes.md): with it on, cold QUIC to Debian's Caddy 2.6.2 saved no round trip in the lab.
    '--disable-field-trial-config',
    // Without this Chromium never follows Alt-Svc to h3 for a cert outside the public roots: every "h3" request goes over h2.
    ...(forceQuic ? [`--origin-to-force-quic-on=${quicOrigins.join(',')}`] : []),
    `--ignore-certificate-errors-spki-list=${spki}`,
    ...(hostResolverRules ? [`--host-resolver-rules=${hostResolverRules}`] : []),
    ...extra,
  ];
}
