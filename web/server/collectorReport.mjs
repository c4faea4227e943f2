// The collector's live report (--report-token-file): GET /report (HTML), /report.json and /report.txt, made by the
// report's own code (makeReport, the `h3probe report --html --json` files) in a thread of its own, cached per query for
// reportMaxAge seconds, and answered only to a request that carries the token. docs/collector.md, "The live report".
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { GROUP_BY, checkPayloadBytes, normalizeSince } from '../report/readReportData.mjs';
import { CLICKHOUSE_GROUP_BY } from './clickhouseRunSql.mjs';
import { parseStoreSpec } from './storeSpec.mjs';

/** The routes and what each serves of the one computed report. */
export const REPORT_ROUTES = Object.freeze({ '/report': 'html', '/report.json': 'json', '/report.txt': 'text' });
/** The query parameters a report takes (the `h3probe report` flags of the same names); any other is refused. */
export const REPORT_PARAMS = Object.freeze(['by', 'since', 'payload-bytes']);
/** Distinct queries whose reports are kept; the least recently asked goes first. */
export const REPORT_CACHE_ENTRIES = 8;
/** Reports being computed at once; a request for one more is answered 503 (each reads the whole store). */
export const REPORT_COMPUTING = 2;
/** A token shorter than this is refused at start: it must not be guessable at the rate limit. */
export const MIN_TOKEN_CHARS = 16;
/** How long the browser keeps the cookie the token form sets, in seconds. */
export const REPORT_COOKIE_MAX_AGE = 7 * 24 * 3600;
const COOKIE = 'h3probe_report';
const MAX_FORM_BYTES = 4096;
const CONTENT_TYPES = { html: 'text/html; charset=utf-8', json: 'application/json; charset=utf-8', text: 'text/plain; charset=utf-8' };

// Every answer of the report routes: never stored by a cache or a browser, never a referrer, never framed, no CORS
// header (a page of another origin cannot read it), and the page itself may load nothing (it is self-contained).
export const REPORT_HEADERS = Object.freeze({
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
});

const oneLine = (err) => String(err?.message ?? err).split('\n')[0];

/** The token in a file (surrounding whitespace dropped); throws with the file's name, never its content, when unfit. */
export function readReportToken(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--report-token-file ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  }
  const token = text.trim();
  if (!/^[\x21-\x7e]+$/.test(token) || token.length < MIN_TOKEN_CHARS) {
    throw new Error(`--report-token-file ${file}: the token must be at least ${MIN_TOKEN_CHARS} printable ASCII characters without spaces `
      + '(e.g. openssl rand -hex 32)');
  }
  return token;
}

const digest = (text) => crypto.createHash('sha256').update(text).digest();
/** Whether two texts are equal, in a time that does not depend on where they differ (equal-length digests). */
const sameText = (a, b) => crypto.timingSafeEqual(digest(a), digest(b));

/**
 * The query string of a report request → {query: {by, since, payloadBytes}} (makeReport's options) or {error}: unknown or
 * repeated parameters, and values the report would refuse, checked by the report's own rules.
 */
export function parseReportQuery(search, { kind, schema }) {
  const params = new URLSearchParams(search);
  const query = { by: 'region', since: '', payloadBytes: 0 };
  const seen = new Set();
  for (const [key, value] of params) {
    if (key === 'token') return { error: 'the token is never read from the URL (it would be logged and kept in history): send Authorization: Bearer TOKEN' };
    if (!REPORT_PARAMS.includes(key)) return { error: `unknown parameter "${key}": the report takes ${REPORT_PARAMS.join(', ')}` };
    if (seen.has(key)) return { error: `parameter "${key}" given twice` };
    seen.add(key);
    if (key === 'by') {
      const groupings = Object.keys(kind === 'clickhouse' ? CLICKHOUSE_GROUP_BY : GROUP_BY);
      if (!groupings.includes(value)) return { error: `by must be one of ${groupings.join(', ')}, got "${value}"` };
      query.by = value;
    } else if (key === 'since') {
      try { query.since = normalizeSince(value); } catch (err) { return { error: oneLine(err).replace(/^--/, '') }; }
    } else {
      const n = /^\d{1,10}$/.test(value) ? Number(value) : value;
      try { checkPayloadBytes(n, schema); } catch (err) { return { error: oneLine(err).replace(/^--/, '') }; }
      query.payloadBytes = n;
    }
  }
  return { query };
}

