// The beacon collector: an HTTP server that validates POST <path> bodies and stores accepted runs (the client IP is never
// stored), with GET /healthz and GET /metrics, CORS by page origin, a per-network rate limit, a connection cap, short
// header/body/idle timeouts and a graceful drain; with a report token, the live report (collectorReport.mjs). Run as a
// service by server/collectorService.mjs (`h3probe collector`).
import http from 'node:http';
import { browserFor } from './browserFor.mjs';
import { createClientLocator } from './clientLocator.mjs';
import { defaultOptions } from './collectorOptions.mjs';
import { countStored, createMetrics, observeLatency, renderMetrics } from './metrics.mjs';
import { createRateLimiter, networkKey } from './rateLimit.mjs';
import { REPORT_ROUTES, createReportService, reportRoutes } from './collectorReport.mjs';
import { isLoopback } from './regionFor.mjs';

// Past this we stop draining an oversized body and drop the connection instead of answering politely.
const MAX_DRAIN = 4 * 1024 * 1024;
const DEFAULTS = defaultOptions();

/**
 * store: from openStore(); core: the Node module (loadH3probeNode()): its decodeBeacon(text) validates a beacon and
 * returns the rows to store ({ok: true, run, requests} | {ok: false, error}), and its limits bound the body size.
 * location: the createClientLocator() options (trustedProxies, countryHeaders, countryDb, lookupCountry, asnDb,
 * lookupNetwork); env vars otherwise.
 * The other options are collectorOptions.mjs's (path, allowedOrigins, rateLimit, rateBurst, maxConnections, and the
 * timeouts in seconds); now: the clock that stamps each beacon's receivedAt, in ms (default the time; tests: a store
 * received over several days). report: {token, store (a --store spec), maxAge, rateLimit, rateBurst, now}, the report*
 * options; without it, no report routes.
 */
