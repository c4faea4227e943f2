// SQLite storage of decoded beacons: one row per run, its requests and the report's records, with the columns the C++
// core names (schema().runColumns, requestColumns, durations) and nothing else of the beacon. WAL mode; group commit per
// event-loop turn. A beacon's requests are kept in its run row (runs.request_list, one JSON array per request) and read
// as rows through the view `requests`: one row written per run instead of one per request, the same rows read.
import fs from 'node:fs';
import path from 'node:path';
import { networkLabel } from './networkFor.mjs';
import { peer } from './peer.mjs';

// 2: rows as the C++ decoder returns them (each request with its class and each run's arms mode, the report's
// run_records and arm_values, no beacon text).
// 3: requests.server_protocol, runs.browser and browser_major.
// 4: a run's requests in runs.request_list, read as rows through the view `requests`; run_records.setup.
// 5: every run with its cold-setup record (run_records.setup NOT NULL); the layout (storeLayout()) kept in the file.
// A file of another version or layout is refused when opened (no migration before 1.0: docs/architecture.md, "The
// stores' versions"): export it with the h3probe that wrote it.
export const STORE_VERSION = 5;
/** The SQLite store's file when none is named (the collector's --db, the report's and the export's). */
export const DEFAULT_DB = 'h3probe-beacons.sqlite';
/** Runs per page of an export (either store): each page is one query for its runs and one for their requests. */
export const EXPORT_PAGE = 500;
// flag: 1, 0 or NULL.
const SQL_TYPE = { text: 'TEXT', real: 'REAL', flag: 'INTEGER' };

/**
 * What the collector adds to a run's row, from the request that carried the beacon rather than from the beacon: when,
 * where from and over which network (clientLocator.mjs; never the address) and which browser (browserFor.mjs).
 */
export const COLLECTOR_COLUMNS = Object.freeze([
  Object.freeze({ name: 'received_at', type: 'text', what: 'when the collector received the beacon (ISO 8601, UTC)' }),
  Object.freeze({ name: 'region', type: 'text', what: "the client's region (from its country)" }),
  Object.freeze({ name: 'country', type: 'text', what: "the client's country (ISO 3166 alpha-2)" }),
  Object.freeze({ name: 'browser', type: 'text', what: 'the browser engine: chromium, firefox, webkit or other' }),
  Object.freeze({ name: 'browser_major', type: 'real', what: "the engine's major version" }),
  Object.freeze({ name: 'asn', type: 'real', what: "the number of the autonomous system announcing the client's address" }),
  Object.freeze({ name: 'as_org', type: 'text', what: "that autonomous system's organisation name" }),
]);

/** Each table's columns as [name, SQL type], from the core's schema() and COLLECTOR_COLUMNS. */
function storeColumns(schema) {
  const col = (c) => [c.name, SQL_TYPE[c.type]];
  return {
    runs: [...schema.runColumns.map(col), ...COLLECTOR_COLUMNS.map(col)],
    requests: [...schema.requestColumns.map(col), ...schema.durations.map((d) => [d.name, 'REAL'])],
  };
}

// The request columns of runs.request_list, in order: each request is a JSON array of these values (its run_id is the
// run's).
const packedRequestColumns = (schema) => storeColumns(schema).requests.map(([name]) => name).filter((n) => n !== 'run_id');

// The view `requests`: each request of runs.request_list as a row with the core's request columns.
function requestsViewSql(schema) {
  const packed = packedRequestColumns(schema);
  const fromList = ['runs.run_id AS run_id', ...packed.map((name, i) => `json_extract(r.value, '$[${i}]') AS ${name}`)];
  return `CREATE VIEW requests AS
  SELECT ${fromList.join(', ')} FROM runs, json_each(runs.request_list) AS r WHERE runs.request_list IS NOT NULL;`;
}

