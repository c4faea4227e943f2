// Reads what the report needs from the collector's SQLite store: the region names and, for every selected run, its
// record (the C++ core wrote it when the beacon was stored: counts by class, and the chosen metric's usable values of
// each arm) prefixed with its region's number, concatenated by SQLite itself. It reads the two narrow tables
// run_records and arm_values, no run or request row: the C++ core then does all the counting and statistics
// (buildReport.mjs).

// Runs per query: the concatenated records of this many runs are one BLOB (~200 bytes a run).
const CHUNK_RUNS = 16384;

/**
 * What a report can be split by (--by): each a value per run, read by SQL from the report's table run_records (c) or,
 * for what only the run row holds, from runs (r, joined on its rowid). A run without a value is in group "unknown".
 * region stays the default; day is the daily series (the UTC date the collector received the beacon on).
 */
export const GROUP_BY = Object.freeze({
  region: { what: "the client's region (from its country)", sql: 'c.region' },
  browser: { what: 'the browser engine (chromium, firefox, webkit, other)', sql: 'r.browser', runs: true },
  browser_version: { what: 'the browser engine and major version', sql: "r.browser || ' ' || CAST(r.browser_major AS INTEGER)", runs: true },
  config: { what: "the experiment config's id", sql: "nullif(r.config_id, '')", runs: true },
  effective_type: { what: 'navigator.connection.effectiveType (4g, 3g, ...)', sql: "nullif(r.effective_type, '')", runs: true },
  context: { what: 'where the page module ran its core: worker (a dedicated Worker) or main (the main thread)', sql: "nullif(r.run_context, '')", runs: true },
  day: { what: 'the UTC date the beacon was received', sql: 'substr(c.received_at, 1, 10)' },
  // networkLabel() of web/server/networkFor.mjs, in SQL: "AS15169 Google LLC".
  network: { what: 'the autonomous system announcing the client address: "AS15169 Google LLC"', runs: true, pooled: true,
    sql: "'AS' || CAST(r.asn AS INTEGER) || coalesce(' ' || nullif(r.as_org, ''), '')" },
});

/** The group that pools the values of a `pooled` grouping with fewer runs than minGroupRuns. */
export const OTHER_GROUP = 'other';

/**
 * A pooled grouping's groups: those with at least minRuns runs by name, the rest pooled as OTHER_GROUP (its runs the
 * sum). counts: [{name, n}] sorted by name. Returns {shown: [{name, n}] (other last, when any), pooled: the number of
 * values pooled}.
 */
export function poolGroups(counts, minRuns) {
  const shown = counts.filter((g) => g.n >= minRuns);
  const rest = counts.filter((g) => g.n < minRuns);
  if (rest.length) shown.push({ name: OTHER_GROUP, n: rest.reduce((s, g) => s + g.n, 0) });
  return { shown, pooled: rest.length };
}

/**
 * db: a better-sqlite3 Database holding the store's tables. schema: core.schema(). Options: metric (one of
 * schema.metrics), since (ISO date or date-time: runs received at or after it), arms (the one arms mode read: A/B and
 * A/A runs are never pooled), by (one of GROUP_BY: what the groups are), minGroupRuns (a `pooled` grouping, network,
 * shows the values with at least this many runs and pools the rest as OTHER_GROUP; default the fewest runs for an
 * interval, schema.limits.minRunsForInterval), payloadBytes (the one payload mode read, 0 the no-op: runs of different
 * response sizes are never pooled either).
 * Returns { metric, since, arms, by, storedRuns, received: {first, last} (ISO times), regions: [the regions the runs
 * came from], groups: [group names], records: [Buffer] (the records in chunks, in run order), loadErrors: [{reason, n}]
 * (the load_error beacons received since, by reason, over every arms mode: the gate that sends one knows no arms),
 * payloadBytes, payloadModes: [{bytes, runs}] (every payload mode stored for this arms mode since, the one read
 * included), mainThread: [{reason, n}] (the selected runs whose core ran on the page's main thread, by why they left
 * the Worker: context.worker_fallback, 'unknown' from a module older than it), and for a pooled grouping pooled:
 * {minRuns, values (how many values went into OTHER_GROUP)} }.
 */
