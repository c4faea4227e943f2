// The ClickHouse store's connection: its clickhouse:// URL (server, database, cluster, user, password and TLS:
// parseClickHouseUrl()) and an HTTP client for one server over ClickHouse's HTTP or HTTPS interface (node:http/https,
// no driver: clickhouseClient()).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

// A request's time limit unless its client is given another: the collector's inserts'. A batch of the log may be 20,000
// beacons (~130 MB of JSON): its insert is given time (nothing waits for it but the log); past this it is taken as
// failed and sent again with what ClickHouse already holds left out.
export const INSERT_TIMEOUT_MS = 120_000;
const gzipAsync = promisify(zlib.gzip);

// What a store URL may carry after '?': one list, the parser's and the docs' (docs/clickhouse.md checks against it).
export const URL_PARAMS = {
  secure: '1: speak TLS (HTTPS; port 8443 unless the URL names one)',
  ca: 'a PEM file of the CA that signed the server certificate (a private CA; the system CAs otherwise)',
  insecure_skip_verify: '1: do not verify the server certificate (never for a server on another machine)',
  password_file: 'a file whose first line is the password (so it sits in neither a unit file nor a process list)',
  gzip: '0: send inserts uncompressed (gzip level 1 by default)',
  cluster: 'a cluster of the server\'s remote_servers: replicated name_local tables on every host (ON CLUSTER), read and written through Distributed tables',
  log: 'the beacon log\'s base file name',
};
// The environment variable a password may come from when the URL names none (nor a password_file).
export const PASSWORD_ENV = 'H3PROBE_CLICKHOUSE_PASSWORD';
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USAGE = 'clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?secure=1&…]';

/**
 * 'clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?secure=1&ca=FILE&password_file=FILE&cluster=NAME&…]' (URL_PARAMS)
 * → { url (http:// or https://), database, cluster, log (the beacon log's base file name), user, tls,
 * gzip } and a non-enumerable password (never in a JSON.stringify or a log line). The password: the URL's (URL-encoded),
 * else the first line of password_file, else $H3PROBE_CLICKHOUSE_PASSWORD. Throws with what is wrong, the password
 * left out. PORT is the HTTP interface's: 8123, or 8443 with secure=1.
 */
