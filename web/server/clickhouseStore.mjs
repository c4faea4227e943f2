// The ClickHouse store: the same decoded rows as the SQLite store (store.mjs), kept in a ClickHouse database over its
// HTTP or HTTPS interface (node:http/https, no driver; user, password and TLS from the URL: parseClickHouseUrl()). Its
// tables are made from the core's schema(), as SQLite's are: the run and request columns, and a narrow per-run table
// for the report (run_records) whose columns are the core's per-run record.
// A beacon is acknowledged once it is in a local log (beaconLog.mjs: fsynced, one fsync per event-loop turn); the log
// goes to ClickHouse in large batches, one INSERT per table about once a second, as ClickHouse wants its inserts. While
// ClickHouse cannot be reached the log grows, and it drains when ClickHouse answers again: nothing acknowledged is
// lost, and a beacon sent again after a failure or a crash is inserted once (rows a table already holds are left out:
// request rows by (run_id, phase, idx), the others by run_id).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { openBeaconLog } from './beaconLog.mjs';
import { CLICKHOUSE_GROUP_BY, runValueTuplesSql, sqlString } from './clickhouseRunSql.mjs';
import { networkLabel } from './networkFor.mjs';
import { COLLECTOR_COLUMNS, EXPORT_PAGE, OTHER_STORE_ADVICE, writeRunsNdjson } from './store.mjs';

// The tables' version: 2, every run with its cold-setup record and the layout kept in the database (store_layout). A
// database of another version or layout is refused (no migration before 1.0: docs/architecture.md).
const CLICKHOUSE_STORE_VERSION = 2;
const TYPE = { text: 'String', real: 'Nullable(Float64)', flag: 'Nullable(UInt8)' };
// A batch of the log may be 20,000 beacons (~130 MB of JSON): its insert is given time (nothing waits for it but the
// log); past this it is taken as failed and sent again with what ClickHouse already holds left out.
const INSERT_TIMEOUT_MS = 120_000;
const READ_TIMEOUT_MS = 30 * 60_000;
const RETRY_MS = 500;
// How long closing the store (the collector's drain) waits for the log's last batches.
const CLOSE_SHIP_MS = 10_000;
// One batch per table about once a second (ClickHouse's advice: ~1 insert per second, of thousands of rows), or sooner
// when this many beacons wait (about 13 request rows each: the request batch stays one insert block of ClickHouse's,
// 1,048,576 rows, so that it goes in whole or not at all).
const FLUSH_MS = 1000;
const MAX_BATCH = 20_000;
const MAX_BATCH_BYTES = 256 * 1024 * 1024;
// Lines of a batch turned into insert bodies between two yields to the event loop (~2 MB, a few ms).
const SLICE_LINES = 300;
// Run_ids remembered to answer a client's retry as a duplicate at once (two generations of this many).
const RECENT_IDS = 100_000;
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

/** The report table's per-run class-count columns: one per arm and class, in the core's class order. */
export function classCountColumns(schema) {
  return ['control', 'treatment'].flatMap((arm) => schema.requestClasses.map((c) => ({ arm, cls: c.name, name: `${arm}_${c.name}` })));
}

/** Per metric: the usable values of each arm (no missing ones) and how many usable requests had none. */
export function metricColumns(schema) {
  return schema.metrics.map((m) => ({ metric: m, control: `${m}_control`, treatment: `${m}_treatment`, missing: `${m}_missing` }));
}

/**
 * The run's cold-setup record (run.setup, connection_setup.hpp) as run_records columns: each protocol's outcome code,
 * the first HTTP/3-origin request's code, and per protocol and metric the cold sample's value (an array of 0 or 1
 * value).
 */
export function setupColumns(schema) {
  return {
    first: 'setup_first_h3', outcome: { h2: 'setup_h2_outcome', h3: 'setup_h3_outcome' },
    values: ['h2', 'h3'].flatMap((p) => schema.setupMetrics.map((m) => ({ protocol: p, metric: m.name, name: `setup_${p}_${m.name}` }))),
  };
}

/**
 * The three tables as [name, [column definitions], engine clause], made from the core's schema() (no column list of
 * their own): runs and requests hold the same columns as SQLite's; run_records is the report's per-run table.
 */
