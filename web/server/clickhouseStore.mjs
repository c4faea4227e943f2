// The ClickHouse store: the same decoded rows as the SQLite store (store.mjs), kept in a ClickHouse database over its
// HTTP interface (Node's fetch, no driver). Its tables are made from the core's schema(), as SQLite's are: the run and
// request columns, and a narrow per-run table for the report (run_records) whose columns follow the core's request
// classes and metrics. Inserts are batched (one INSERT per table for every beacon queued while the previous batch was
// in flight). When ClickHouse cannot be reached, beacons go to a local append-only spool file, fsynced before they are
// acknowledged, and are replayed in order once it answers again: nothing acknowledged is lost, and a replayed run is
// inserted once (a table that already holds a run_id of the batch skips it).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { COLLECTOR_COLUMNS, writeRunsNdjson } from './store.mjs';

// The tables' layout version (a column is only ever added, with ALTER TABLE … ADD COLUMN IF NOT EXISTS).
export const CLICKHOUSE_STORE_VERSION = 1;
const TYPE = { text: 'String', real: 'Nullable(Float64)', flag: 'Nullable(UInt8)' };
const INSERT_TIMEOUT_MS = 15_000;
const READ_TIMEOUT_MS = 30 * 60_000;
const RETRY_MS = 500;
const EXPORT_PAGE = 500;

/**
 * 'clickhouse://HOST:PORT/DATABASE[?cluster=NAME&shards=HOST:PORT,HOST:PORT&spool=FILE]' → { url, database, cluster,
 * shards: [http urls], spool }. Throws with what is wrong. PORT is the HTTP interface's (8123 by default).
 */
export function parseClickHouseUrl(spec) {
  let u;
  try {
    u = new URL(spec);
  } catch {
    throw new Error(`not a ClickHouse URL: "${spec}" (clickhouse://HOST:PORT/DATABASE)`);
  }
  if (u.protocol !== 'clickhouse:') throw new Error(`not a ClickHouse URL: "${spec}" (clickhouse://HOST:PORT/DATABASE)`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'h3probe';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`database name "${database}": letters, digits and _ only`);
  const http = (hostPort) => `http://${hostPort}`;
  const url = http(`${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${u.port || 8123}`);
  const cluster = u.searchParams.get('cluster') || null;
  if (cluster && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(cluster)) throw new Error(`cluster name "${cluster}": letters, digits and _ only`);
  const shards = (u.searchParams.get('shards') || '').split(',').filter(Boolean).map(http);
  if (cluster && shards.length === 0) shards.push(url);
  for (const [k] of u.searchParams) {
    if (!['cluster', 'shards', 'spool'].includes(k)) throw new Error(`unknown ClickHouse URL parameter "${k}" (cluster, shards, spool)`);
  }
  const spool = u.searchParams.get('spool') || `h3probe-spool-${u.hostname}-${u.port || 8123}-${database}.ndjson`;
  return { url, database, cluster, shards, spool };
}