// The report thread (collectorReportWorker.mjs), started at once and again after it dies: run(query) resolves to
// {text, html, json} or rejects with the report's one-line reason.
function reportThread(store) {
  let worker = null;
  let nextId = 1;
  const waiting = new Map();
  function start() {
    const w = new Worker(new URL('./collectorReportWorker.mjs', import.meta.url), { workerData: { store } });
    w.unref();
    w.on('message', (m) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if (p) (m.error !== undefined ? p.reject(new Error(m.error)) : p.resolve(m));
    });
    const stopped = (why) => {
      if (worker !== w) return;
      worker = null;
      for (const p of waiting.values()) p.reject(new Error(`the report thread stopped: ${why}`));
      waiting.clear();
    };
    w.on('error', (err) => stopped(oneLine(err)));
    w.on('exit', (code) => stopped(`exit code ${code}`));
    worker = w;
  }
  start();
  return {
    run(query) {
      if (!worker) start();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, query });
      });
    },
    close() {
      const w = worker;
      worker = null;
      return w ? w.terminate().then(() => {}) : Promise.resolve();
    },
  };
}

/**
 * The reports of one store: store, a --store spec (sqlite:PATH or clickhouse://…, opened read-only by the thread);
 * maxAge: seconds a computed report is served again; schema: core.schema(); now: a clock in ms (tests).
 * report(search) resolves to {status: 200, text, html, json, generatedAt (ms since the epoch)} or {status, error}
 * (400 a bad query, 503 too many reports computing, 500 the report failed).
 */
export function createReportService({ store, maxAge, schema, now = Date.now, entries = REPORT_CACHE_ENTRIES }) {
  const { kind } = parseStoreSpec(store);
  const thread = reportThread(store);
  const cache = new Map();
  let computing = 0;

  function compute(key, query) {
    computing++;
    const entry = { done: false, at: 0, promise: thread.run(query) };
    entry.promise.then((r) => { entry.done = true; entry.at = now(); r.generatedAt = entry.at; },
      () => { if (cache.get(key) === entry) cache.delete(key); }).finally(() => { computing--; });
    cache.set(key, entry);
    // Bounded: the least recently asked report that is not being computed goes (Map keeps the order of insertion).
    for (const [k, e] of cache) {
      if (cache.size <= entries) break;
      if (e.done) cache.delete(k);
    }
    return entry;
  }

  return {
    kind,
    async report(search) {
      const parsed = parseReportQuery(search, { kind, schema });
      if (parsed.error) return { status: 400, error: parsed.error };
      const key = JSON.stringify(parsed.query);
      let entry = cache.get(key);
      if (entry?.done && now() - entry.at >= maxAge * 1000) entry = null;
      if (entry) {
        cache.delete(key);
        cache.set(key, entry);
      } else {
        if (computing >= REPORT_COMPUTING) return { status: 503, error: 'other reports are being computed: try again in a few seconds', retryAfter: 5 };
        cache.delete(key);
        entry = compute(key, parsed.query);
      }
      try {
        return { status: 200, ...await entry.promise };
      } catch (err) {
        return { status: 500, error: `the report failed: ${oneLine(err)}` };
      }
    },
    close: () => thread.close(),
  };
}

/** The token form's cookie value: a digest of the token, so the browser does not keep the token itself. */
const cookieOf = (token) => crypto.createHash('sha256').update(`h3probe report cookie\0${token}`).digest('base64url');

function cookieFrom(header = '') {
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === COOKIE) return part.slice(i + 1).trim();
  }
  return null;
}

/** Whether a request carries the token: Authorization: Bearer TOKEN, or the cookie the token form set. */
function authorized(req, token) {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (m) return sameText(m[1], token);
  const cookie = cookieFrom(req.headers.cookie);
  return cookie !== null && sameText(cookie, cookieOf(token));
}