export function parseClickHouseUrl(spec, env = process.env) {
  let u;
  try {
    u = new URL(spec);
  } catch {
    throw new Error(`not a ClickHouse URL: "${redactStoreUrl(spec)}" (${USAGE})`);
  }
  if (u.protocol !== 'clickhouse:') throw new Error(`not a ClickHouse URL: "${redactStoreUrl(spec)}" (${USAGE})`);
  for (const [k] of u.searchParams) {
    if (!Object.hasOwn(URL_PARAMS, k)) throw new Error(`unknown ClickHouse URL parameter "${k}" (${Object.keys(URL_PARAMS).join(', ')})`);
  }
  const flag = (k, dflt) => {
    const v = u.searchParams.get(k);
    if (v === null) return dflt;
    if (v !== '0' && v !== '1') throw new Error(`ClickHouse URL parameter ${k}=${v}: 0 or 1`);
    return v === '1';
  };
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'h3probe';
  if (!NAME_RE.test(database)) throw new Error(`database name "${database}": letters, digits and _ only`);
  const secure = flag('secure', false);
  const port = u.port || (secure ? 8443 : 8123);
  const scheme = secure ? 'https' : 'http';
  const url = `${scheme}://${u.hostname}:${port}`;
  const cluster = u.searchParams.get('cluster') || null;
  if (cluster && !NAME_RE.test(cluster)) throw new Error(`cluster name "${cluster}": letters, digits and _ only`);
  const log = u.searchParams.get('log') || `h3probe-log-${u.hostname.replace(/[^A-Za-z0-9.-]/g, '_')}-${port}-${database}.ndjson`;

  const user = decodeURIComponent(u.username) || null;
  const passwordFile = u.searchParams.get('password_file');
  let password = null;
  if (u.password && passwordFile) throw new Error('the ClickHouse URL gives a password and a password_file: give one');
  if (u.password) password = decodeURIComponent(u.password);
  else if (passwordFile) {
    try {
      password = fs.readFileSync(passwordFile, 'utf8').split(/\r?\n/)[0];
    } catch (err) {
      throw new Error(`ClickHouse password_file ${passwordFile}: ${err.code ?? err.message}`);
    }
  } else if (env[PASSWORD_ENV] !== undefined) password = env[PASSWORD_ENV];
  if (password !== null && !user) throw new Error(`a ClickHouse password needs a user: ${USAGE}`);

  const caFile = u.searchParams.get('ca');
  const skipVerify = flag('insecure_skip_verify', false);
  if (!secure && (caFile || skipVerify)) throw new Error('ca and insecure_skip_verify are for TLS: add secure=1 to the ClickHouse URL');
  let ca;
  if (caFile) {
    try {
      ca = fs.readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new Error(`ClickHouse ca ${caFile}: ${err.code ?? err.message}`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`ClickHouse ca ${caFile}: not a PEM certificate`);
  }
  const target = { url, database, cluster, log, user, tls: secure ? { ca, rejectUnauthorized: !skipVerify } : null,
    gzip: flag('gzip', true) };
  Object.defineProperty(target, 'password', { value: password, enumerable: false });
  return target;
}

/** The store URL with its password (if any) replaced by ***: for logs and errors. Any string in, a string out. */
export function redactStoreUrl(spec) {
  return String(spec).replace(/^(clickhouse:\/\/[^:/@?#]*:)[^@/?#]*@/i, '$1***@');
}

/** A target's connection for one of its servers (url: the target's own by default): what clickhouseClient() needs. */
export function connectionOf(target, url = target.url) {
  return { url, user: target.user ?? null, password: target.password ?? null, tls: target.tls ?? null, gzip: target.gzip ?? false };
}

// ClickHouse's error codes for a user it does not know, a wrong password, a user not allowed from this address, and (in
// current versions) authentication failed.
const AUTH_CODES = new Set([192, 193, 194, 516]);
// The handler's own URL parameters: not settings, so a user whose profile is readonly=1 may send them.
export const HANDLER_PARAMS = new Set(['query', 'query_id', 'database', 'default_format', 'wait_end_of_query']);
const INT64_TYPE = /^(Nullable\()?U?Int(64|128|256)\)?$/;
const INT64_ARRAY = /^Array\((Nullable\()?U?Int(64|128|256)\)?\)$/;

/**
 * A ClickHouse HTTP client for one server. conn: a URL, or connectionOf(target) ({url, user, password, tls, gzip}).
 * query(sql) → text; json(sql) → rows; insertChunks(table, buffers) (JSONEachRow). Every answer is checked whole: a 200
 * whose body ends in an exception (ClickHouse ≥ 23.9 writes one into the output when a query fails after the header)
 * is an error, and reads wait for the end of the query before the header (wait_end_of_query=1). Options: database,
 * settings (sent with every query, unless mayChangeSettings is false: then only the handler's parameters go, for a user
 * whose profile is readonly=1), timeoutMs.
 */
export function clickhouseClient(conn, { database = null, settings = {}, timeoutMs: defaultTimeout = INSERT_TIMEOUT_MS, mayChangeSettings = true } = {}) {
  const { url, user = null, password = null, tls = null, gzip: compress = false } = typeof conn === 'string' ? { url: conn } : conn;
  const base = new URL(url);
  const who = user ? `${user}@${base.host}` : base.host;
  // No keep-alive: a fresh connection per request. ClickHouse closes its idle keep-alive connections after 3 s
  // (keep_alive_timeout), so a request after a pause could meet a socket the server had just closed, with no way to
  // know whether an INSERT sent on it arrived. Over TLS the session is resumed, so a new connection costs one round trip.
  const transport = base.protocol === 'https:' ? https : http;
  const agent = base.protocol === 'https:'
    ? new https.Agent({ keepAlive: false, maxCachedSessions: 16, ...(tls?.ca ? { ca: tls.ca } : {}), rejectUnauthorized: tls?.rejectUnauthorized !== false })
    : false;
  const auth = user ? { Authorization: `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}` } : {};
  function post(params, body, { timeoutMs = defaultTimeout, read = false, gzip = false } = {}) {
    const all = { ...(database ? { database } : {}), ...settings, ...(read ? { wait_end_of_query: '1' } : {}), ...params };
    const sent = mayChangeSettings ? all : Object.fromEntries(Object.entries(all).filter(([k]) => HANDLER_PARAMS.has(k)));
    const q = new URLSearchParams(sent);
    const chunks = Array.isArray(body) ? body : [Buffer.from(body)];
    return new Promise((resolve, reject) => {
      const fail = (message, props = {}) => reject(Object.assign(new Error(`ClickHouse at ${who}: ${message}`), props));
      const unreachable = (err) => {
        // A certificate the client does not trust is the setup's error, not a server that is away: say so, at once.
        if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(err.code ?? '')) {
          return fail(`TLS: ${err.message} (the server certificate: ?ca=FILE names the CA that signed it)`, { tls: true });
        }
        return fail(`unreachable: ${err.code ?? err.message}`, { unreachable: true });
      };
      const headers = { 'Content-Type': 'text/plain; charset=utf-8', ...auth, ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) };
      const req = transport.request({ host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port, method: 'POST', path: `/?${q}`,
        agent, headers }, (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('error', unreachable);
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          const code = Number(res.headers['x-clickhouse-exception-code'] ?? (/^Code: (\d+)/.exec(text)?.[1] ?? NaN));
          if (res.statusCode === 200 && !res.headers['x-clickhouse-exception-code']) return resolve(text);
          const first = text.trim().split('\n')[0].slice(0, 500);
          if (AUTH_CODES.has(code) || res.statusCode === 401) {
            return fail(`authentication failed for user ${user ?? 'default'} (${first})`, { auth: true, code });
          }
          // A proxy's 502-504 is treated as unreachable (kept in the log and retried); any other status is the query's own error.
          fail(first || `HTTP ${res.statusCode}`, { unreachable: res.statusCode >= 502 && res.statusCode <= 504, code });
        });
      });
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', unreachable);
      for (const c of chunks) req.write(c);
      req.end();
    });
  }
  // A body that ends in an exception after its rows (a failure after the 200 header): the result is cut short.
  const cutShort = (text) => /(^|\n)Code: \d+\. DB::Exception/.test(text.slice(-4096));
  // The error for a body cut short: ClickHouse's exception at its end, or (a body that is not whole) its last bytes.
  const cutShortError = (text) => new Error(`ClickHouse at ${who}: the result was cut short: ${
    (cutShort(text) ? text.slice(text.lastIndexOf('Code: ')) : text.slice(-200)).trim().slice(0, 500)}`);
  return {
    url,
    /** sql → the answer's text. read: a query whose answer is data (waits for its end; refuses a body cut short). */
    async query(sql, { timeoutMs, settings: extra = {}, read = false } = {}) {
      const text = await post(extra, sql, { timeoutMs, read });
      if (read && cutShort(text)) throw cutShortError(text);
      return text;
    },
    /** sql (no FORMAT) → rows; 64-bit integers as numbers unless exact (then as ClickHouse's texts). */
    async json(sql, { timeoutMs, settings: extra = {}, exact = false } = {}) {
      const text = await post(extra, `${sql}\nFORMAT JSON`, { timeoutMs, read: true });
      let out;
      try {
        out = JSON.parse(text);
      } catch {
        throw cutShortError(text);
      }
      if (out.exception) throw new Error(`ClickHouse at ${who}: the result was cut short: ${String(out.exception).slice(0, 500)}`);
      if (!exact) {
        const wide = (out.meta ?? []).filter((m) => INT64_TYPE.test(m.type)).map((m) => m.name);
        const wideArrays = (out.meta ?? []).filter((m) => INT64_ARRAY.test(m.type)).map((m) => m.name);
        const num = (v) => (typeof v === 'string' ? Number(v) : v);
        for (const row of wide.length || wideArrays.length ? out.data : []) {
          for (const k of wide) row[k] = num(row[k]);
          for (const k of wideArrays) row[k] = row[k].map(num);
        }
      }
      return out.data;
    },
    /** INSERT … FORMAT JSONEachRow of rows already serialized: Buffers of JSON texts, each ending with a newline. */
    async insertChunks(table, buffers, { timeoutMs, queryId, settings: extra = {} } = {}) {
      if (buffers.length === 0) return '';
      const params = { query: `INSERT INTO ${table} FORMAT JSONEachRow`, ...(queryId ? { query_id: queryId } : {}), ...extra };
      if (!compress) return post(params, buffers, { timeoutMs });
      // Level 1: most of the size for little CPU (the rows are repetitive JSON).
      const body = await gzipAsync(Buffer.concat(buffers), { level: 1 });
      return post(params, [body], { timeoutMs, gzip: true });
    },
  };
}

/** The settings a server lets this user change: { readonly (0, 1, 2), known(name) } (asked with no settings sent). */
export async function serverAllows(client) {
  const rows = await client.json("SELECT name, value FROM system.settings WHERE name IN ('readonly', 'input_format_parallel_parsing', 'insert_deduplicate')");
  const by = new Map(rows.map((r) => [r.name, r.value]));
  return { readonly: Number(by.get('readonly') ?? 0), known: (name) => by.has(name) };
}