export async function startCollector({
  port = 0, host = '127.0.0.1', store, core, location = {},
  path = DEFAULTS.path, allowedOrigins = DEFAULTS.allowedOrigins, rateLimit = DEFAULTS.rateLimit, rateBurst = DEFAULTS.rateBurst,
  maxConnections = DEFAULTS.maxConnections, headersTimeout = DEFAULTS.headersTimeout, requestTimeout = DEFAULTS.requestTimeout,
  keepAliveTimeout = DEFAULTS.keepAliveTimeout, now = Date.now, report = null,
}) {
  if (!store || typeof core?.decodeBeacon !== 'function') throw new Error('startCollector needs a store and the Node module');
  if (headersTimeout > requestTimeout) throw new Error('headersTimeout must not be longer than requestTimeout');
  if (report && Object.hasOwn(REPORT_ROUTES, path)) throw new Error(`the beacon path ${path} is one of the report's routes`);
  if (report && !report.token) throw new Error('the live report needs its token');
  const limiter = createRateLimiter({ perMinute: rateLimit, burst: rateBurst });
  const maxBody = core.schema().limits.maxBeaconBytes;
  const locate = createClientLocator(location);
  const metrics = createMetrics();
  const allowAny = allowedOrigins.includes('*');
  const origins = new Set(allowedOrigins);
  const waiters = new Set();
  let draining = false;

  const server = http.createServer({
    headersTimeout: headersTimeout * 1000,
    requestTimeout: requestTimeout * 1000,
    keepAliveTimeout: keepAliveTimeout * 1000,
    // How often Node checks the two timeouts above (its default, 30 s, would let a slow client stay up to 30 s longer).
    connectionsCheckingInterval: Math.min(1000, headersTimeout * 500),
  }, handle);
  server.keepAliveTimeout = keepAliveTimeout * 1000;
  // Node applies the header timeout only once a request has begun: a connection that sends nothing at all would be kept
  // for ever. Any socket silent for headersTimeout is closed (keep-alive idleness is keepAliveTimeout, shorter).
  server.timeout = headersTimeout * 1000;
  server.maxConnections = maxConnections;
  server.on('connection', (socket) => {
    metrics.connections++;
    socket.once('close', () => { metrics.connections--; });
  });

  // CORS headers for a request's Origin: any origin, an allowed one echoed (caches must key on it), or none.
  function cors(origin) {
    if (allowAny) return { 'Access-Control-Allow-Origin': '*' };
    if (origin && origins.has(origin)) return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    return { Vary: 'Origin' };
  }
  const originRefused = (origin) => !allowAny && origin !== undefined && !origins.has(origin);

  function reply(res, status, text, headers = {}) {
    res.writeHead(status, {
      'Cache-Control': 'no-store',
      ...(text ? { 'Content-Type': 'text/plain; charset=utf-8' } : {}),
      ...(draining ? { Connection: 'close' } : {}),
      ...headers,
    });
    res.end(text);
  }

  function reject(res, reason, status, text, headers) {
    metrics.rejected[reason]++;
    reply(res, status, text, headers);
  }

  // Reports are rate-limited per client network like beacons, loopback included: a report is a computation.
  const serveReport = report && reportRoutes({ token: report.token, reply, readBody,
    reports: createReportService({ store: report.store, maxAge: report.maxAge ?? DEFAULTS.reportMaxAge, schema: core.schema(),
      now: report.now }),
    limiter: createRateLimiter({ perMinute: report.rateLimit ?? DEFAULTS.reportRateLimit, burst: report.rateBurst ?? DEFAULTS.reportRateBurst }),
    clientKey: (req) => networkKey(locate.client(req).address) });

  async function handle(req, res) {
    const q = req.url.indexOf('?');
    const url = q < 0 ? req.url : req.url.slice(0, q);
    if (url !== path) {
      if (req.method === 'GET' && url === '/healthz') return healthz(res);
      if (req.method === 'GET' && url === '/metrics') {
        return reply(res, 200, renderMetrics(metrics), { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      }
      if (serveReport && Object.hasOwn(REPORT_ROUTES, url)) return serveReport(req, res, url, q < 0 ? '' : req.url.slice(q + 1));
      return reply(res, 404, 'not found');
    }
    const t0 = performance.now();
    res.once('finish', () => observeLatency(metrics, (performance.now() - t0) / 1000));
    const origin = req.headers.origin;
    const corsHeaders = cors(origin);
    if (req.method === 'OPTIONS') {
      if (originRefused(origin)) return reject(res, 'origin', 403, 'origin not allowed', corsHeaders);
      return reply(res, 204, '', { ...corsHeaders, 'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Content-Type', 'Access-Control-Max-Age': '86400' });
    }
    if (req.method !== 'POST') return reject(res, 'method', 405, 'method not allowed', { ...corsHeaders, Allow: 'POST, OPTIONS' });
    if (originRefused(origin)) return reject(res, 'origin', 403, 'origin not allowed', corsHeaders);

    // The limit is taken before the body is read or decoded, so a flood costs little. Local clients are the operator's.
    const client = locate.client(req);
    if (!isLoopback(client.address)) {
      const taken = limiter.take(networkKey(client.address));
      if (!taken.ok) {
        return reject(res, 'rate_limited', 429, 'too many beacons from your network',
          { ...corsHeaders, 'Retry-After': String(taken.retryAfter) });
      }
    }
    const body = await readBody(req, maxBody);
    if (body === null) {
      return reject(res, 'too_large', 413, `beacon larger than ${maxBody} bytes`, { ...corsHeaders, Connection: 'close' });
    }
    let decoded;
    try {
      decoded = core.decodeBeacon(body);
    } catch (err) {
      decoded = { ok: false, error: `decoder failed: ${err.message}` };
    }
    if (!decoded?.ok) {
      return reject(res, 'invalid', 400, String(decoded?.error ?? 'invalid beacon'), corsHeaders);
    }
    let duplicate;
    try {
      // Only the country, region and network leave this function: the address itself is never stored.
      const { country, region, asn, asOrg } = locate(req, client);
      const { browser, browserMajor } = browserFor(req.headers);
      ({ duplicate } = await store.queueBeacon(decoded,
        { receivedAt: new Date(now()).toISOString(), region, country, asn, asOrg, browser, browserMajor }));
    } catch (err) {
      return reject(res, 'store_error', 500, `could not store beacon: ${err.message}`, corsHeaders);
    }
    if (duplicate) {
      metrics.duplicate++;
    } else {
      metrics.accepted++;
      countStored(metrics, decoded);
    }
    reply(res, 204, '', corsHeaders);
    notify();
  }

  async function healthz(res) {
    let health;
    try {
      health = await store.checkWritable();
    } catch (err) {
      health = { ok: false, error: err.message };
    }
    if (draining) health = { ...health, ok: false, draining: true };
    reply(res, health.ok ? 200 : 503, JSON.stringify({ status: health.ok ? 'ok' : 'unavailable', ...health }),
      { 'Content-Type': 'application/json' });
  }

  function notify() {
    if (waiters.size === 0) return;
    const runs = store.countRuns();
    for (const w of waiters) if (runs >= w.n) w.done();
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });

  return {
    port: server.address().port,
    /** The metrics (createMetrics()) /metrics exposes: a snapshot is the object itself. */
    metrics,
    /** Resolves with the run count once at least n runs are stored; rejects after timeoutMs. */
    waitForRuns(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const w = { n };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`waited ${timeoutMs} ms for ${n} runs, have ${store.countRuns()} (accepted ${metrics.accepted}, duplicate ${metrics.duplicate}, rejected ${JSON.stringify(metrics.rejected)})`));
        }, timeoutMs);
        w.done = () => { clearTimeout(timer); waiters.delete(w); resolve(store.countRuns()); };
        waiters.add(w);
        notify();
      });
    },
    /**
     * Graceful stop: no new connections, idle ones closed, in-flight requests answered (then their connections closed).
     * Resolves true when all connections ended within deadlineMs, false when the rest had to be cut.
     */
    drain(deadlineMs = DEFAULTS.drainTimeout * 1000) {
      draining = true;
      return new Promise((resolve) => {
        let done = false;
        const timer = setTimeout(() => {
          if (done) return;
          done = true;
          server.closeAllConnections();
          resolve(false);
        }, deadlineMs);
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(idle);
          if (!done) { done = true; resolve(true); }
        });
        server.closeIdleConnections();
      });
    },
    /** Stops at once: every connection cut. Resolves when the server has closed, or after 2 s: with maxConnections set,
     *  Node 20's count of open connections can stay above 0 after a dropped one, and server.close() would wait for ever. */
    close() {
      for (const w of waiters) w.done();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, 2000);
        server.closeAllConnections();
        server.close(() => { clearTimeout(timer); resolve(); });
      });
    },
  };
}

/** Resolves with the body text, or null when it is larger than maxBody bytes. */
function readBody(req, maxBody) {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (declared > MAX_DRAIN) {
      req.destroy();
      return resolve(null);
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= maxBody) chunks.push(chunk);
      else if (size > MAX_DRAIN) req.destroy();
    });
    // The bytes as read: the decoder takes them without a conversion to a string and back.
    req.on('end', () => resolve(size > maxBody ? null : Buffer.concat(chunks)));
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(null));
  });
}