export function clickhouseTables(schema) {
  const col = (c) => `${c.name} ${TYPE[c.type]}`;
  // What the collector adds to a run (store.mjs's COLLECTOR_COLUMNS): received_at always set, the others may be NULL.
  const collectorCol = (c) => `${c.name} ${c.name === 'received_at' ? 'String' : c.type === 'text' ? 'Nullable(String)' : 'Nullable(Float64)'}`;
  const runs = [...schema.runColumns.map(col), ...COLLECTOR_COLUMNS.map(collectorCol)];
  const requests = [...schema.requestColumns.map(col), ...schema.durations.map((d) => `${d.name} Nullable(Float64)`)];
  const records = [
    'run_id String', 'received_at String', 'region String', 'arms String', 'run_order String', 'estimands UInt8',
    ...classCountColumns(schema).map((c) => `${c.name} UInt8`),
    ...metricColumns(schema).flatMap((m) => [`${m.control} Array(Float64)`, `${m.treatment} Array(Float64)`, `${m.missing} UInt8`]),
    // The client's network's label (networkLabel()), for the report's split by network.
    'network Nullable(String)',
    // The run's payload mode (the core's run column payload_bytes): 0, the no-op.
    'payload_bytes UInt32',
    // The connection-setup view's record (setupColumns()).
    ...(({ first, outcome, values }) => [`${outcome.h2} UInt8`, `${outcome.h3} UInt8`, `${first} UInt8`,
      ...values.map((v) => `${v.name} Array(Float64)`)])(setupColumns(schema)),
  ];
  return [
    // A retried beacon has the run_id of the first: the store skips it, and ReplacingMergeTree folds any copy left.
    ['runs', runs, 'ReplacingMergeTree() ORDER BY run_id'],
    ['requests', requests, 'MergeTree() ORDER BY (run_id, phase)'],
    // The report reads one arms mode and one payload mode, by region, from this table alone.
    ['run_records', records, 'MergeTree() ORDER BY (arms, region, received_at, run_id)'],
  ];
}

/**
 * CREATE statements: plain tables, or in a cluster (ON CLUSTER: made on every host at once) the replicated local tables
 * (name_local) plus a Distributed table of the name over them, sharded by run_id (a run's rows of every table on one shard).
 */
function clickhouseSchemaSql(schema, { database, cluster = null } = {}) {
  const out = [];
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  for (const [name, columns, engine] of clickhouseTables(schema)) {
    const local = cluster ? `${name}_local` : name;
    out.push(`CREATE TABLE IF NOT EXISTS ${database}.${local}${on} (\n  ${columns.join(',\n  ')}\n) ENGINE = ${
      cluster ? replicatedEngine(engine, database, local) : engine}`);
    if (cluster) {
      out.push(`CREATE TABLE IF NOT EXISTS ${database}.${name}${on} AS ${database}.${local}
  ENGINE = Distributed(${cluster}, ${database}, ${local}, cityHash64(run_id))`);
    }
  }
  return out;
}

/**
 * The replicated form of a MergeTree-family engine as clickhouseTables() writes it: its replicas share a ZooKeeper path
 * per shard ({shard}, the servers' macro), database and table, each host one replica ({replica}). path and replica may
 * be given (the store's layout: one path for every host of the cluster).
 */
function replicatedEngine(engine, database, table, { path: zkPath = `/clickhouse/tables/{shard}/${database}/${table}`, replica = '{replica}' } = {}) {
  const m = /^(\w*MergeTree)\((.*)\)( ORDER BY .*)$/s.exec(engine);
  if (!m) throw new Error(`no replicated form of the engine ${engine}`);
  return `Replicated${m[1]}(${[sqlString(zkPath), sqlString(replica), ...(m[2] ? [m[2]] : [])].join(', ')})${m[3]}`;
}

/**
 * The value summary, run_values: per (arms, payload_bytes, metric, day, region, network, s, v) the rows of
 * runValueTuplesSql() summed (cnt: how many, w, n, o: their weights), so that the report's histograms and order
 * statistics read a row per distinct value instead of every value. A SummingMergeTree filled by a materialized view
 * on run_records (each inserted block grouped once more by the view), so a key may hold several rows until merged:
 * readers sum. The day and network are the groupings' expressions (CLICKHOUSE_GROUP_BY) as text, since 18.16 refuses a
 * Nullable column in a sorting key. { columns, engine, select(from): the view's SELECT over the table `from` }.
 */
