// `h3probe collector` as a service: one process, or a cluster of HTTP workers around a primary that owns the SQLite
// store and the rate limit (SQLite has one writer; one limiter sees every beacon of a network, whichever worker took the
// connection). Workers read, rate-check (one IPC round trip), decode in WASM and hand the decoded rows to the primary,
// which commits them in groups; a worker answers 204 only after the primary's commit. SIGTERM/SIGINT drain, then exit 0.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { localBackend, startCollector } from './collector.mjs';
import { loadH3probeNode } from './h3probeNode.mjs';
import { createRateLimiter } from './rateLimit.mjs';
import { mergeMetrics } from './metrics.mjs';
import { openStoreSpec } from './storeSpec.mjs';
import { redactStoreUrl } from './clickhouseConnection.mjs';
import { onStopSignals } from './stopSignals.mjs';
import { readReportToken } from './collectorReport.mjs';

const WORKER_ENTRY = fileURLToPath(new URL('./collectorWorker.mjs', import.meta.url));
const SNAPSHOT_TIMEOUT_MS = 2000;

const collectorArgs = (o) => ({
  host: o.host, port: o.port, path: o.path, allowedOrigins: o.allowedOrigins, rateLimit: o.rateLimit, rateBurst: o.rateBurst,
  headersTimeout: o.headersTimeout, requestTimeout: o.requestTimeout, keepAliveTimeout: o.keepAliveTimeout,
  location: { trustedProxies: o.trustedProxies, countryHeaders: o.countryHeaders, countryDb: o.countryDb || undefined,
    asnDb: o.asnDb || undefined },
});

/** Logs one JSON line to stdout (the first one is {listening, ...} once every worker listens). */
const log = (obj) => console.log(JSON.stringify({ time: new Date().toISOString(), ...obj }));

/** Runs the service with resolved options (collectorOptions.mjs) until a signal; never resolves in the primary. */
export async function runCollectorService(options) {
  return options.workers > 1 ? runPrimary(options) : runSingle(options);
}

// The live report's options (startCollector's report, localBackend's), or null without a token file; the token is read
// (and checked) before anything starts, so a bad file stops the service at once.
function reportOf(options, core) {
  if (!options.reportTokenFile) return null;
  return { token: readReportToken(options.reportTokenFile), store: storeOf(options), maxAge: options.reportMaxAge,
    rateLimit: options.reportRateLimit, rateBurst: options.reportRateBurst, schema: core.schema() };
}

async function runSingle(options) {
  const core = await loadH3probeNode();
  const report = reportOf(options, core);
  const store = await openStoreSpec(storeOf(options), core);
  const collector = await startCollector({ ...collectorArgs(options), store, core, maxConnections: options.maxConnections, report });
  log({ listening: `http://${hostForUrl(options.host)}:${collector.port}${options.path}`, port: collector.port, store: shownStore(options), workers: 1,
    ...(report ? { report: '/report (token required)' } : {}) });
  const stopper = onSignals(async () => {
    const clean = await collector.drain(options.drainTimeout * 1000);
    const left = unshipped(await store.close());
    log({ stopped: clean ? 'drained' : 'drain deadline passed, connections cut', ...left, metrics: collector.metrics });
    return clean && !left;
  });
  stopWhenOrphanedUnderNpm(stopper.stopNow);
}