/** The store's tables as SQL, from the core's schema(): what the collector keeps, and the only place it is written. */
export function storeSchemaSql(schema) {
  const columns = storeColumns(schema);
  const runColumns = columns.runs.map(([name, type]) => (name === 'run_id' ? 'run_id TEXT PRIMARY KEY' : `${name} ${type}`));
  return `
CREATE TABLE runs (
  ${runColumns.join(',\n  ')},
  request_list TEXT
);
${requestsViewSql(schema)}
-- The report reads only these two narrow tables (a run's record is described in the core's stored_run.hpp): one row
-- per run with its counts by class, its payload mode (the core's run column payload_bytes, 0 for the no-op), its
-- cold-setup record (the connection-setup view's, connection_setup.hpp) and its network's label (networkLabel()), and
-- per metric one row per run with the usable values. run is runs.rowid; metric is the metric's position in the core's
-- list.
CREATE TABLE run_records (
  run INTEGER PRIMARY KEY, received_at TEXT, region TEXT, arm_counts BLOB NOT NULL, arms TEXT, setup BLOB NOT NULL,
  payload_bytes INTEGER NOT NULL, network TEXT
);
CREATE TABLE arm_values (
  metric INTEGER, run INTEGER, arm_values BLOB, PRIMARY KEY (metric, run)
) WITHOUT ROWID;
-- The report reads one arms mode and one payload mode (never A/B and A/A runs together, nor two response sizes), groups
-- its runs by region and filters by date from this index alone.
CREATE INDEX run_records_mode ON run_records (arms, payload_bytes, region, received_at);
-- The report counts the load_error beacons (runs of no arms mode) by reason, the runs whose core ran on the page's
-- main thread by why, and the runs that did not complete by how they ended (each few, once a deployment is right), from
-- these indexes, not from every run row.
CREATE INDEX runs_load_errors ON runs (received_at, reason) WHERE outcome = 'load_error';
CREATE INDEX runs_main_thread ON runs (received_at) WHERE run_context = 'main';
CREATE INDEX runs_unfinished ON runs (received_at) WHERE outcome IN ('deadline', 'stopped', 'error');
-- The layout the file was made with (storeLayout()): a file of another is refused.
CREATE TABLE store_layout (layout TEXT NOT NULL);
`;
}

/**
 * What a store's file holds, from the core's schema(): its tables (storeSchemaSql()), the metrics (arm_values.metric is
 * a position in their list), the request classes and the record formats. A store made with another layout is refused
 * when opened (checkLayout()), as one of another version is: before 1.0 nothing is migrated.
 */
export function storeLayout(schema) {
  return JSON.stringify({ version: STORE_VERSION, tables: storeSchemaSql(schema), metrics: schema.metrics,
    requestClasses: schema.requestClasses.map((c) => c.name), runRecordVersion: schema.runRecordVersion, setupRecordVersion: schema.setupRecordVersion });
}

/** What to do with a store this h3probe does not read (either kind): the end of its refusal. */
export const OTHER_STORE_ADVICE = 'export its runs with the h3probe that wrote it (h3probe export), and start a new store';

// Throws unless the file db (at dbPath) is a store of this version and layout, or (writable) a new file.
function checkLayout(db, dbPath, schema, { readOnly }) {
  const version = db.pragma('user_version', { simple: true });
  const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get();
  if (version === 0 && tables === 0) {
    if (readOnly) throw new Error(`${dbPath} holds no h3probe store: it was not written by the h3probe collector`);
    return;
  }
  if (version === 0) throw new Error(`${dbPath} was not written by the h3probe collector (no store version)`);
  if (version !== STORE_VERSION) {
    throw new Error(`${dbPath} is an h3probe store of version ${version}; this h3probe reads version ${STORE_VERSION} only: ${OTHER_STORE_ADVICE}`);
  }
  const have = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_layout'").get()
    && db.prepare('SELECT layout FROM store_layout').pluck().get();
  if (have !== storeLayout(schema)) {
    throw new Error(`${dbPath} is an h3probe store of version ${version} whose layout (its columns, metrics, request classes `
      + `or record formats) is not this h3probe's: ${OTHER_STORE_ADVICE}`);
  }
}