function clickhouseSummary(schema) {
  const keys = ['arms String', 'payload_bytes UInt32', 'metric String', 'day String', 'region String', 'network String', 's UInt8', 'v Float64'];
  const sums = ['cnt UInt64', 'w UInt64', 'n UInt64', 'o UInt64'];
  const name = (c) => c.split(' ')[0];
  const tuples = metricColumns(schema).map((m) => `arrayMap(u -> (${sqlString(m.metric)}, u.1, u.2, u.3, u.4, u.5), ${runValueTuplesSql(m.control, m.treatment, schema.limits.maxDurationMs)})`);
  return {
    columns: [...keys, ...sums],
    engine: `SummingMergeTree((${sums.map(name).join(', ')})) ORDER BY (${keys.map(name).join(', ')})`,
    select: (from) => `SELECT arms, payload_bytes, t.1 AS metric, ${CLICKHOUSE_GROUP_BY.day} AS day, region, ${CLICKHOUSE_GROUP_BY.network} AS network,
  t.2 AS s, t.3 AS v, count() AS cnt, sum(t.4) AS w, sum(t.5) AS n, sum(t.6) AS o
FROM ${from} ARRAY JOIN arrayConcat(${tuples.join(',\n  ')}) AS t
GROUP BY ${keys.map(name).join(', ')}`,
  };
}

// Makes the value summary where it is missing (in a cluster, ON CLUSTER: the replicated run_values_local and its view
// on every host, a Distributed run_values over them; the view of the replica an insert lands on fills the summary, and
// its replicas copy it). Made with the tables, before the first row: a day the summary does not hold exactly (rows lost
// or doubled) is found by the report's check, which then reads that day's raw rows.
async function ensureSummary(schema, client, database, cluster) {
  const summary = clickhouseSummary(schema);
  const local = cluster ? 'run_values_local' : 'run_values';
  const records = `${database}.${cluster ? 'run_records_local' : 'run_records'}`;
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  await client.query(`CREATE TABLE IF NOT EXISTS ${database}.${local}${on} (\n  ${summary.columns.join(',\n  ')}\n) ENGINE = ${
    cluster ? replicatedEngine(summary.engine, database, local) : summary.engine}`);
  if (cluster) {
    await client.query(`CREATE TABLE IF NOT EXISTS ${database}.run_values${on} AS ${database}.${local}
  ENGINE = Distributed(${cluster}, ${database}, ${local}, rand())`);
  }
  await client.query(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${database}.run_values_view${on} TO ${database}.${local} AS ${summary.select(records)}`);
}

/**
 * What a ClickHouse store holds, from the core's schema(): the version, each table's columns and engine, the value
 * summary's, and the cluster it was made on (if any). A database made with another layout is refused when opened, as
 * one of another version is.
 */
function clickhouseLayout(schema, cluster = null) {
  const summary = clickhouseSummary(schema);
  return JSON.stringify({ version: CLICKHOUSE_STORE_VERSION, tables: clickhouseTables(schema),
    summary: [summary.columns, summary.engine, summary.select('run_records')], runRecordVersion: schema.runRecordVersion,
    setupRecordVersion: schema.setupRecordVersion, ...(cluster ? { cluster } : {}) });
}

// Why the tables of database (their names: tables) are not a store of this layout: another layout, or tables without
// one; '' when they are, or when there are none.
async function layoutProblem(client, database, tables, layout) {
  if (tables.includes('store_layout')) {
    const have = await client.json(`SELECT layout FROM ${database}.store_layout`);
    if (have.length && have.every((r) => r.layout === layout)) return '';
    const theirs = (() => { try { return JSON.parse(have[0].layout); } catch { return {}; } })();
    const ours = JSON.parse(layout);
    if (theirs.version === ours.version && (theirs.cluster ?? null) !== (ours.cluster ?? null)) {
      const on = (c) => (c ? `on cluster ${c}` : 'on one server, without a cluster');
      return `is an h3probe store made ${on(theirs.cluster)}; the URL asks for one ${on(ours.cluster)}: give the URL it was made with`;
    }
    return `is an h3probe store of version ${theirs.version ?? '?'} whose layout is not this h3probe's (version ${CLICKHOUSE_STORE_VERSION}, its `
      + `tables' columns and the value summary): ${OTHER_STORE_ADVICE}`;
  }
  if (!tables.length) return '';
  return `holds tables (${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}) but no h3probe store layout: a store `
    + `of version 1 or none; this h3probe reads version ${CLICKHOUSE_STORE_VERSION} only: ${OTHER_STORE_ADVICE}`;
}

// Statements ON CLUSTER wait for every host of the cluster (ClickHouse's distributed_ddl_task_timeout, 180 s by default).
const DDL_TIMEOUT_MS = 240_000;

/**
 * Creates the database and tables where missing; throws if the server holds the tables of another version or layout
 * (store_layout, clickhouseLayout()), or tables without a layout. In a cluster (target.cluster) every statement is ON
 * CLUSTER, sent to the URL's server, and the layout table is one replicated table across every host, written last: a
 * store whose layout is there is whole, and opening it again sends no statement that would wait for a host that is
 * down. Making the store needs every host up.
 */
