// The collector's live report (--report-token-file): GET /report, /report.json, /report.txt behind the token, made by
// makeReport in a thread of its own and cached per query (docs/collector.md, "The live report").
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { GROUP_BY, checkPayloadBytes, normalizeSince } from '../report/readReportData.mjs';
import { CLICKHOUSE_GROUP_BY } from './clickhouseRunSql.mjs';
import { parseStoreSpec } from './storeSpec.mjs';

export const REPORT_ROUTES = Object.freeze({ '/report': 'html', '/report.json': 'json', '/report.txt': 'text' });
export const REPORT_PARAMS = Object.freeze(['by', 'since', 'payload-bytes']);
/** Queries whose reports are kept, and reports made at once (one more: 503). */
export const REPORT_CACHE_ENTRIES = 8;
export const REPORT_COMPUTING = 2;
export const MIN_TOKEN_CHARS = 16;
export const REPORT_COOKIE_MAX_AGE = 7 * 86400;
const COOKIE = 'h3probe_report';
const TYPES = { html: 'text/html; charset=utf-8', json: 'application/json; charset=utf-8', text: 'text/plain; charset=utf-8' };

// No cache, referrer, frame or CORS header: another origin can neither read nor embed it.
export const REPORT_HEADERS = Object.freeze({
  'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
});

const oneLine = (err) => String(err?.message ?? err).split('\n')[0];

/** The token in a file, trimmed; an unfit one throws, naming the file, never the token. */
export function readReportToken(file) {
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch (err) { throw new Error(`--report-token-file ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`); }
  const token = text.trim();
  if (!/^[\x21-\x7e]+$/.test(token) || token.length < MIN_TOKEN_CHARS) {
    throw new Error(`--report-token-file ${file}: the token must be at least ${MIN_TOKEN_CHARS} printable ASCII characters (openssl rand -hex 32)`);
  }
  return token;
}

const digest = (text) => crypto.createHash('sha256').update(text).digest();
const sameText = (a, b) => crypto.timingSafeEqual(digest(a), digest(b));
/** The form's cookie holds a digest of the token, not the token. */
const cookieOf = (token) => crypto.createHash('sha256').update(`h3probe report cookie\0${token}`).digest('base64url');

/** A query string → {query: makeReport's {by, since, payloadBytes}} or {error}, by the report's own checks. */
export function parseReportQuery(search, { kind, schema }) {
  const query = { by: 'region', since: '', payloadBytes: 0 };
  const seen = new Set();
  for (const [key, value] of new URLSearchParams(search)) {
    if (key === 'token') return { error: 'the token is never read from the URL (logs, history): send Authorization: Bearer TOKEN' };
    if (!REPORT_PARAMS.includes(key)) return { error: `unknown parameter "${key}": the report takes ${REPORT_PARAMS.join(', ')}` };
    if (seen.has(key)) return { error: `parameter "${key}" given twice` };
    seen.add(key);
    try {
      if (key === 'by') {
        const groupings = Object.keys(kind === 'clickhouse' ? CLICKHOUSE_GROUP_BY : GROUP_BY);
        if (!groupings.includes(value)) return { error: `by must be one of ${groupings.join(', ')}, got "${value}"` };
        query.by = value;
      } else if (key === 'since') {
        query.since = normalizeSince(value);
      } else {
        query.payloadBytes = /^\d{1,10}$/.test(value) ? Number(value) : value;
        checkPayloadBytes(query.payloadBytes, schema);
      }
    } catch (err) {
      return { error: oneLine(err).replace(/^--/, '') };
    }
  }
  return { query };
}

// One report in a thread of its own (off the beacons' event loop), ended with it, its memory too.
function reportInThread(store, query) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./collectorReportWorker.mjs', import.meta.url), { workerData: { store, query } });
    w.once('message', (m) => (m.error !== undefined ? reject(new Error(m.error)) : resolve(m)));
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`the report thread stopped (exit code ${code})`)));
  });
}