/** A ClickHouse HTTP client for one server: query(sql) → text; json(sql) → rows; insert(table, rows) (JSONEachRow). */
export function clickhouseClient(url, { database = null, settings = {}, timeoutMs: defaultTimeout = INSERT_TIMEOUT_MS } = {}) {
  // node:http without keep-alive: a fresh connection per request. fetch() reuses idle sockets, and ClickHouse closes
  // its idle keep-alive connections after 3 s (keep_alive_timeout), so a request after a pause could meet a socket
  // the server had just closed, with no way to know whether an INSERT sent on it arrived.
  const base = new URL(url);
  function post(params, body, timeoutMs = defaultTimeout) {
    const q = new URLSearchParams({ ...(database ? { database } : {}), ...settings, ...params });
    const payload = Buffer.from(body);
    return new Promise((resolve, reject) => {
      const unreachable = (err) => {
        const e = new Error(`ClickHouse at ${url} unreachable: ${err.code ?? err.message}`);
        e.unreachable = true;
        reject(e);
      };
      const req = http.request({ host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port, method: 'POST', path: `/?${q}`, agent: false,
        headers: { 'Content-Length': payload.length, 'Content-Type': 'text/plain; charset=utf-8' } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', unreachable);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200) return resolve(text);
          const e = new Error(`ClickHouse at ${url}: ${text.trim().split('\n')[0].slice(0, 500)}`);
          // A proxy's 502-504 is treated as unreachable (spool and retry); any other status is the query's own error.
          e.unreachable = res.statusCode >= 502 && res.statusCode <= 504;
          reject(e);
        });
      });
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', unreachable);
      req.end(payload);
    });
  }
  return {
    url,
    query: (sql, { timeoutMs } = {}) => post({}, sql, timeoutMs),
    async json(sql, { timeoutMs } = {}) {
      const text = await post({ output_format_json_quote_64bit_integers: '0' }, `${sql}\nFORMAT JSON`, timeoutMs);
      return JSON.parse(text).data;
    },
    insert(table, rows, { timeoutMs } = {}) {
      if (rows.length === 0) return Promise.resolve('');
      return post({ query: `INSERT INTO ${table} FORMAT JSONEachRow` }, rows.map((r) => JSON.stringify(r)).join('\n'), timeoutMs);
    },
  };
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
    'run_id String', 'received_at String', 'region String', 'arms String', 'run_order String',
    ...classCountColumns(schema).map((c) => `${c.name} UInt8`),
    ...metricColumns(schema).flatMap((m) => [`${m.control} Array(Float64)`, `${m.treatment} Array(Float64)`, `${m.missing} UInt8`]),
  ];
  return [
    // A retried beacon has the run_id of the first: the store skips it, and ReplacingMergeTree folds any copy left.
    ['runs', runs, 'ReplacingMergeTree() ORDER BY run_id'],
    ['requests', requests, 'MergeTree() ORDER BY (run_id, phase)'],
    // The report reads one arms mode, by region, from this table alone.
    ['run_records', records, 'MergeTree() ORDER BY (arms, region, received_at, run_id)'],
  ];
}

/**
 * CREATE statements: plain tables, or in a cluster the local tables (name_local) plus a Distributed table of the name
 * over them, sharded by run_id (a run's rows of every table on one shard).
 */
export function clickhouseSchemaSql(schema, { database, cluster = null } = {}) {
  const out = [];
  for (const [name, columns, engine] of clickhouseTables(schema)) {
    const local = cluster ? `${name}_local` : name;
    out.push(`CREATE TABLE IF NOT EXISTS ${database}.${local} (\n  ${columns.join(',\n  ')}\n) ENGINE = ${engine}`);
    if (cluster) {
      out.push(`CREATE TABLE IF NOT EXISTS ${database}.${name} AS ${database}.${local}
  ENGINE = Distributed(${cluster}, ${database}, ${local}, cityHash64(run_id))`);
    }
  }
  return out;
}

// Columns present in a table, and the ALTERs that add the schema's missing ones (the core gained a column or class).
async function addMissingColumns(client, database, table, columns) {
  const have = new Set((await client.json(`SELECT name FROM system.columns WHERE database = '${database}' AND table = '${table}'`))
    .map((r) => r.name));
  for (const def of columns) {
    const name = def.split(' ')[0];
    if (!have.has(name)) await client.query(`ALTER TABLE ${database}.${table} ADD COLUMN ${def}`);
  }
}

/** Creates the database and tables where missing, on every shard in a cluster. */
export async function ensureClickHouseTables(schema, { url, database, cluster = null, shards = [] }) {
  const servers = cluster ? shards : [url];
  for (const server of servers) {
    const client = clickhouseClient(server, { timeoutMs: 120_000 });
    await client.query(`CREATE DATABASE IF NOT EXISTS ${database}`);
    for (const sql of clickhouseSchemaSql(schema, { database, cluster })) await client.query(sql);
    for (const [name, columns] of clickhouseTables(schema)) {
      await addMissingColumns(client, database, cluster ? `${name}_local` : name, columns);
      if (cluster) await addMissingColumns(client, database, name, columns);
    }
  }
}

/**
 * The rows the collector writes for one decoded beacon ({run, requests} from core.decodeBeacon) and its meta: the run
 * row, the request rows, and the report's run_records row. The class of each request is the core's (request_class);
 * nothing is re-derived here: a request's arm is its phase, its values go to that arm when its class is usable.
 */