// The one answer to a request without the token, missing or wrong alike: how to send it, nothing of the data.
const REFUSED_TEXT = 'this report needs its token: send Authorization: Bearer TOKEN, or open /report in a browser and enter it there\n';
const REFUSED_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>h3probe report: token needed</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}input{font:inherit;width:100%}</style>
</head><body>
<h1>This report needs its token</h1>
<form method="post"><p><label>Token <input name="token" type="password" autocomplete="current-password" required autofocus></label></p>
<p><button type="submit">Open the report</button></p></form>
<p>Your browser then keeps a cookie for this collector's report for 7 days. Scripts send <code>Authorization: Bearer TOKEN</code>.</p>
</body></html>
`;

/**
 * The report routes' handler for startCollector: token (the secret), backend (its takeReport(key) and report(search)),
 * clientKey(req) (the rate limit's key), reply(res, status, text, headers) (the collector's). Returns
 * handle(req, res, route, search).
 */
export function reportRoutes({ token, backend, clientKey, reply }) {
  const answer = (res, status, text, headers = {}) => reply(res, status, text, { ...REPORT_HEADERS, ...headers });
  const refuse = (res, format) => answer(res, 401, format === 'html' ? REFUSED_HTML : REFUSED_TEXT, {
    'Content-Type': CONTENT_TYPES[format === 'html' ? 'html' : 'text'], 'WWW-Authenticate': 'Bearer realm="h3probe report"' });

  return async function handle(req, res, route, search) {
    const format = REPORT_ROUTES[route];
    if (!['GET', 'HEAD', 'POST'].includes(req.method) || (req.method === 'POST' && format !== 'html')) {
      return answer(res, 405, 'method not allowed\n', { Allow: format === 'html' ? 'GET, HEAD, POST' : 'GET, HEAD' });
    }
    // Counted before the token is checked: a guess costs one of the network's requests like any other.
    const taken = await backend.takeReport(clientKey(req));
    if (!taken.ok) return answer(res, 429, 'too many report requests from your network\n', { 'Retry-After': String(taken.retryAfter) });
    if (req.method === 'POST') return tokenForm(req, res, format, search);
    if (!authorized(req, token)) return refuse(res, format);
    let made;
    try {
      made = await backend.report(search);
    } catch (err) {
      made = { status: 500, error: `the report failed: ${oneLine(err)}` };
    }
    if (made.status !== 200) {
      return answer(res, made.status, `${made.error}\n`, made.retryAfter ? { 'Retry-After': String(made.retryAfter) } : {});
    }
    // The text as `h3probe report` prints it: a line end after its last line.
    return answer(res, 200, format === 'text' ? `${made.text}\n` : made[format], { 'Content-Type': CONTENT_TYPES[format],
      'Last-Modified': new Date(made.generatedAt).toUTCString() });
  };

  // POST /report from the token form: the right token sets the cookie (for /report and /report.json) and sends the
  // browser back to the same URL; a form posted from another site is refused, so no page elsewhere can log a browser in.
  async function tokenForm(req, res, format, search) {
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin;
    let foreign = site !== undefined && site !== 'same-origin' && site !== 'none';
    if (site === undefined && origin !== undefined) {
      try { foreign = new URL(origin).host !== req.headers.host; } catch { foreign = true; }
    }
    if (foreign) return answer(res, 403, 'a token form from another site is refused\n');
    const body = await readForm(req);
    if (body === null) return answer(res, 413, `the form is larger than ${MAX_FORM_BYTES} bytes\n`, { Connection: 'close' });
    const given = new URLSearchParams(body).get('token') ?? '';
    if (!sameText(given.trim(), token)) return refuse(res, format);
    const cookie = (p) => `${COOKIE}=${cookieOf(token)}; Path=${p}; Max-Age=${REPORT_COOKIE_MAX_AGE}; HttpOnly; Secure; SameSite=Strict`;
    return answer(res, 303, '', { Location: `report${search ? `?${search}` : ''}`, 'Set-Cookie': [cookie('/report'), cookie('/report.json')] });
  }
}

function readForm(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) chunks.push(chunk);
      else req.destroy();
    });
    req.on('end', () => resolve(size > MAX_FORM_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(null));
  });
}