/**
 * dbPath: a file or ':memory:'. core: the Node module (loadH3probeNode()), for the schema. A new file gets the store's
 * tables; any other must be a store of this version and layout (checkLayout()). readOnly (the report, the export): the
 * file must exist and is not changed in any way (no journal mode, no table made), and inserts are refused.
 */
export function openStore(dbPath, core, { readOnly = false } = {}) {
  if (typeof core?.schema !== 'function') throw new Error('openStore needs the Node module (loadH3probeNode())');
  const schema = core.schema();
  const Database = peer('better-sqlite3', 'the SQLite store');
  if (readOnly && !fs.existsSync(dbPath)) throw new Error(`no database at ${dbPath}: run "npm start" first or pass --db FILE`);
  // A collector pointed at /var/lib/h3probe/collector.sqlite on a new machine makes the folder, as it makes the file.
  if (!readOnly && dbPath !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  const db = new Database(dbPath, readOnly ? { readonly: true, fileMustExist: true } : {});
  try {
    checkLayout(db, dbPath, schema, { readOnly });
  } catch (err) {
    db.close();
    throw err;
  }
  if (!readOnly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  }
  if (!readOnly && db.pragma('user_version', { simple: true }) === 0) {
    db.transaction(() => {
      db.exec(storeSchemaSql(schema));
      db.prepare('INSERT INTO store_layout (layout) VALUES (?)').run(storeLayout(schema));
      db.pragma(`user_version = ${STORE_VERSION}`);
    })();
  }

  const insertRows = readOnly ? () => { throw new Error(`${dbPath} was opened read-only`); } : prepareInsert(db, schema);
  const countStmt = db.prepare('SELECT count(*) FROM runs').pluck();
  const requestsStmt = db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY phase, idx');
  const runColumns = runRowColumns(schema).join(', ');
  const sinceStmt = db.prepare(`SELECT ${runColumns} FROM runs WHERE received_at >= ? ORDER BY received_at, run_id`);
  const runsPage = db.prepare(`SELECT ${runColumns} FROM runs WHERE run_id > ? ORDER BY run_id LIMIT ?`);
  const requestsRange = db.prepare('SELECT * FROM requests WHERE run_id >= ? AND run_id <= ? ORDER BY run_id, phase, idx');

  const insertOne = (decoded, {
    receivedAt, region = null, country = null, browser = null, browserMajor = null, asn = null, asOrg = null,
  } = {}) => insertRows(decoded, {
    received_at: receivedAt ?? new Date().toISOString(), region, country, browser, browser_major: browserMajor, asn, as_org: asOrg,
  });
  const insert = db.transaction(insertOne);

  // Group commit: beacons that arrive in the same event-loop turn share one transaction (one WAL commit) instead of
  // paying one commit each. Should the batch fail (a beacon SQLite refuses: none is known), it is rolled back and each
  // beacon is tried again in a transaction of its own, so that one bad beacon is refused alone and the rest kept. (A
  // savepoint per beacon would do the same in one pass, but costs CPU on every beacon for a failure never seen.)
  let queue = [];
  const insertAll = db.transaction((batch) => {
    for (const item of batch) item.result = insertOne(item.decoded, item.meta);
  });
  function insertBatch(batch) {
    try {
      insertAll(batch);
    } catch {
      for (const item of batch) {
        try {
          item.result = insert(item.decoded, item.meta);
        } catch (error) {
          item.error = error;
        }
      }
    }
  }
  function flush() {
    const batch = queue;
    queue = [];
    insertBatch(batch);
    for (const item of batch) (item.error ? item.reject(item.error) : item.resolve(item.result));
  }

  return {
    db,
    /**
     * decoded: core.decodeBeacon()'s {run, requests}; meta: {receivedAt (ISO, default now), region, country, asn, asOrg
     * (clientLocator.mjs), browser, browserMajor} (browserFor.mjs).
     */
    insertBeacon: (decoded, meta = {}) => insert(decoded, meta),
    /** The same, committed together with the other beacons queued in this event-loop turn. Resolves {duplicate}. */
    queueBeacon(decoded, meta = {}) {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ decoded, meta, resolve, reject });
      });
    },
    countRuns: () => countStmt.get(),
    /** {ok: true} when the database is open and its write lock can be taken now; {ok: false, error} otherwise. */
    checkWritable() {
      try {
        if (!db.open) return { ok: false, error: 'database closed' };
        if (db.readonly) return { ok: false, error: 'database read-only' };
        db.exec('BEGIN IMMEDIATE; ROLLBACK');
        return { ok: true };
      } catch (error) {
        return { ok: false, error: error.message };
      }
    },
    /** The run rows (without the report records) received at or after sinceIso, oldest first. */
    runsSince: (sinceIso = '') => sinceStmt.all(sinceIso),
    requestsFor: (runId) => requestsStmt.all(runId),
    /** One JSON line per run, its requests nested; pages by run_id so inserts are never blocked by an open cursor. */
    exportNdjson: (stream) => writeRunsNdjson(stream, {
      runsAfter: (after) => runsPage.all(after, EXPORT_PAGE),
      requestsBetween: (first, last) => requestsRange.all(first, last),
    }),
    close: () => db.close(),
  };
}