export function clickhouseRows(schema, { run, requests }, {
  receivedAt, region = null, country = null, browser = null, browserMajor = null,
}) {
  const runRow = {};
  for (const c of schema.runColumns) runRow[c.name] = run[c.name] ?? (c.type === 'text' ? '' : null);
  Object.assign(runRow, { received_at: receivedAt, region, country, browser, browser_major: browserMajor });
  const requestRows = requests.map((q) => {
    const row = {};
    for (const c of schema.requestColumns) row[c.name] = q[c.name] ?? (c.type === 'text' ? '' : null);
    for (const d of schema.durations) row[d.name] = q[d.name] ?? null;
    return row;
  });
  const usable = new Set(schema.requestClasses.filter((c) => c.usable).map((c) => c.name));
  const record = { run_id: run.run_id, received_at: receivedAt, region: region ?? 'unknown', arms: run.arms, run_order: run.run_order };
  for (const c of classCountColumns(schema)) record[c.name] = 0;
  const byArm = { control: [], treatment: [] };
  for (const q of requests) {
    if (!(q.phase in byArm)) continue;
    record[`${q.phase}_${q.request_class}`]++;
    if (usable.has(q.request_class)) byArm[q.phase].push(q);
  }
  for (const arm of Object.values(byArm)) arm.sort((a, b) => a.idx - b.idx);
  for (const m of metricColumns(schema)) {
    let missing = 0;
    for (const arm of ['control', 'treatment']) {
      const values = [];
      for (const q of byArm[arm]) {
        const v = q[m.metric];
        if (typeof v === 'number' && Number.isFinite(v)) values.push(v);
        else missing++;
      }
      record[m[arm]] = values;
    }
    record[m.missing] = missing;
  }
  return { run: runRow, requests: requestRows, record };
}

/**
 * Opens (creating what is missing) the store at a clickhouse:// URL. core: loadH3probeNode(). Options: spool (file;
 * default from the URL), flushMs (how long a batch may wait for more beacons; default 0: the next event-loop turn),
 * retryMs (how often an unreachable server is tried again). Resolves to an object with the SQLite store's methods
 * (queueBeacon, insertBeacon, countRuns, checkWritable, exportNdjson, close) plus flushed() and state().
 */