export async function ensureClickHouseTables(schema, target) {
  const { url, database, cluster = null } = target;
  const layout = clickhouseLayout(schema, cluster);
  const client = clickhouseClient(connectionOf(target), { timeoutMs: cluster ? DDL_TIMEOUT_MS : 120_000 });
  const where = `clickhouse://${new URL(url).host}/${database}`;
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  if (cluster) {
    const known = (await client.json('SELECT DISTINCT cluster FROM system.clusters')).map((r) => r.cluster);
    if (!known.includes(cluster)) {
      throw new Error(`${where}: the server has no cluster ${cluster} in its remote_servers (it has: ${known.join(', ') || 'none'})`);
    }
  }
  const tables = (await client.json(`SELECT name FROM system.tables WHERE database = ${sqlString(database)}`)).map((r) => r.name);
  const problem = await layoutProblem(client, database, tables, layout);
  if (problem) throw new Error(`${where} ${problem}`);
  if (cluster && tables.includes('store_layout')) return;
  if (!tables.length) await client.query(`CREATE DATABASE IF NOT EXISTS ${database}${on}`);
  for (const sql of clickhouseSchemaSql(schema, { database, cluster })) await client.query(sql);
  await ensureSummary(schema, client, database, cluster);
  if (!tables.includes('store_layout')) {
    // A MergeTree, as every table here: ClickHouse Cloud offers no Log engines. In a cluster one replicated table
    // across all hosts ({shard}-{replica}: a replica name unique in the cluster), so that a reader on any host finds it.
    const engine = 'MergeTree() ORDER BY tuple()';
    await client.query(`CREATE TABLE IF NOT EXISTS ${database}.store_layout${on} (layout String) ENGINE = ${cluster
      ? replicatedEngine(engine, database, 'store_layout', { path: `/clickhouse/tables/all/${database}/store_layout`, replica: '{shard}-{replica}' })
      : engine}`);
    await client.query(`INSERT INTO ${database}.store_layout FORMAT JSONEachRow\n${JSON.stringify({ layout })}`);
  }
}

/**
 * The rows the collector writes for one decoded beacon ({run, requests} from core.decodeBeacon) and its meta: the run
 * row, the request rows, and the report's run_records row. The run_records row is the core's own per-run record
 * (run.arm_counts and run.arm_<metric>, stored_run.hpp) laid out as columns: the counts by arm and class as the core
 * counted them, and per metric each arm's values (a usable request without a value is NaN in the record: counted as
 * missing, not kept).
 */
export function clickhouseRows(schema, { run, requests }, {
  receivedAt, region = null, country = null, browser = null, browserMajor = null, asn = null, asOrg = null,
}) {
  const runRow = {};
  for (const c of schema.runColumns) runRow[c.name] = run[c.name] ?? (c.type === 'text' ? '' : null);
  Object.assign(runRow, { received_at: receivedAt, region, country, browser, browser_major: browserMajor, asn, as_org: asOrg });
  // The decoder's request objects are the request rows already: the core's request columns and durations, in order.
  return { run: runRow, requests, record: { ...recordRow(schema, run, { receivedAt, region }), network: networkLabel(asn, asOrg) } };
}

// The run_records row from the core's record: arm_counts is [version][order][estimands][control counts by class]
// [treatment counts], one byte each; arm_<metric> is little-endian float64s, the control requests' that hold a value
// (schema.requestClasses' holdsValue) then the treatment's, for a run that counts as assigned (none otherwise).
function recordRow(schema, run, { receivedAt, region }) {
  const classes = schema.requestClasses;
  const counts = run.arm_counts;
  const head = schema.limits.runRecordHeadBytes;
  if (!counts || counts[0] !== schema.runRecordVersion || counts.length !== head + 2 * classes.length) {
    throw new Error(`run ${run.run_id}: its record is of format ${counts?.[0]}, not the core's ${schema.runRecordVersion}`);
  }
  const record = { run_id: run.run_id, received_at: receivedAt, region: region ?? 'unknown', arms: run.arms, run_order: run.run_order,
    payload_bytes: run.payload_bytes || 0, estimands: counts[2] };
  let controlValues = 0;
  classes.forEach((c, k) => {
    record[`control_${c.name}`] = counts[head + k];
    record[`treatment_${c.name}`] = counts[head + classes.length + k];
    if (c.holdsValue) controlValues += counts[head + k];
  });
  Object.assign(record, setupRow(schema, run));
  for (const m of metricColumns(schema)) {
    const blob = run[`arm_${m.metric}`];
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const values = { control: [], treatment: [] };
    let missing = 0;
    for (let i = 0; i < blob.byteLength / 8; i++) {
      const v = view.getFloat64(8 * i, true);
      if (Number.isFinite(v)) values[i < controlValues ? 'control' : 'treatment'].push(v);
      else missing++;
    }
    record[m.control] = values.control;
    record[m.treatment] = values.treatment;
    record[m.missing] = missing;
  }
  return record;
}

