// The beacon collector: an HTTP server that validates POST /beacon bodies and stores accepted runs (the client IP is never stored).
import http from 'node:http';
import { createClientLocator } from './clientLocator.mjs';

// Past this we stop draining an oversized body and drop the connection instead of answering politely.
const MAX_DRAIN = 4 * 1024 * 1024;
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
};

/**
 * store: from openStore(); core: the Node module (loadH3probeNode()): its decodeBeacon(text) validates a beacon and
 * returns the rows to store ({ok: true, run, requests} | {ok: false, error}), and its limits bound the body size.
 * location: the createClientLocator() options (trustedProxies, countryHeaders, countryDb, lookupCountry); env vars otherwise.
 */
export async function startCollector({ port = 0, host = '127.0.0.1', store, core, location = {} }) {
  if (!store || typeof core?.decodeBeacon !== 'function') throw new Error('startCollector needs a store and the Node module');
  const maxBody = core.schema().limits.maxBeaconBytes;
  const locate = createClientLocator(location);
  const counts = { accepted: 0, rejected: 0, duplicate: 0, tooLarge: 0, failed: 0 };
  const waiters = new Set();

  const server = http.createServer(async (req, res) => {
    const url = req.url.split('?')[0];
    if (url !== '/beacon') return reply(res, 404, 'not found');
    if (req.method === 'OPTIONS') return reply(res, 204, '', CORS);
    if (req.method !== 'POST') return reply(res, 405, 'method not allowed', { Allow: 'POST, OPTIONS' });
    const body = await readBody(req, maxBody);
    if (body === null) {
      counts.tooLarge++;
      return reply(res, 413, `beacon larger than ${maxBody} bytes`, { Connection: 'close' });
    }
    let decoded;
    try {
      decoded = core.decodeBeacon(body);
    } catch (err) {
      decoded = { ok: false, error: `decoder failed: ${err.message}` };
    }
    if (!decoded?.ok) {
      counts.rejected++;
      return reply(res, 400, String(decoded?.error ?? 'invalid beacon'));
    }
    try {
      // Only the country and region leave this function: the address itself is never stored.
      const { country, region } = locate(req);
      const meta = { receivedAt: new Date().toISOString(), region, country };
      const { duplicate } = await store.queueBeacon(decoded, meta);
      counts[duplicate ? 'duplicate' : 'accepted']++;
    } catch (err) {
      counts.failed++;
      return reply(res, 500, `could not store beacon: ${err.message}`);
    }
    reply(res, 204, '');
    notify();
  });

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
    counts,
    /** Resolves with the run count once at least n runs are stored; rejects after timeoutMs. */
    waitForRuns(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const w = { n };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`waited ${timeoutMs} ms for ${n} runs, have ${store.countRuns()} (${JSON.stringify(counts)})`));
        }, timeoutMs);
        w.done = () => { clearTimeout(timer); waiters.delete(w); resolve(store.countRuns()); };
        waiters.add(w);
        notify();
      });
    },
    close() {
      for (const w of waiters) w.done();
      return new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
    },
  };
}

function reply(res, status, text, headers = {}) {
  res.writeHead(status, {
    'Access-Control-Allow-Origin': '*',
    'Cache-Control': 'no-store',
    ...(text ? { 'Content-Type': 'text/plain; charset=utf-8' } : {}),
    ...headers,
  });
  res.end(text);
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
    req.on('end', () => resolve(size > maxBody ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(null));
  });
}