/** A store's reports (a --store spec), kept maxAge s; report(search) → {status: 200, text, html, json, generatedAt} or {status, error}. */
export function createReportService({ store, maxAge, schema, now = Date.now }) {
  const { kind } = parseStoreSpec(store);
  const cache = new Map();
  let computing = 0;
  return {
    async report(search) {
      const { query, error } = parseReportQuery(search, { kind, schema });
      if (error) return { status: 400, error };
      const key = JSON.stringify(query);
      let entry = cache.get(key);
      if (entry?.at !== undefined && now() - entry.at >= maxAge * 1000) entry = undefined;
      cache.delete(key);
      if (!entry) {
        if (computing >= REPORT_COMPUTING) return { status: 503, error: 'other reports are being made: try again soon', retryAfter: 5 };
        computing++;
        entry = { promise: reportInThread(store, query) };
        entry.promise.then((r) => { entry.at = now(); r.generatedAt = Date.now(); },
          () => cache.get(key) === entry && cache.delete(key)).finally(() => { computing--; });
      }
      // In the order last asked: the oldest made one goes first.
      cache.set(key, entry);
      for (const [k, e] of cache) if (cache.size > REPORT_CACHE_ENTRIES && e.at !== undefined) cache.delete(k);
      try {
        return { status: 200, ...await entry.promise };
      } catch (err) {
        return { status: 500, error: `the report failed: ${oneLine(err)}` };
      }
    },
  };
}

// Missing or wrong token alike: how to send it, nothing of the data.
const REFUSED = 'this report needs its token: Authorization: Bearer TOKEN, or open /report in a browser\n';
const REFUSED_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>h3probe report: token needed</title><h1>This report needs its token</h1>
<form method="post"><input name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Open the report</button></form>
<p>Your browser keeps a cookie for this report for ${REPORT_COOKIE_MAX_AGE / 86400} days. Scripts send Authorization: Bearer TOKEN.</p>\n`;

/**
 * The routes' handler(req, res, route, search); reports: createReportService(); limiter: the report requests' rate
 * limit (createRateLimiter()); reply, readBody: the collector's.
 */
export function reportRoutes({ token, reports, limiter, clientKey, reply, readBody }) {
  const answer = (res, status, text, headers = {}) => reply(res, status, text, { ...REPORT_HEADERS, ...headers });
  const refuse = (res, format) => answer(res, 401, format === 'html' ? REFUSED_PAGE : REFUSED,
    { 'Content-Type': TYPES[format === 'html' ? 'html' : 'text'], 'WWW-Authenticate': 'Bearer realm="h3probe report"' });
  const authorized = (req) => {
    const bearer = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (bearer) return sameText(bearer[1], token);
    const cookie = /(?:^|;\s*)h3probe_report=([^;]*)/.exec(req.headers.cookie ?? '');
    return Boolean(cookie) && sameText(cookie[1].trim(), cookieOf(token));
  };

  return async function handle(req, res, route, search) {
    const format = REPORT_ROUTES[route];
    const allow = format === 'html' ? 'GET, HEAD, POST' : 'GET, HEAD';
    if (!allow.split(', ').includes(req.method)) return answer(res, 405, 'method not allowed\n', { Allow: allow });
    // Before the token check: a guess costs a request.
    const taken = limiter.take(clientKey(req));
    if (!taken.ok) return answer(res, 429, 'too many report requests from your network\n', { 'Retry-After': String(taken.retryAfter) });
    if (req.method === 'POST') return tokenForm(req, res, search);
    if (!authorized(req)) return refuse(res, format);
    let made;
    try { made = await reports.report(search); } catch (err) { made = { status: 500, error: `the report failed: ${oneLine(err)}` }; }
    if (made.status !== 200) return answer(res, made.status, `${made.error}\n`, made.retryAfter ? { 'Retry-After': String(made.retryAfter) } : {});
    return answer(res, 200, format === 'text' ? `${made.text}\n` : made[format],
      { 'Content-Type': TYPES[format], 'Last-Modified': new Date(made.generatedAt).toUTCString() });
  };

  // The form's POST: the right token sets the cookie and goes back; another site's form is refused.
  async function tokenForm(req, res, search) {
    const site = req.headers['sec-fetch-site'];
    const { origin, host } = req.headers;
    let foreign = site !== undefined && site !== 'same-origin' && site !== 'none';
    if (site === undefined && origin !== undefined) foreign = URL.canParse(origin) ? new URL(origin).host !== host : true;
    if (foreign) return answer(res, 403, 'a token form from another site is refused\n');
    const body = await readBody(req, 4096);
    if (body === null) return answer(res, 413, 'the form is too large\n', { Connection: 'close' });
    if (!sameText((new URLSearchParams(body.toString()).get('token') ?? '').trim(), token)) return refuse(res, 'html');
    const cookie = (p) => `${COOKIE}=${cookieOf(token)}; Path=${p}; Max-Age=${REPORT_COOKIE_MAX_AGE}; HttpOnly; Secure; SameSite=Strict`;
    return answer(res, 303, '', { Location: `report${search ? `?${search}` : ''}`, 'Set-Cookie': [cookie('/report'), cookie('/report.json')] });
  }
}
