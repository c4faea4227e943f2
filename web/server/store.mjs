// SQLite storage of accepted beacons (runs and their request samples), WAL mode, with the queries the report and tests need.
import Database from 'better-sqlite3';
import { packRun } from '../report/runPack.mjs';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, page_load_id TEXT, config_id TEXT, module_version TEXT, run_order TEXT,
  outcome TEXT, error TEXT, received_at TEXT, region TEXT, country TEXT, summary_json TEXT, beacon_json TEXT,
  run_ms REAL, sample_rate REAL, effective_type TEXT, visible_throughout INTEGER,
  packed_version INTEGER, h2_network BLOB, h3_network BLOB, packed_counts BLOB
);
CREATE TABLE IF NOT EXISTS requests (
  run_id TEXT REFERENCES runs, phase TEXT, idx INTEGER, origin TEXT, result TEXT, http_status INTEGER, protocol TEXT,
  reused INTEGER, network_ms REAL, queue_ms REAL, dns_ms REAL, connect_ms REAL, tls_ms REAL, request_ms REAL,
  response_ms REAL, start_ms REAL, fetch_ms REAL,
  PRIMARY KEY (run_id, phase, idx)
);
CREATE INDEX IF NOT EXISTS runs_received_at ON runs (received_at);
`;
const MS_FIELDS = ['network_ms', 'queue_ms', 'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'start_ms', 'fetch_ms'];
const REQUEST_COLUMNS = ['run_id', 'phase', 'idx', 'origin', 'result', 'http_status', 'protocol', 'reused', ...MS_FIELDS];
const RUN_COLUMNS = ['run_id', 'page_load_id', 'config_id', 'module_version', 'run_order', 'outcome', 'error', 'received_at',
  'region', 'country', 'summary_json', 'beacon_json', 'run_ms', 'sample_rate', 'effective_type', 'visible_throughout',
  // Write-time packing for the report (web/report/runPack.mjs).
  'packed_version', 'h2_network', 'h3_network', 'packed_counts'];
const EXPORT_PAGE = 500;

export function openStore(dbPath) {
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  addMissingColumns(db);

  const insertRun = db.prepare(`INSERT OR IGNORE INTO runs (${RUN_COLUMNS.join(', ')})
    VALUES (${RUN_COLUMNS.map((c) => `@${c}`).join(', ')})`);
  const insertRequest = db.prepare(`INSERT INTO requests (${REQUEST_COLUMNS.join(', ')})
    VALUES (${REQUEST_COLUMNS.map((c) => `@${c}`).join(', ')})`);
  const countStmt = db.prepare('SELECT count(*) FROM runs').pluck();
  const sinceStmt = db.prepare('SELECT * FROM runs WHERE received_at >= ? ORDER BY received_at, run_id');
  const requestsStmt = db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY phase, idx');
  const runsPage = db.prepare('SELECT * FROM runs WHERE run_id > ? ORDER BY run_id LIMIT ?');
  const requestsRange = db.prepare('SELECT * FROM requests WHERE run_id >= ? AND run_id <= ? ORDER BY run_id, phase, idx');
  const armStmts = new Map();

  const insert = db.transaction((beacon, meta) => {
    const rows = (beacon.samples ?? []).map((sample) => requestRow(beacon.run_id, sample));
    // The run row carries the report's packed form of exactly the request rows stored with it (all or none: one savepoint).
    const { changes } = insertRun.run({ ...runRow(beacon, meta), ...packRun(rows) });
    // A retried beacon carries the same run_id: keep the first copy.
    if (changes === 0) return { duplicate: true };
    for (const row of rows) insertRequest.run(row);
    return { duplicate: false };
  });

  // Group commit: beacons that arrive in the same event-loop turn share one transaction (one WAL commit) instead of
  // paying one commit each. Each beacon keeps its own savepoint (a nested better-sqlite3 transaction), so one bad
  // beacon is rolled back alone and the rest of the batch is kept.
  let queue = [];
  const insertBatch = db.transaction((batch) => {
    for (const item of batch) {
      try {
        item.result = insert(item.beacon, item.meta);
      } catch (error) {
        item.error = error;
      }
    }
  });
  function flush() {
    const batch = queue;
    queue = [];
    try {
      insertBatch(batch);
    } catch (error) {
      for (const item of batch) item.error ??= error;
    }
    for (const item of batch) (item.error ? item.reject(item.error) : item.resolve(item.result));
  }

  return {
    db,
    /** meta: {receivedAt (ISO, default now), region, country}. Returns {duplicate}. */
    insertBeacon: (beacon, meta = {}) => insert(beacon, meta),
    /** The same, committed together with the other beacons queued in this event-loop turn. Resolves {duplicate}. */
    queueBeacon(beacon, meta = {}) {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ beacon, meta, resolve, reject });
      });
    },
    countRuns: () => countStmt.get(),
    runsSince: (sinceIso = '') => sinceStmt.all(sinceIso),
    requestsFor: (runId) => requestsStmt.all(runId),
    /** Control samples seen over h2 and treatment samples seen over h3, result ok, metric present. */
    armValues(metric = 'network_ms') {
      if (!MS_FIELDS.includes(metric)) throw new Error(`unknown metric ${metric}`);
      if (!armStmts.has(metric)) {
        const sql = `SELECT ${metric} FROM requests WHERE phase = ? AND protocol = ? AND result = 'ok' AND ${metric} IS NOT NULL`;
        armStmts.set(metric, db.prepare(sql).pluck());
      }
      const stmt = armStmts.get(metric);
      return { h2: Float64Array.from(stmt.all('control', 'h2')), h3: Float64Array.from(stmt.all('treatment', 'h3')) };
    },
    /** One JSON line per run, its samples nested; pages by run_id so inserts are never blocked by an open cursor. */
    async exportNdjson(stream) {
      let after = '';
      let count = 0;
      for (;;) {
        const runs = runsPage.all(after, EXPORT_PAGE);
        if (runs.length === 0) return count;
        const byRun = new Map();
        for (const r of requestsRange.all(runs[0].run_id, runs.at(-1).run_id)) {
          if (!byRun.has(r.run_id)) byRun.set(r.run_id, []);
          byRun.get(r.run_id).push(r);
        }
        // The packed columns are the report's derived copy of the requests, not data: left out.
        for (const { beacon_json, summary_json, packed_version, h2_network, h3_network, packed_counts, ...run } of runs) {
          const line = { ...run, summary: JSON.parse(summary_json ?? 'null'), requests: byRun.get(run.run_id) ?? [] };
          if (!stream.write(`${JSON.stringify(line)}\n`)) await new Promise((r) => stream.once('drain', r));
          count++;
        }
        after = runs.at(-1).run_id;
      }
    },
    close: () => db.close(),
  };
}

// A database written by an older version lacks the newer columns of runs: add them (NULL for the old rows) rather than
// refuse to open it, so nothing already collected is lost.
// Runs stored before the packed columns existed keep them NULL: the report reads those with the row scan.
const ADDED_RUN_COLUMNS = { run_ms: 'REAL', sample_rate: 'REAL', effective_type: 'TEXT', visible_throughout: 'INTEGER',
  packed_version: 'INTEGER', h2_network: 'BLOB', h3_network: 'BLOB', packed_counts: 'BLOB' };
function addMissingColumns(db) {
  const have = new Set(db.prepare('PRAGMA table_info(runs)').all().map((c) => c.name));
  for (const [name, type] of Object.entries(ADDED_RUN_COLUMNS)) {
    if (!have.has(name)) db.exec(`ALTER TABLE runs ADD COLUMN ${name} ${type}`);
  }
}

function runRow(b, { receivedAt, region = null, country = null }) {
  return {
    run_id: b.run_id, page_load_id: b.page_load_id ?? null, config_id: b.config_id ?? null,
    module_version: b.module_version ?? null, run_order: b.order ?? null, outcome: b.outcome ?? null, error: b.error ?? null,
    received_at: receivedAt ?? new Date().toISOString(), region, country,
    summary_json: b.summary === undefined ? null : JSON.stringify(b.summary), beacon_json: JSON.stringify(b),
    run_ms: typeof b.run_ms === 'number' ? b.run_ms : null,
    sample_rate: typeof b.sample_rate === 'number' ? b.sample_rate : null,
    effective_type: b.context?.effective_type || null,
    visible_throughout: typeof b.context?.visible_throughout === 'boolean' ? Number(b.context.visible_throughout) : null,
  };
}

function requestRow(runId, s) {
  const row = {
    run_id: runId, phase: s.phase, idx: s.idx, origin: s.origin, result: s.result, http_status: s.http_status ?? null,
    protocol: s.protocol ?? null, reused: typeof s.reused === 'boolean' ? Number(s.reused) : null,
  };
  for (const f of MS_FIELDS) row[f] = typeof s[f] === 'number' ? s[f] : null;
  return row;
}
