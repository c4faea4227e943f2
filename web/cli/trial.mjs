// `h3probe trial --site DIR --h2 URL --h3 URL --beacon URL`: a local trial of the user's own built page in one command:
// the site, the two test origins (Caddy, `h3probe origins`' Caddyfile) and the collector (SQLite) on loopback under a
// private certificate, N page loads in headless Chromium (or the command line to open it by hand), then the report.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { tabPage } from './browsers.mjs';
import { launchBrowser, loadDriver } from './chromium.mjs';
import { CHROMIUM_PATH, chromiumArgs } from './chromiumArgs.mjs';
import { doSearch, parseSearch as parseSearchAction, SEARCH_HELP, searchText } from './search.mjs';
import { startStack } from '../stack/stack.mjs';
import { statusOf } from '../stack/caddy.mjs';
import { makeReport } from '../report/makeReport.mjs';

export const USAGE = `usage: h3probe trial --site DIR --h2 URL --h3 URL --beacon URL [options]

Tries your built page on this machine: serves DIR at https://localhost:PORT/, the HTTP/2-only and the HTTP/3 test
origins (Caddy 2.6+, the Caddyfile of h3probe origins) and the collector (SQLite), all on loopback under a private
certificate made in a temporary folder; runs --loads page loads in headless Chromium, each doing --search; prints the
report. Whatever it started or wrote is removed when it ends, also on Ctrl-C.

  --site DIR        the built site (e.g. dist/), the page's origin
  --h2 URL          the h2Origin, --h3 URL the h3Origin and --beacon URL the beaconUrl your page's configure() names.
                    Chromium maps each name and port to the local servers (--host-resolver-rules): nothing binds the
                    ports the URLs name, and no DNS or hosts file is touched
  --page PATH       the page to open, with any query string (default /)
  --loads N         page loads, each in a fresh browser context (default 10)
  --search ACTION   what a user does to search; the page must then call searchCompleted():
                      ${SEARCH_HELP}
                    (default: none, for a page that calls searchCompleted() by itself)
  --timeout S       seconds each load may take to send its beacon (default 30)
  --db FILE         keep the beacons in this SQLite file (a new one) after the trial, for h3probe report --db FILE
                    and h3probe export --db FILE (default: a database in the temporary folder, removed at the end)
  --open            no headless run: print the Chromium command line that opens the page against the trial's
                    servers, and the h3probe doctor command that checks it in a browser, wait for Ctrl-C, then print
                    the report

Needs caddy, openssl, Chromium (H3PROBE_CHROMIUM, default /usr/bin/chromium), and the npm packages better-sqlite3@12
and, without --open, puppeteer-core. Exit status 1 when a load sent no beacon, or one without a complete run (each
load's outcome, its load_error reason and the error text the page's module gave are printed), or a server did not start;
2 on a bad option. What each load_error reason means and its fix: docs/troubleshooting.md.`;

export class TrialError extends Error {}

const LOOPBACK = '127.0.0.1';
const PAGE_HOST = 'localhost';

