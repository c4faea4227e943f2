// `h3probe collector` as a service: one process that takes the beacons over HTTP, decodes them in WASM, rate-limits
// each client network and stores the rows (SQLite with its group commit, or ClickHouse through its local log).
// SIGTERM/SIGINT drain, then exit 0.
import { startCollector } from './collector.mjs';
import { loadH3probeNode } from './h3probeNode.mjs';
import { openStoreSpec } from './storeSpec.mjs';
import { redactStoreUrl } from './clickhouseConnection.mjs';
import { onStopSignals } from './stopSignals.mjs';
import { readReportToken } from './collectorReport.mjs';

/** Logs one JSON line to stdout (the first one is {listening, ...} once the server listens). */
const log = (obj) => console.log(JSON.stringify({ time: new Date().toISOString(), ...obj }));

/** Runs the service with resolved options (collectorOptions.mjs) until a signal. */
export async function runCollectorService(options) {
  const core = await loadH3probeNode();
  // --store, or the SQLite file of --db when it is empty.
  const storeSpec = options.store || `sqlite:${options.db}`;
  // The live report's options, or null without a token file; the token is read (and checked) before anything starts,
  // so a bad file stops the service at once.
  const report = options.reportTokenFile ? { token: readReportToken(options.reportTokenFile), store: storeSpec,
    maxAge: options.reportMaxAge, rateLimit: options.reportRateLimit, rateBurst: options.reportRateBurst } : null;
  const store = await openStoreSpec(storeSpec, core);
  const collector = await startCollector({
    host: options.host, port: options.port, path: options.path, allowedOrigins: options.allowedOrigins,
    rateLimit: options.rateLimit, rateBurst: options.rateBurst, maxConnections: options.maxConnections,
    headersTimeout: options.headersTimeout, requestTimeout: options.requestTimeout, keepAliveTimeout: options.keepAliveTimeout,
    location: { trustedProxies: options.trustedProxies, countryHeaders: options.countryHeaders,
      countryDb: options.countryDb || undefined, asnDb: options.asnDb || undefined },
    store, core, report,
  });
  // The store as the log shows it: a ClickHouse URL's password as ***.
  log({ listening: `http://${hostForUrl(options.host)}:${collector.port}${options.path}`, port: collector.port,
    store: redactStoreUrl(storeSpec), ...(report ? { report: '/report (token required)' } : {}) });

  // First SIGTERM/SIGINT: drain → exit 0 when clean, 1 when the deadline cut it short or acknowledged beacons are left
  // in the ClickHouse log. npm's forwarded copy of that signal is ignored (stopSignals.mjs); a later signal forces exit 1.
  const stopper = onStopSignals({
    stop: async (why) => {
      log({ draining: why });
      const clean = await collector.drain(options.drainTimeout * 1000);
      const left = unshipped(await store.close());
      log({ stopped: clean ? 'drained' : 'drain deadline passed, connections cut', ...left, metrics: collector.metrics });
      process.exit(clean && !left ? 0 : 1);
    },
    force: (signal) => {
      log({ forced: signal });
      process.exit(1);
    },
    onCopy: (signal) => log({ ignored: signal, why: 'a copy of the signal that started the drain (npm forwards what the process group got)' }),
  });
  stopWhenOrphanedUnderNpm(stopper.stopNow);
}

// What a closed store left behind, for the service's last line: nothing (SQLite; ClickHouse with every acknowledged
// beacon inserted), or how many acknowledged beacons wait in which files of the ClickHouse log.
function unshipped(closed) {
  if (!closed?.unshipped) return undefined;
  return {
    unshipped: closed.unshipped, logFiles: closed.logFiles,
    left: `${closed.unshipped} acknowledged beacons are not in ClickHouse yet${closed.lastError ? ` (${closed.lastError})` : ''}: `
      + `they wait in ${closed.logFiles.join(', ')} and are inserted at the next start with the same log`,
  };
}

// `npx h3probe collector` and `npm run collector` start this process as `sh -c 'h3probe collector ...'` and npm forwards
// SIGTERM and SIGINT to that shell only. dash (Debian's sh) dies of SIGTERM without passing it on, which would leave the
// collector running with no parent and no drain. Under npm, losing the parent therefore starts the drain, as a first
// signal would (never as a second one: a SIGTERM to the process group reaches this process too).
function stopWhenOrphanedUnderNpm(stopNow) {
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stopNow('parent exited');
  }, 200);
  timer.unref();
}

const hostForUrl = (host) => (host.includes(':') ? `[${host}]` : host);