export function readReportData(db, schema, {
  metric = 'network_ms', since = '', arms = 'h2-h3', by = 'region', payloadBytes = 0,
  minGroupRuns = schema.limits.minRunsForInterval,
} = {}) {
  if (!schema.metrics.includes(metric)) throw new Error(`unknown metric "${metric}"; one of ${schema.metrics.join(', ')}`);
  const grouping = GROUP_BY[by];
  if (!Object.hasOwn(GROUP_BY, by)) throw new Error(`--by must be one of ${Object.keys(GROUP_BY).join(', ')}, got "${by}"`);
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_records'").get()) {
    throw new Error('this database has no run_records table: it was not written by the h3probe collector');
  }
  const sinceIso = normalizeSince(since);
  checkPayloadBytes(payloadBytes, schema);
  const payloadSql = payloadModeSql(db);
  const mode = `c.arms = ? AND ${payloadSql} = ${Number(payloadBytes)}`;
  const join = grouping.runs ? 'JOIN runs r ON r.rowid = c.run' : '';
  // Grouped by the bare expression, so that for regions SQLite walks the (arms, payload_bytes, region, received_at) index in order
  // instead of sorting 420k rows in a temporary B-tree (a third of the read).
  const countBy = (sql, from) => {
    const counts = new Map();
    for (const { name, n } of db.prepare(`SELECT ${sql} AS name, count(*) AS n FROM run_records c ${from}
      WHERE ${mode} AND c.received_at >= ? GROUP BY ${sql}`).all(arms, sinceIso)) {
      const key = name ?? 'unknown';
      counts.set(key, (counts.get(key) ?? 0) + n);
    }
    return [...counts].map(([name, n]) => ({ name, n })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };
  const byRegion = countBy(GROUP_BY.region.sql, '');
  let byGroup = by === 'region' ? byRegion : countBy(grouping.sql, join);
  let pooled = null;
  if (grouping.pooled) {
    checkMinGroupRuns(minGroupRuns);
    const { shown, pooled: values } = poolGroups(byGroup, minGroupRuns);
    byGroup = shown;
    pooled = { minRuns: minGroupRuns, values };
  }
  checkGroupCount(by, byGroup.length, schema, grouping.pooled);
  const groups = byGroup.map((r) => r.name);
  const storedRuns = byRegion.reduce((s, r) => s + r.n, 0);
  // The dates the selected runs were received on (the same index).
  const range = db.prepare(`SELECT min(received_at) AS first, max(received_at) AS last FROM run_records c
    WHERE ${mode} AND received_at >= ?`).get(arms, sinceIso);
  const payloadModes = db.prepare(`SELECT ${payloadSql} AS bytes, count(*) AS runs FROM run_records c
    WHERE c.arms = ? AND c.received_at >= ? GROUP BY bytes ORDER BY bytes`).all(arms, sinceIso);

  const { lo, hi } = db.prepare('SELECT coalesce(min(run), 1) AS lo, coalesce(max(run), 0) AS hi FROM run_records').get();
  // Pooled values fall to ELSE: the last group, OTHER_GROUP.
  const number = (i) => groupNumberSql(i + 1);
  const named = pooled?.values ? groups.slice(0, -1) : groups;
  const groupByte = groupCaseSql(grouping, named, number, pooled?.values ? number(groups.length - 1) : null);
  // || and group_concat keep a BLOB's bytes as they are; the CAST hands the result to JavaScript as one Buffer.
  const chunk = db.prepare(`SELECT CAST(group_concat(${groupByte} || c.arm_counts || v.arm_values, '') AS BLOB)
    FROM run_records c JOIN arm_values v ON v.metric = ? AND v.run = c.run ${join}
    WHERE c.run BETWEEN ? AND ? AND c.received_at >= ? AND ${mode}`).pluck();
  const metricCode = schema.metrics.indexOf(metric);
  const parts = [];
  for (let from = lo; from <= hi; from += CHUNK_RUNS) {
    const bytes = chunk.get(...named, metricCode, from, Math.min(hi, from + CHUNK_RUNS - 1), sinceIso, arms);
    if (bytes) parts.push(bytes);
  }
  return { metric, since: sinceIso, arms, by, payloadBytes, payloadModes, storedRuns,
    received: { first: range.first ?? null, last: range.last ?? null },
    regions: byRegion.map((r) => r.name), groups, records: parts, ...(pooled ? { pooled } : {}),
    loadErrors: db.prepare(`SELECT reason, count(*) AS n FROM runs WHERE outcome = 'load_error' AND received_at >= ?
      GROUP BY reason`).all(sinceIso),
    mainThread: readMainThread(db, { arms, payloadBytes, since: sinceIso }) };
}