async function runPrimary(options) {
  const core = await loadH3probeNode();
  const report = reportOf(options, core);
  const store = await openStoreSpec(storeOf(options), core);
  // The reports too are made (and cached, and rate-limited) here, once for all workers.
  const local = localBackend({ store, rateLimit: options.rateLimit, rateBurst: options.rateBurst, report });
  const limiter = createRateLimiter({ perMinute: options.rateLimit, burst: options.rateBurst });
  let draining = false;
  let nextId = 1;
  const pending = new Map();
  const listening = new Map();

  cluster.setupPrimary({ exec: WORKER_ENTRY, serialization: 'advanced' });
  const env = { H3PROBE_COLLECTOR_OPTIONS: JSON.stringify({ ...options, maxConnections: Math.ceil(options.maxConnections / options.workers) }) };

  // Asks one worker (its metrics snapshot); resolves null when it does not answer in time.
  function askWorker(worker, op) {
    return new Promise((resolve) => {
      const id = nextId++;
      const timer = setTimeout(() => { pending.delete(id); resolve(null); }, SNAPSHOT_TIMEOUT_MS);
      pending.set(id, (result) => { clearTimeout(timer); resolve(result); });
      send(worker, { h3probe: 'rpc', id, op });
    });
  }

  const ops = {
    take: ([key]) => limiter.take(key),
    store: ([decoded, meta]) => local.store(decoded, meta),
    takeReport: ([key]) => local.takeReport(key),
    report: ([search]) => local.report(search),
    health: () => ({ ...local.health(), workers: Object.keys(cluster.workers).length }),
    metrics: async () => {
      const snaps = await Promise.all(Object.values(cluster.workers).map((w) => askWorker(w, 'snapshot')));
      return mergeMetrics(snaps.filter(Boolean));
    },
  };

  function fork() {
    const worker = cluster.fork(env);
    worker.on('message', async (msg) => {
      if (msg?.h3probe === 'reply') return pending.get(msg.id)?.(msg.result), pending.delete(msg.id);
      if (msg?.h3probe === 'listening') return ready(worker, msg.port);
      if (msg?.h3probe !== 'rpc') return;
      let reply;
      try {
        reply = { h3probe: 'reply', id: msg.id, result: await ops[msg.op](msg.args ?? []) };
      } catch (err) {
        reply = { h3probe: 'reply', id: msg.id, error: err.message };
      }
      send(worker, reply);
    });
  }

  let announced = false;
  function ready(worker, port) {
    listening.set(worker.id, port);
    if (!announced && listening.size === options.workers) {
      announced = true;
      log({ listening: `http://${hostForUrl(options.host)}:${port}${options.path}`, port, store: shownStore(options), workers: options.workers,
        ...(report ? { report: '/report (token required)' } : {}) });
    }
  }

  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (draining) return;
    log({ workerExited: worker.process.pid, code, signal, restarting: true });
    fork();
  });
  for (let i = 0; i < options.workers; i++) fork();

  const stopper = onSignals(async () => {
    draining = true;
    const workers = Object.values(cluster.workers);
    const exited = workers.map((w) => new Promise((resolve) => (w.isDead() ? resolve() : w.once('exit', resolve))));
    for (const w of workers) send(w, { h3probe: 'drain' });
    const clean = await Promise.race([
      Promise.all(exited).then(() => workers.every((w) => w.process.exitCode === 0)),
      new Promise((resolve) => setTimeout(() => resolve(false), options.drainTimeout * 1000 + 1000).unref()),
    ]);
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL');
    // Every beacon a worker acknowledged was committed (SQLite) or logged (ClickHouse) before its 204; closing checkpoints the WAL or ships the log.
    const left = unshipped(await store.close());
    log({ stopped: clean ? 'drained' : 'drain deadline passed, workers killed', ...left });
    return clean && !left;
  }, () => { for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL'); });
  stopWhenOrphanedUnderNpm(stopper.stopNow);
}

/** A cluster worker (collectorWorker.mjs): HTTP and decoding here, the store and rate limit in the primary. */
export async function runWorker(options) {
  const core = await loadH3probeNode();
  let nextId = 1;
  const pending = new Map();
  const ask = (op, ...args) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send(process, { h3probe: 'rpc', id, op, args });
  });
  const backend = {
    take: (key) => ask('take', key),
    store: (decoded, meta) => ask('store', decoded, meta),
    health: () => ask('health'),
    metrics: () => ask('metrics'),
    countRuns: () => NaN,
    takeReport: (key) => ask('takeReport', key),
    report: (search) => ask('report', search),
  };
  const report = options.reportTokenFile ? { token: readReportToken(options.reportTokenFile) } : null;
  const collector = await startCollector({ ...collectorArgs(options), backend, core, maxConnections: options.maxConnections, report });

  let stopping = null;
  const stop = () => {
    stopping ??= collector.drain(options.drainTimeout * 1000).then((clean) => {
      // Exit once the primary has our last replies; disconnect flushes the channel.
      process.exitCode = clean ? 0 : 1;
      process.disconnect();
    });
  };
  process.on('message', (msg) => {
    if (msg?.h3probe === 'reply') {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (p) (msg.error !== undefined ? p.reject(new Error(msg.error)) : p.resolve(msg.result));
    } else if (msg?.h3probe === 'rpc' && msg.op === 'snapshot') {
      send(process, { h3probe: 'reply', id: msg.id, result: collector.metrics });
    } else if (msg?.h3probe === 'drain') {
      stop();
    }
  });
  // A signal to the whole process group (Ctrl-C, systemd KillMode=control-group) reaches workers too: drain the same way.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.send({ h3probe: 'listening', port: collector.port });
}

// First SIGTERM/SIGINT: drain() → exit 0 when clean, 1 when the deadline cut it short or acknowledged beacons are left
// in the ClickHouse log. npm's forwarded copy of that signal is ignored (stopSignals.mjs); a later signal: force() → exit 1.
function onSignals(drain, force = () => {}) {
  return onStopSignals({
    stop: async (why) => {
      log({ draining: why });
      const clean = await drain();
      process.exit(clean ? 0 : 1);
    },
    force: (signal) => {
      log({ forced: signal });
      force();
      process.exit(1);
    },
    onCopy: (signal) => log({ ignored: signal, why: 'a copy of the signal that started the drain (npm forwards what the process group got)' }),
  });
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

// An IPC message to a worker (or, from a worker, to the primary); a closed channel (the other side exiting) is not an
// error worth crashing for: the request waiting on it ends with its connection.
function send(target, msg) {
  const connected = typeof target.isConnected === 'function' ? target.isConnected() : target.connected;
  if (connected) target.send(msg, (err) => { if (err && err.code !== 'EPIPE' && err.code !== 'ERR_IPC_CHANNEL_CLOSED') log({ ipcError: err.message }); });
}

// --store, or the SQLite file of --db when it is empty.
const storeOf = (o) => o.store || `sqlite:${o.db}`;
// The store as a log line shows it: a ClickHouse URL's password as ***.
const shownStore = (o) => redactStoreUrl(storeOf(o));

const hostForUrl = (host) => (host.includes(':') ? `[${host}]` : host);