/** The options, checked: throws TrialError naming every problem. */
export function trialOptions(argv) {
  const { values: a } = parseArgs({
    args: argv,
    strict: true,
    options: {
      site: { type: 'string' }, h2: { type: 'string' }, h3: { type: 'string' }, beacon: { type: 'string' },
      page: { type: 'string', default: '/' }, loads: { type: 'string', default: '10' }, search: { type: 'string', default: '' },
      timeout: { type: 'string', default: '30' }, open: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' },
      db: { type: 'string' },
    },
  });
  if (a.help) return { help: true };
  const problems = [];
  const url = (flag) => {
    let u;
    try { u = new URL(a[flag]); } catch { /* reported below */ }
    if (u?.protocol === 'https:' && u.hostname !== PAGE_HOST && !/^[\d.[\]:]+$/.test(u.hostname)) return u;
    problems.push(`--${flag} must be the https:// URL with a host name that your page's configure() names, not "${a[flag] ?? ''}"`);
    return null;
  };
  const h2 = url('h2');
  const h3 = url('h3');
  const beacon = url('beacon');
  if (h2 && h3 && h2.hostname === h3.hostname) problems.push('--h2 and --h3 must be different host names');
  if (beacon && [h2, h3].some((o) => o?.hostname === beacon.hostname)) problems.push('--beacon must have a host name of its own');
  if (beacon && beacon.pathname !== '/beacon') problems.push(`--beacon: the collector answers at /beacon (as h3probe origins serves it), not ${beacon.pathname}`);
  if (!a.site || /["\n]/.test(a.site) || !fs.statSync(a.site, { throwIfNoEntry: false })?.isDirectory()) {
    problems.push(`--site must be a folder (the built site) whose path has no quote, not "${a.site ?? ''}"`);
  }
  if (!a.page.startsWith('/')) problems.push(`--page must be a path starting with /, not "${a.page}"`);
  const loads = Number(a.loads);
  if (!/^\d+$/.test(a.loads) || loads < 1) problems.push(`--loads must be a whole number of at least 1, not "${a.loads}"`);
  const timeoutMs = Number(a.timeout) * 1000;
  if (!(timeoutMs > 0)) problems.push(`--timeout must be a number of seconds, not "${a.timeout}"`);
  let search = null;
  try {
    search = parseSearch(a.search);
  } catch (err) {
    problems.push(err.message);
  }
  // A new file only: the report of a database that already held runs would mix them with this trial's.
  if (a.db !== undefined && (fs.existsSync(a.db) || !fs.statSync(path.dirname(path.resolve(a.db)), { throwIfNoEntry: false })?.isDirectory())) {
    problems.push(`--db must be a new file in an existing folder, not "${a.db}"`);
  }
  if (problems.length) throw new TrialError(problems.join('\n'));
  return { site: path.resolve(a.site), h2, h3, beacon, page: a.page, loads, search, timeoutMs, open: a.open, searchText: a.search,
    db: a.db === undefined ? null : path.resolve(a.db) };
}

/** --search, as web/cli/search.mjs reads it, a bad one as a TrialError. */
export function parseSearch(text) {
  try {
    return parseSearchAction(text);
  } catch (err) {
    throw new TrialError(err.message);
  }
}

const port = (u) => Number(u.port || 443);

export async function main(argv) {
  let o;
  try {
    o = trialOptions(argv);
  } catch (err) {
    if (!(err instanceof TrialError) && err.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw err;
    console.error(`h3probe trial: ${err.message}\n\nh3probe trial --help for the options`);
    process.exit(2);
  }
  if (o.help) return console.log(USAGE);
  const trial = await startTrial(o).catch((err) => {
    if (!(err instanceof TrialError)) throw err;
    console.error(`h3probe trial: ${err.message}`);
    process.exit(1);
  });
  let interrupted = false;
  const stopOnSignal = (signal) => {
    interrupted = true;
    console.error(`\nh3probe trial: ${signal}, stopping`);
    void trial.stop().finally(() => process.exit(128 + os.constants.signals[signal]));
  };
  if (o.open) {
    // Ctrl-C ends the hand-driven trial: the report first, then the cleanup.
    console.log(`Open the page in Chromium with the trial's servers, then press Ctrl-C here for the report:\n\n${trial.openCommand()}\n`);
    console.log(`Or let h3probe doctor load it in Chromium, as a sampled page load, while this runs:\n\n${trial.doctorCommand()}\n`);
    await new Promise((resolve) => { process.once('SIGINT', resolve); process.once('SIGTERM', resolve); });
    try {
      console.log(await trial.report());
      keptDb(o);
      if (trial.runs() === 0) {
        console.error('\nh3probe trial: no beacon arrived: open the page with the command above and search (the page must call searchCompleted())');
        process.exitCode = 1;
      }
    } finally {
      await trial.stop();
    }
    return;
  }
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    await trial.run();
    console.log(await trial.report());
    keptDb(o);
  } catch (err) {
    if (interrupted) return;
    if (!(err instanceof TrialError)) throw err;
    if (trial.runs() > 0) console.log(await trial.report());
    keptDb(o);
    console.error(`\nh3probe trial: ${err.message}`);
    process.exitCode = 1;
  } finally {
    await trial.stop();
  }
}

// Where --db kept the beacons, and the commands that read them.
function keptDb(o) {
  if (o.db) console.log(`\nThe beacons are kept in ${o.db}: h3probe report --db ${shellWord(o.db)}, h3probe export --db ${shellWord(o.db)}`);
}

// A word for a POSIX shell, quoted only where it must be.
const shellWord = (w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/** Starts the servers; resolves to { pageUrl, flags, openCommand(), doctorCommand(), run(), runs(), report(), stop() }. */
export async function startTrial(o) {
  // The local stack with the user's names: the origins and the beacon site from `h3probe origins`' Caddyfile, the page
  // site serving --site as it is (no /beacon of its own: the page must post to the URL its configure() names), on
  // loopback under a certificate made for these names in the run folder. Every client is this machine (region
  // "local"): no country or network database is read, so none need be installed.
  const stack = await startStack({
    hosts: { page: PAGE_HOST, h2: o.h2.hostname, h3: o.h3.hostname, collector: o.beacon.hostname },
    site: { root: o.site, module: null, fixtures: false, beacon: false },
    ...(o.db ? { dbPath: o.db } : {}),
    location: { lookupCountry: () => null, asnDb: 'off' },
    hookSignals: false,
  }).catch((err) => { throw new TrialError(`the local servers did not start: ${err.message}`); });
  const { ports, store, collector, core, certPath, spki, stop } = stack;
  const stoppers = [];
  const stopAll = async () => {
    for (const fn of stoppers.reverse()) await fn().catch(() => {});
    await stop();
  };
  try {
    const maps = [[o.h2, ports.h2], [o.h3, ports.h3], [o.beacon, ports.page]];
    const flags = chromiumArgs({
      spki, quicOrigins: [`${o.h3.hostname}:${port(o.h3)}`],
      hostResolverRules: maps.map(([u, p]) => `MAP ${u.hostname}:${port(u)} ${LOOPBACK}:${p}`).join(', '),
    });
    const pageUrl = new URL(o.page, `https://${PAGE_HOST}:${ports.page}`).href;
    const pageStatus = await statusOf(fs.readFileSync(certPath), { host: PAGE_HOST, port: ports.page, path: o.page });
    if (pageStatus !== 200) throw new TrialError(`${o.page} of --site ${o.site} answers ${pageStatus}: give the built folder (with its index.html) and --page its path`);
    const openFlags = flags.filter((f) => /^--(origin-to-force-quic-on|ignore-certificate-errors-spki-list|host-resolver-rules|enable-quic)/.test(f));
    return {
      pageUrl, flags, stop: stopAll,
      runs: () => store.countRuns(),
      openCommand: () => `${CHROMIUM_PATH} --user-data-dir="$(mktemp -d)" ${openFlags.map((f) => `'${f}'`).join(' ')} '${pageUrl}'`,
      // h3probe doctor against this trial: its page, the page's own origin and beacon URLs, the trial's certificate,
      // and each name and port sent to its loopback listener (--connect-to: the ports differ from the URLs').
      doctorCommand: () => ['h3probe', 'doctor', '--page', pageUrl, '--h2', o.h2.origin, '--h3', o.h3.origin, '--collector', o.beacon.href,
        '--ca', certPath, ...[...maps, [new URL(pageUrl), ports.page]].flatMap(([u, p]) => ['--connect-to', `${u.hostname}:${port(u)}:${LOOPBACK}:${p}`]),
        '--browser', 'chromium', ...(o.searchText ? ['--search', o.searchText] : [])].map(shellWord).join(' '),
      report: async () => (await makeReport(core, { db: store.db, htmlPath: null })).text,
      run: () => drive(o, { flags, pageUrl, collector, store, stoppers }),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The headless page loads: each one opens the page, searches, and waits for its beacon at the collector. */
async function drive(o, { flags, pageUrl, collector, store, stoppers }) {
  try {
    await loadDriver();
  } catch {
    throw new TrialError('the headless run needs the npm package puppeteer-core (npm install puppeteer-core), or use --open');
  }
  const browser = await launchBrowser({ chromiumArgs: () => flags })
    .catch((err) => { throw new TrialError(`Chromium did not start from ${CHROMIUM_PATH}: ${err.message.split('\n')[0]}`); });
  stoppers.push(() => browser.close());
  const origins = [o.h2.origin, o.h3.origin];
  const incomplete = [];
  for (let load = 1; load <= o.loads; load++) {
    const before = store.countRuns();
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    page.setDefaultTimeout(o.timeoutMs);
    const seen = { module: false, origins: false, errors: [] };
    page.on('request', (r) => {
      if (/h3probe_browser[^/]*\.(mjs|wasm)$|\/(run|worker)[-.\w]*\.js$/.test(new URL(r.url()).pathname)) seen.module = true;
      if (origins.includes(new URL(r.url()).origin)) seen.origins = true;
    });
    page.on('pageerror', (err) => seen.errors.push(String(err.message)));
    page.on('console', (m) => m.type() === 'error' && seen.errors.push(m.text()));
    try {
      await page.goto(pageUrl, { timeout: o.timeoutMs });
      await doSearch(tabPage(page), o.search);
      await collector.waitForRuns(before + 1, o.timeoutMs);
    } catch (err) {
      throw new TrialError(`page load ${load} of ${o.loads}: ${noBeaconWhy(o, seen, err)}`);
    } finally {
      await context.close().catch(() => {});
    }
    // A beacon without a complete run: the page's module could not load (load_error) or its run failed.
    // The stored error text beside the reason: the reason names the file, the text why it did not load.
    const run = store.db.prepare('SELECT outcome, reason, error FROM runs ORDER BY rowid DESC LIMIT 1').get();
    const cause = [run.reason, run.error].filter(Boolean).join(': ');
    const why = run.outcome === 'complete' ? '' : `outcome ${run.outcome}${cause ? ` (${cause})` : ''}`;
    if (why) incomplete.push([load, why]);
    process.stderr.write(`h3probe trial: page load ${load} of ${o.loads}: beacon stored${why ? `, ${why}` : ''}\n`);
  }
  if (incomplete.length) {
    // The loads by what they said, each cause once (ten loads of one fault are one line).
    const causes = new Map();
    for (const [load, why] of incomplete) causes.set(why, [...(causes.get(why) ?? []), load]);
    throw new TrialError(`${incomplete.length} of ${o.loads} page loads sent a beacon without a complete run:\n` +
      [...causes].map(([why, loads]) => `  load${loads.length > 1 ? 's' : ''} ${loads.join(', ')}: ${why}`).join('\n') +
      '\nthe report counts them; what each reason means and its fix: docs/troubleshooting.md; h3probe trial --open prints the' +
      ' h3probe doctor command that checks this page in a browser');
  }
}

function noBeaconWhy(o, seen, err) {
  const errors = seen.errors.length ? `\npage errors:\n  ${seen.errors.slice(0, 5).join('\n  ')}` : '';
  if (!err.message.startsWith('waited ')) return `${err.message.split('\n')[0]}${errors}`;
  if (!seen.module) {
    return `no beacon in ${o.timeoutMs / 1000} s, and the page never loaded the probe's run: it never called searchCompleted()` +
      `${searchText(o.search)}, or its sampleRate` +
      ` left the load unsampled (configure({ sampleRate: 1 }) for the trial), or the module refused its config${errors}`;
  }
  return `no beacon in ${o.timeoutMs / 1000} s: the page called searchCompleted() and loaded the probe, but ` +
    `${seen.origins ? 'after its requests to the test origins no beacon arrived' : 'it made no request to the test origins'}:` +
    ` check that --h2, --h3 and --beacon are the URLs its configure() names, and the page's Content-Security-Policy${errors}`;
}