// The setupColumns() of a run from its cold-setup record: [version][h2 outcome][h3 outcome][first_h3], then per protocol
// (h2, h3) each setup metric's value as a little-endian float64, NaN for none.
function setupRow(schema, run) {
  const c = setupColumns(schema);
  const blob = run.setup;
  if (blob?.[0] !== schema.setupRecordVersion || blob.length !== 4 + 8 * c.values.length) {
    throw new Error(`run ${run.run_id}: its cold-setup record is of format ${blob?.[0]}, not the core's ${schema.setupRecordVersion}`);
  }
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const row = { [c.outcome.h2]: blob[1], [c.outcome.h3]: blob[2], [c.first]: blob[3] };
  c.values.forEach((v, i) => {
    const x = view.getFloat64(4 + 8 * i, true);
    row[v.name] = Number.isNaN(x) ? [] : [x];
  });
  return row;
}

// A beacon as one line of the collector's log (beaconLog.mjs): its run_id, then its rows serialized for the insert
// (JSONEachRow), run, record, then each request.
export function logLine({ run, requests, record }) {
  return [run.run_id, JSON.stringify(run), JSON.stringify(record), ...requests.map((q) => JSON.stringify(q))].join('\t');
}

/**
 * Opens (creating what is missing) the store at a clickhouse:// URL. core: loadH3probeNode(). A beacon is acknowledged
 * once it is in the local log (beaconLog.mjs, group commit); the log goes to ClickHouse in batches, once every flushMs
 * (default 1 s: ClickHouse wants about one insert per second per table, of thousands of rows) or when maxBatch beacons
 * wait, one INSERT per table. While ClickHouse cannot be reached or refuses a batch, the log grows and the batch is
 * tried again every retryMs. A batch whose outcome is unknown (a failure, a crash) is sent again with the rows whose
 * run_id a table already holds left out, so each beacon is in each table once. Options: log (the log's base file
 * name; default from the URL), flushMs, maxBatch, retryMs, readOnly (for the report and export: no log, no inserts, no
 * table made; a database the collector has not made, or of another layout, is an error).
 * Resolves to an object with the SQLite store's methods (queueBeacon, insertBeacon, countRuns, checkWritable,
 * exportNdjson, close) plus flushed() and state().
 */