export async function openClickHouseStore(spec, core, { spool: spoolPath, retryMs = RETRY_MS, readOnly = false } = {}) {
  // The collector's requests give up after INSERT_TIMEOUT_MS (then the beacons go to the spool); a report's scans of a
  // large table may take minutes.
  if (typeof core?.schema !== 'function') throw new Error('openClickHouseStore needs the Node module (loadH3probeNode())');
  const schema = core.schema();
  const target = typeof spec === 'string' ? parseClickHouseUrl(spec) : spec;
  const { database } = target;
  const settings = target.cluster ? { insert_distributed_sync: '1' } : {};
  const client = clickhouseClient(target.url, { database, settings, timeoutMs: readOnly ? READ_TIMEOUT_MS : INSERT_TIMEOUT_MS });
  await ensureClickHouseTables(schema, target);
  // count(), not a DISTINCT over every run_id: cheap at any size (a duplicate not yet folded by a merge counts twice).
  let runCount = Number((await client.json('SELECT count() AS n FROM runs'))[0].n);

  if (readOnly) return readOnlyStore(schema, target, client, runCount);
  const spoolFile = path.resolve(spoolPath ?? target.spool);
  fs.mkdirSync(path.dirname(spoolFile), { recursive: true });
  const spoolFd = fs.openSync(spoolFile, 'a+');
  const offsetFile = `${spoolFile}.offset`;
  const readOffset = () => {
    try {
      return Number(fs.readFileSync(offsetFile, 'utf8')) || 0;
    } catch {
      return 0;
    }
  };
  let spooled = fs.fstatSync(spoolFd).size > readOffset();  // beacons wait in the spool: new ones must queue behind them
  let lastError = null;
  let queue = [];
  let flushing = null;
  let closed = false;
  let retryTimer = null;
  const stats = { inserted: 0, toSpool: 0, replayed: 0, duplicates: 0 };

  // Inserts one batch (rows of many beacons); with dedupe, rows whose run_id a table already holds are left out (a
  // replay after a failure whose outcome was unknown). Returns, per beacon of the batch, whether it was a duplicate.
  async function insertBatch(batch, { dedupe }) {
    const ids = batch.map((b) => b.run.run_id);
    const inList = ids.map((id) => `'${id.replace(/[\\']/g, '\\$&')}'`).join(',');
    const existing = async (table) => new Set((await client.json(`SELECT DISTINCT run_id FROM ${table} WHERE run_id IN (${inList})`))
      .map((r) => r.run_id));
    const inRuns = await existing('runs');
    // Within a batch, a run_id twice (a client's retry) is stored once: the first copy, as SQLite keeps it.
    const seen = new Set();
    const duplicate = batch.map((b) => inRuns.has(b.run.run_id) || seen.has(b.run.run_id) || !seen.add(b.run.run_id));
    const fresh = batch.filter((_, i) => !duplicate[i]);
    // runs last: a run row is the mark that its requests and record are in, which is what a later dedupe trusts.
    await Promise.all([['requests', (b) => b.requests], ['run_records', (b) => [b.record]]].map(async ([table, pick]) => {
      const skip = dedupe ? await existing(table) : new Set();
      await client.insert(table, fresh.filter((b) => !skip.has(b.run.run_id)).flatMap(pick));
    }));
    await client.insert('runs', fresh.map((b) => b.run));
    return duplicate;
  }

  function appendSpool(batch) {
    const text = batch.map((b) => `${JSON.stringify({ run: b.run, requests: b.requests, record: b.record })}\n`).join('');
    fs.writeSync(spoolFd, text);
    fs.fsyncSync(spoolFd);
    stats.toSpool += batch.length;
  }

  async function flush() {
    const items = queue;
    queue = [];
    if (items.length === 0) return;
    const batch = items.map((i) => i.rows);
    if (!spooled) {
      try {
        const duplicate = await insertBatch(batch, { dedupe: false });
        items.forEach((item, k) => {
          if (!duplicate[k]) runCount++;
          item.resolve({ duplicate: duplicate[k] });
        });
        stats.inserted += duplicate.filter((d) => !d).length;
        lastError = null;
        return;
      } catch (err) {
        lastError = err.message;
        // A query error (a bad row) is not a reason to spool: it would fail again. Only an unreachable server is.
        if (!err.unreachable) {
          for (const i of items) i.reject(err);
          return;
        }
      }
    }
    try {
      appendSpool(batch);
      spooled = true;
    } catch (err) {
      for (const i of items) i.reject(new Error(`ClickHouse unreachable (${lastError}) and the spool failed: ${err.message}`));
      return;
    }
    for (const i of items) {
      runCount++;
      i.resolve({ duplicate: false, spooled: true });
    }
    scheduleReplay(0);
  }

  function kick() {
    if (flushing) return;
    flushing = (async () => {
      while (queue.length > 0) await flush();
    })().finally(() => { flushing = null; if (queue.length > 0) kick(); });
  }

  // Replays the spool from its offset, in order, in batches; the offset file is advanced (fsynced) after each batch
  // is in. When all is replayed and nothing new was appended meanwhile, both files are emptied and beacons go straight
  // to ClickHouse again.
  let replaying = null;
  function scheduleReplay(delay) {
    if (closed || replaying || retryTimer) return;
    retryTimer = setTimeout(() => { retryTimer = null; replaying = replay().finally(() => { replaying = null; }); }, delay);
  }
  async function replay() {
    for (;;) {
      const offset = readOffset();
      const size = fs.fstatSync(spoolFd).size;
      if (offset >= size) break;
      const length = Math.min(size - offset, 4 * 1024 * 1024);
      const buf = Buffer.alloc(length);
      fs.readSync(spoolFd, buf, 0, length, offset);
      let end = buf.lastIndexOf(0x0a) + 1;
      if (end === 0) end = length;  // one line longer than the chunk: cannot happen (beacons are ≤ 256 KiB)
      const batch = buf.subarray(0, end).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      try {
        const duplicates = (await insertBatch(batch, { dedupe: true })).filter(Boolean).length;
        stats.replayed += batch.length - duplicates;
        stats.duplicates += duplicates;
        runCount -= duplicates;
      } catch (err) {
        lastError = err.message;
        scheduleReplay(retryMs);
        return;
      }
      fs.writeFileSync(offsetFile, String(offset + end));
      const fd = fs.openSync(offsetFile, 'r');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
    }
    // Caught up, and no append can come between the check above and this (an append is synchronous, and so is
    // this): the spool is emptied and beacons go straight to ClickHouse again.
    fs.ftruncateSync(spoolFd, 0);
    fs.fsyncSync(spoolFd);
    fs.rmSync(offsetFile, { force: true });
    spooled = false;
    lastError = null;
  }
  if (spooled) scheduleReplay(0);

  const enqueue = (decoded, meta) => new Promise((resolve, reject) => {
    if (closed) return reject(new Error('store closed'));
    const rows = clickhouseRows(schema, decoded, { ...meta, receivedAt: meta.receivedAt ?? new Date().toISOString() });
    queue.push({ rows, resolve, reject });
    if (queue.length === 1) setImmediate(kick);
  });

  return {
    kind: 'clickhouse',
    target,
    client,
    spoolFile,
    /** decoded: core.decodeBeacon()'s {run, requests}; meta: {receivedAt, region, country}. Resolves {duplicate}. */
    queueBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    insertBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    /** Runs stored or spooled: those in ClickHouse when opened plus those acknowledged since. */
    countRuns: () => runCount,
    /** Writable while ClickHouse answers or the spool can take beacons; says which. */
    checkWritable: () => ({ ok: !closed, clickhouse: spooled ? 'unreachable: spooling' : 'ok',
      ...(spooled ? { spoolBytes: fs.fstatSync(spoolFd).size - readOffset(), lastError } : {}) }),
    state: () => ({ spooled, ...stats, lastError }),
    /** Resolves once every queued beacon is inserted and the spool is replayed (or rejects after timeoutMs). */
    async flushed(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length > 0 || flushing || spooled || replaying) {
        if (Date.now() > deadline) throw new Error(`ClickHouse store not flushed after ${timeoutMs} ms: ${lastError}`);
        if (spooled && !replaying && !retryTimer) scheduleReplay(0);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    exportNdjson: (stream) => exportNdjson(schema, client, stream),
    /** Waits for the queue (not for a spool replay: the spool stays on disk and is replayed when reopened). */
    async close() {
      while (queue.length > 0 || flushing) await (flushing ?? new Promise((r) => setImmediate(r)));
      closed = true;
      clearTimeout(retryTimer);
      await replaying;
      fs.closeSync(spoolFd);
    },
  };
}

/** One JSON line per run (duplicates folded), its requests nested: the same lines as the SQLite store's export. */
function exportNdjson(schema, client, stream) {
  const runColumns = [...schema.runColumns.map((c) => c.name), ...COLLECTOR_COLUMNS.map((c) => c.name)];
  const quote = (s) => `'${s.replace(/[\\']/g, '\\$&')}'`;
  return writeRunsNdjson(stream, {
    runsAfter: (after) => client.json(`SELECT ${runColumns.join(', ')} FROM runs WHERE run_id > ${quote(after)}
      ORDER BY run_id LIMIT 1 BY run_id LIMIT ${EXPORT_PAGE}`),
    requestsBetween: (first, last) => client.json(`SELECT * FROM requests WHERE run_id >= ${quote(first)}
      AND run_id <= ${quote(last)} ORDER BY run_id, phase, idx LIMIT 1 BY run_id, phase, idx`),
  });
}

// For the report and export: no spool, no inserts.
function readOnlyStore(schema, target, client, runCount) {
  const refuse = () => Promise.reject(new Error('this ClickHouse store was opened read-only'));
  return {
    kind: 'clickhouse', target, client, readOnly: true, queueBeacon: refuse, insertBeacon: refuse,
    countRuns: () => runCount, checkWritable: () => ({ ok: false, error: 'read-only' }),
    exportNdjson: (stream) => exportNdjson(schema, client, stream),
    close: async () => {},
  };
}