/**
 * The export of either store: one JSON line per run with its requests nested, page by page. runsAfter(runId): the next
 * page of runs in run_id order (empty at the end); requestsBetween(firstRunId, lastRunId): their requests in run_id
 * order (either may return a promise). Resolves to the number of lines.
 */
export async function writeRunsNdjson(stream, { runsAfter, requestsBetween }) {
  let after = '';
  let count = 0;
  for (;;) {
    const runs = await runsAfter(after);
    if (runs.length === 0) return count;
    const byRun = new Map();
    for (const r of await requestsBetween(runs[0].run_id, runs.at(-1).run_id)) {
      if (!byRun.has(r.run_id)) byRun.set(r.run_id, []);
      byRun.get(r.run_id).push(r);
    }
    for (const run of runs) {
      const line = { ...run, requests: byRun.get(run.run_id) ?? [] };
      if (!stream.write(`${JSON.stringify(line)}\n`)) await new Promise((r) => stream.once('drain', r));
      count++;
    }
    after = runs.at(-1).run_id;
  }
}

// A run row's columns: the core's, then what the collector adds.
function runRowColumns(schema) {
  return storeColumns(schema).runs.map(([name]) => name);
}

// The statements that store one decoded beacon; returns insert(decoded, meta) → {duplicate}, meta holding a value for
// each of COLLECTOR_COLUMNS.
// Call it inside a transaction: the run's rows are written all or none.
function prepareInsert(db, schema) {
  const runColumns = [...runRowColumns(schema), 'request_list'];
  const packed = packedRequestColumns(schema);
  const insertRun = db.prepare(`INSERT OR IGNORE INTO runs (${runColumns.join(', ')})
    VALUES (${runColumns.map((c) => `@${c}`).join(', ')})`);
  const insertRecord = db.prepare(`INSERT INTO run_records (run, received_at, region, arm_counts, arms, payload_bytes, setup, network)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertValues = db.prepare('INSERT INTO arm_values (metric, run, arm_values) VALUES (?, ?, ?)');
  return ({ run, requests }, meta) => {
    const requestList = JSON.stringify(requests.map((q) => packed.map((c) => q[c] ?? null)));
    const stored = insertRun.run({ ...run, ...meta, request_list: requestList });
    // A retried beacon carries the same run_id: keep the first copy.
    if (stored.changes === 0) return { duplicate: true };
    const id = stored.lastInsertRowid;
    insertRecord.run(id, meta.received_at, meta.region, run.arm_counts, run.arms, run.payload_bytes || 0, run.setup,
      networkLabel(meta.asn, meta.as_org));
    schema.metrics.forEach((metric, i) => insertValues.run(i, id, run[`arm_${metric}`]));
    return { duplicate: false };
  };
}