export async function openClickHouseStore(spec, core, {
  log: logPath, retryMs = RETRY_MS, flushMs = FLUSH_MS, maxBatch = MAX_BATCH, readOnly = false, ...unknown
} = {}) {
  if (typeof core?.schema !== 'function') throw new Error('openClickHouseStore needs the Node module (loadH3probeNode())');
  // A misspelt option would otherwise be dropped, and the log land where the URL's default puts it.
  const extra = Object.keys(unknown);
  if (extra.length) throw new Error(`openClickHouseStore: unknown option ${extra.join(', ')} (log, retryMs, flushMs, maxBatch, readOnly)`);
  const schema = core.schema();
  const target = typeof spec === 'string' ? parseClickHouseUrl(spec) : spec;
  const { database } = target;
  // In a cluster: an insert through a Distributed table returns once each shard has it (not queued on this host), and
  // both the inserts and the retry check's reads go to the first replica of each shard that answers (in the cluster's
  // order; this host's own first), so that the check reads the replica the rows went to.
  const settings = target.cluster ? { insert_distributed_sync: '1', load_balancing: 'in_order' } : {};
  const conn = connectionOf(target);
  if (readOnly) {
    // A report's scans of a large table may take minutes. For a user who may write, readonly=2: ClickHouse itself
    // refuses any write or DDL (a query may still set its own settings, as the report's do). A user whose profile is
    // already read-only (an analyst's) is sent what it may: with readonly=1 no settings at all.
    // Asked in the system database: a query in a database that does not exist fails before it runs (checkReadable says why).
    const probe = clickhouseClient(conn, { database: 'system', mayChangeSettings: false, timeoutMs: READ_TIMEOUT_MS });
    const { readonly } = await serverAllows(probe);
    const reader = readonly === 0
      ? clickhouseClient(conn, { database, settings: { ...settings, readonly: '2' }, timeoutMs: READ_TIMEOUT_MS })
      : clickhouseClient(conn, { database, settings, timeoutMs: READ_TIMEOUT_MS, mayChangeSettings: readonly === 2 });
    await checkReadable(reader, target, clickhouseLayout(schema, target.cluster));
    return readOnlyStore(schema, target, reader, Number((await reader.json('SELECT count() AS n FROM runs'))[0].n));
  }
  // The collector's requests give up after INSERT_TIMEOUT_MS (the batch is then tried again).
  const client = clickhouseClient(conn, { database, settings, timeoutMs: INSERT_TIMEOUT_MS });
  const logBase = path.resolve(logPath ?? target.log);
  const log = openBeaconLog(logBase);
  const stats = { logged: 0, inserted: 0, duplicates: 0, batches: 0, failures: 0 };
  let lastError = null;
  // Whether the next batch may hold rows a table already has (the first after opening, the first after a failure).
  let uncertain = true;
  let base = null;  // runs in ClickHouse when first reached
  let pendingHere = 0;  // beacons acknowledged since opening and not yet shipped
  const firstSegment = log.seal();  // segments from here on hold only this process's beacons
  try {
    await ensureClickHouseTables(schema, target);
    // count(), not a DISTINCT over every run_id: cheap at any size (a duplicate not yet folded by a merge counts twice).
    base = Number((await client.json('SELECT count() AS n FROM runs'))[0].n);
  } catch (err) {
    // The log takes beacons while ClickHouse is away; the tables are made when it answers.
    if (!err.unreachable) {
      log.close();
      throw err;
    }
    lastError = err.message;
  }
  let tablesReady = base !== null;
  // The query_ids of this store's inserts not known to have ended (a failure, a timeout): stopped before a retry's check.
  const unsettled = new Set();
  const insertTag = Date.now().toString(36);
  let inserts = 0;
  // One block per insert where the server would cut a body into several (parallel parsing, ClickHouse ≥ 20.x).
  let insertSettings = null;

  // A client's retry carries the run_id of the beacon it retries, usually within seconds: the run_ids acknowledged
  // lately answer it as a duplicate at once. One older than that is still kept out of the tables when shipped.
  let recent = new Set();
  let older = new Set();
  const seenLately = (id) => recent.has(id) || older.has(id);
  const remember = (id) => {
    recent.add(id);
    if (recent.size >= RECENT_IDS) { older = recent; recent = new Set(); }
  };

  // One batch of log lines (their bytes) into the three tables: request rows and records first, the run rows last (a
  // run row is the mark that its beacon is in, which a later check trusts). Rows of a run_id already in runs are left
  // out (a retry), and when uncertain those already in each table: a record by its run_id, a request row by its
  // (run_id, phase, idx), since an insert cut off midway may have committed some of its blocks and not others. Before
  // that check, any insert of this store whose outcome is unknown is stopped on the server (KILL QUERY … SYNC), so that
  // none lands after it. The lines are turned into the insert bodies a slice at a time, yielding to the event loop
  // between slices, so that a second's batch never holds up the answers.
  async function insertBatch(bytes) {
    const starts = [];
    const ids = [];
    for (let at = 0; at < bytes.length;) {
      starts.push(at);
      // run_ids are ASCII: letters, digits, - and _ (the decoder's rule).
      ids.push(bytes.toString('latin1', at, bytes.indexOf(0x09, at)));
      at = bytes.indexOf(0x0a, at) + 1;
    }
    starts.push(bytes.length);
    if (uncertain && unsettled.size) {
      await client.query(`KILL QUERY WHERE query_id IN (${[...unsettled].map(sqlString).join(', ')}) SYNC`);
      unsettled.clear();
    }
    const inList = [...new Set(ids)].map(sqlString).join(',');
    const big = { settings: { max_query_size: String(64 * 1024 * 1024) } };
    const existing = async (table) => new Set((await client.json(`SELECT DISTINCT run_id FROM ${table} WHERE run_id IN (${inList})`, big))
      .map((r) => r.run_id));
    const existingRequests = async () => {
      const keys = new Set();
      const partial = new Set();
      for (const r of await client.json(`SELECT run_id, phase, idx FROM requests WHERE run_id IN (${inList})`, big)) {
        keys.add(`${r.run_id}\t${r.phase}\t${r.idx}`);
        partial.add(r.run_id);
      }
      return { keys, partial };
    };
    const none = new Set();
    const [inRuns, heldRequests, skipRecords] = await Promise.all([existing('runs'),
      uncertain ? existingRequests() : { keys: none, partial: none }, uncertain ? existing('run_records') : none]);
    const seen = new Set();
    const keep = ids.map((id) => !inRuns.has(id) && !seen.has(id) && seen.add(id));
    const bodies = { runs: [], requests: [], run_records: [] };
    for (let first = 0; first < ids.length; first += SLICE_LINES) {
      const last = Math.min(ids.length, first + SLICE_LINES);
      const lines = bytes.toString('utf8', starts[first], starts[last]).split('\n');
      const out = { runs: [], requests: [], run_records: [] };
      for (let i = first; i < last; i++) {
        if (!keep[i]) continue;
        const parts = lines[i - first].split('\t');
        out.runs.push(parts[1]);
        if (!skipRecords.has(ids[i])) out.run_records.push(parts[2]);
        const some = heldRequests.partial.has(ids[i]);
        for (let k = 3; k < parts.length; k++) {
          // Only a run some of whose rows are in is parsed, to find which.
          if (some) {
            const q = JSON.parse(parts[k]);
            if (heldRequests.keys.has(`${ids[i]}\t${q.phase}\t${q.idx}`)) continue;
          }
          out.requests.push(parts[k]);
        }
      }
      for (const [table, rows] of Object.entries(out)) if (rows.length > 0) bodies[table].push(Buffer.from(`${rows.join('\n')}\n`));
      await new Promise((r) => setImmediate(r));
    }
    const insert = async (table) => {
      if (bodies[table].length === 0) return;
      const queryId = `h3probe-insert-${process.pid}-${insertTag}-${++inserts}-${table}`;
      unsettled.add(queryId);
      await client.insertChunks(table, bodies[table], { queryId, settings: insertSettings });
      unsettled.delete(queryId);
    };
    await Promise.all([insert('requests'), insert('run_records')]);
    await insert('runs');
    return keep.filter(Boolean).length;
  }

  // Each tick seals the log's current segment and ships every sealed line, in batches of at most maxBatch beacons.
  let closed = false;
  let closing = null;
  let timer = null;
  let shipping = null;
  let wake = null;
  async function ship() {
    if (!tablesReady) {
      await ensureClickHouseTables(schema, target);
      base ??= Number((await client.json('SELECT count() AS n FROM runs'))[0].n);
      tablesReady = true;
    }
    if (!insertSettings) {
      const { known } = await serverAllows(client);
      insertSettings = {
        ...(known('input_format_parallel_parsing') ? { input_format_parallel_parsing: '0' } : {}),
        // Replicated tables drop a block equal to one of the last ones inserted; the store's own check keeps each row
        // once (a retried batch differs from the first), and two beacons' equal value-summary blocks are not one.
        ...(target.cluster && known('insert_deduplicate') ? { insert_deduplicate: '0' } : {}),
      };
    }
    log.sealIfCaughtUp();
    for (let batch; (batch = log.take(maxBatch, MAX_BATCH_BYTES));) {
      const fresh = await insertBatch(batch.bytes);
      log.shipped(batch);
      uncertain = false;
      stats.batches++;
      stats.inserted += fresh;
      stats.duplicates += batch.count - fresh;
      if (batch.segment >= firstSegment) pendingHere -= batch.count;
      base += fresh;
    }
  }
  function tick() {
    timer = null;
    const started = Date.now();
    shipping = ship().then(() => { lastError = null; return flushMs; }, (err) => {
      uncertain = true;
      stats.failures++;
      lastError = err.message;
      return retryMs;
    }).then((delay) => {
      shipping = null;
      if (wake) { const w = wake; wake = null; w(); }
      if (!closed) timer = setTimeout(tick, Math.max(0, delay - (Date.now() - started)));
    });
  }
  timer = setTimeout(tick, 0);
  // Ships now (or right after the batch in flight) and resolves when that pass ends.
  const shipNow = () => new Promise((resolve) => {
    if (shipping) { const prev = wake; wake = () => { prev?.(); resolve(); }; return; }
    clearTimeout(timer);
    tick();
    wake = resolve;
  });

  const enqueue = async (decoded, meta) => {
    if (closed) throw new Error('store closed');
    const id = decoded.run.run_id;
    if (seenLately(id)) return { duplicate: true };
    remember(id);
    const rows = clickhouseRows(schema, decoded, { ...meta, receivedAt: meta.receivedAt ?? new Date().toISOString() });
    try {
      await log.append(logLine(rows));
    } catch (err) {
      recent.delete(id);
      throw new Error(`the beacon log failed: ${err.message}`);
    }
    stats.logged++;
    pendingHere++;
    return { duplicate: false };
  };

  return {
    kind: 'clickhouse',
    target,
    client,
    logFile: logBase,
    /**
     * decoded: core.decodeBeacon()'s {run, requests}; meta: {receivedAt, region, country, asn, asOrg, browser,
     * browserMajor}. Resolves {duplicate} once logged.
     */
    queueBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    insertBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    /** Runs in ClickHouse when it was first reached plus those shipped or acknowledged since. */
    countRuns: () => (base ?? 0) + pendingHere,
    /** Writable while the log is; says whether ClickHouse takes the batches and how much waits in the log. */
    checkWritable: () => {
      const failed = log.failed();
      return { ok: !closed && !failed, ...(failed ? { error: `beacon log: ${failed.message}` } : {}),
        clickhouse: lastError ? `failing: ${lastError}` : 'ok', logBytes: log.backlog().bytes };
    },
    state: () => ({ ...stats, ...log.backlog(), lastError }),
    /** Resolves once every acknowledged beacon is in ClickHouse (or rejects after timeoutMs). */
    async flushed(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await shipNow();
        if (log.backlog().bytes === 0 && !lastError) return;
        if (Date.now() > deadline) throw new Error(`ClickHouse store not flushed after ${timeoutMs} ms: ${lastError}`);
        await new Promise((r) => setTimeout(r, Math.min(retryMs, 200)));
      }
    },
    exportNdjson: (stream) => exportNdjson(schema, client, stream),
    /**
     * Takes no more beacons and ships what the log holds, for at most CLOSE_SHIP_MS (what ClickHouse does not take by
     * then stays in the log for the next start with the same log file). Resolves to { unshipped: the acknowledged beacons
     * left in the log, logFiles: the files that hold them, lastError }.
     */
    async close() {
      if (closed) return closing;
      closed = true;
      closing = (async () => {
        await new Promise((r) => setImmediate(r));  // the appends of this turn
        let timeout;
        const deadline = new Promise((r) => { timeout = setTimeout(r, CLOSE_SHIP_MS); });
        // Twice: a pass after a failure ships the sealed segments, the next one the segment written meanwhile.
        await Promise.race([shipNow().then(() => (lastError || log.backlog().bytes === 0 ? null : shipNow())), deadline]);
        clearTimeout(timeout);
        clearTimeout(timer);
        log.close();
        const { beacons, files } = log.remaining();
        return { unshipped: beacons, logFiles: files, lastError };
      })();
      return closing;
    },
  };
}