/**
 * The runs of an arms mode and payload mode received since `since` whose core ran on the page's main thread, by why
 * they left the Worker: [{reason, n}]. From the runs table (the run_records of the report hold no context), through
 * the store's partial index of such runs; a store opened before the reason was a column reads 'unknown'.
 */
function readMainThread(db, { arms, payloadBytes, since }) {
  const has = (column) => db.prepare("SELECT 1 FROM pragma_table_info('runs') WHERE name = ?").get(column);
  const reason = has('worker_fallback') ? "coalesce(nullif(worker_fallback, ''), 'unknown')" : "'unknown'";
  const payload = has('payload_bytes') ? 'coalesce(payload_bytes, 0)' : '0';
  return db.prepare(`SELECT ${reason} AS reason, count(*) AS n FROM runs WHERE run_context = 'main' AND received_at >= ?
    AND arms = ? AND ${payload} = ? GROUP BY 1`).all(since, arms, Number(payloadBytes));
}

/**
 * Group number n (from 1) as the BLOB literal the core reads in front of a run's record: kGroupNumberBytes bytes,
 * little-endian (wasm/core/report.hpp): x'0100' for the first.
 */
export const groupNumberSql = (n) => `x'${(n & 0xff).toString(16).padStart(2, '0')}${(n >> 8).toString(16).padStart(2, '0')}'`;

/**
 * Throws unless a report can hold `count` groups of a split (the core's limit, schema.limits.maxReportGroups); a
 * pooled split's message says how to pool more.
 */
export function checkGroupCount(by, count, schema, pooled = false) {
  const max = schema.limits.maxReportGroups;
  if (count > max) throw new Error(`too many distinct values of ${by} (${count}; at most ${max})${pooled ? ': raise --min-network-runs' : ''}`);
}

/**
 * A grouping's value of a run as SQL: `then(i)` for the i-th name of `named` (each a ? parameter, in order), `otherwise`
 * (SQL; null: NULL) for any other value. With no name listed, `otherwise` alone: a CASE needs a WHEN, and a store whose
 * every network is pooled (a young one, by network) lists none.
 */
export function groupCaseSql(grouping, named, then, otherwise = null) {
  if (!named.length) return otherwise ?? 'NULL';
  return `CASE coalesce(${grouping.sql}, 'unknown') ${named.map((_, i) => `WHEN ? THEN ${then(i)}`).join(' ')}${otherwise ? ` ELSE ${otherwise}` : ''} END`;
}

/**
 * The payload mode of a run_records row `c` in SQL: its column, or 0 in a store that no collector of the payload mode
 * has opened yet (it holds no-op runs only).
 */
export function payloadModeSql(db) {
  return db.prepare("SELECT 1 FROM pragma_table_info('run_records') WHERE name = 'payload_bytes'").get() ? 'c.payload_bytes' : '0';
}

/** Throws unless minGroupRuns is a whole number of runs, at least 1. */
export function checkMinGroupRuns(minGroupRuns) {
  if (!Number.isInteger(minGroupRuns) || minGroupRuns < 1) throw new Error(`--min-network-runs wants a whole number of runs, at least 1, got "${minGroupRuns}"`);
}

/** The payload mode a report reads: a whole number of bytes from 0 (the no-op) to the core's limit. Throws otherwise. */
export function checkPayloadBytes(payloadBytes, schema) {
  const max = schema.limits.maxPayloadBytes;
  if (!Number.isInteger(payloadBytes) || payloadBytes < 0 || payloadBytes > max) {
    throw new Error(`--payload-bytes must be a whole number from 0 (the no-op) to ${max}, got "${payloadBytes}"`);
  }
}

/** '2024-05-01' or a full ISO date-time; '' means everything. Throws on anything else. */
export function normalizeSince(since) {
  if (since === undefined || since === null || since === '') return '';
  const d = new Date(since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(d.getTime())) throw new Error(`--since wants a date like 2024-05-01, got "${since}"`);
  return d.toISOString();
}