/** One JSON line per run (duplicates folded), its requests nested: the same lines as the SQLite store's export. */
function exportNdjson(schema, client, stream) {
  const runColumns = [...schema.runColumns.map((c) => c.name), ...COLLECTOR_COLUMNS.map((c) => c.name)];
  return writeRunsNdjson(stream, {
    runsAfter: (after) => client.json(`SELECT ${runColumns.join(', ')} FROM runs WHERE run_id > ${sqlString(after)}
      ORDER BY run_id LIMIT 1 BY run_id LIMIT ${EXPORT_PAGE}`),
    requestsBetween: (first, last) => client.json(`SELECT * FROM requests WHERE run_id >= ${sqlString(first)}
      AND run_id <= ${sqlString(last)} ORDER BY run_id, phase, idx LIMIT 1 BY run_id, phase, idx`),
  });
}

// The report and the export read what the collector made and make nothing: a database without its tables, or of
// another layout, is an error that says so.
async function checkReadable(client, { url, database }, layout) {
  // Asked in the system database: a query in a database that does not exist fails before it runs.
  const tables = (await client.json(`SELECT name FROM system.tables WHERE database = ${sqlString(database)}`, { settings: { database: 'system' } }))
    .map((r) => r.name);
  if (!tables.length) {
    throw new Error(`the ClickHouse store at ${url} has no h3probe tables in database ${database}: the collector makes them when it `
      + `opens the store (h3probe collector --store clickhouse://…/${database}); the report and the export only read`);
  }
  const problem = await layoutProblem(client, database, tables, layout);
  if (problem) throw new Error(`clickhouse://${new URL(url).host}/${database} ${problem}`);
}

// For the report and export: no log, no inserts, no DDL.
function readOnlyStore(schema, target, client, runCount) {
  const refuse = () => Promise.reject(new Error('this ClickHouse store was opened read-only'));
  return {
    kind: 'clickhouse', target, client, readOnly: true, queueBeacon: refuse, insertBeacon: refuse,
    countRuns: () => runCount, checkWritable: () => ({ ok: false, error: 'read-only' }),
    exportNdjson: (stream) => exportNdjson(schema, client, stream),
    close: async () => {},
  };
}
