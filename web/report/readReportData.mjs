// Reads what the report needs from the collector's SQLite store: the region names and, for every selected run, its
// record (the C++ core wrote it when the beacon was stored: counts by class, and the chosen metric's usable values of
// each arm) prefixed with its region's number, concatenated by SQLite itself. It reads the two narrow tables
// run_records and arm_values, no run or request row: the C++ core then does all the counting and statistics
// (buildReport.mjs).

import { DOCTOR_ID } from './doctorBeacon.mjs';

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
  // Its label ("AS15169 Google LLC"), networkLabel() of web/server/networkFor.mjs, stored with the run by the collector.
  network: { what: 'the autonomous system announcing the client address: "AS15169 Google LLC"', pooled: true, sql: 'c.network' },
});

/** The group that pools the values of a `pooled` grouping with fewer runs than minGroupRuns. */
export const OTHER_GROUP = 'other';

/**
 * A pooled grouping's groups: those with at least minRuns runs by name, the rest pooled as OTHER_GROUP (its runs the
 * sum). counts: [{name, n}] sorted by name. Returns {shown: [{name, n}] (other last, when any), pooled: the number of
 * values pooled}.
 */
function poolGroups(counts, minRuns) {
  const shown = counts.filter((g) => g.n >= minRuns);
  const rest = counts.filter((g) => g.n < minRuns);
  if (rest.length) shown.push({ name: OTHER_GROUP, n: rest.reduce((s, g) => s + g.n, 0) });
  return { shown, pooled: rest.length };
}

/**
 * db: the store's better-sqlite3 Database (openStore(), store.mjs). schema: core.schema(). Options: metric (one of
 * schema.metrics), since (ISO date or date-time: runs received at or after it), arms (the one arms mode read: A/B and
 * A/A runs are never pooled), by (one of GROUP_BY: what the groups are), minGroupRuns (a `pooled` grouping, network,
 * shows the values with at least this many runs and pools the rest as OTHER_GROUP; default the fewest runs for an
 * interval, schema.limits.minRunsForInterval), payloadBytes (the one payload mode read, 0 the no-op: runs of different
 * response sizes are never pooled either), daily (also the days: the daily series from the same pass), setup (each
 * record also carries the run's cold-setup record: the connection-setup view from the same pass).
 * Returns, for buildReport(), { metric, since, arms, by, storedRuns, received: {first, last} (ISO times), regions: [the
 * regions the runs came from], groups: [group names], daily, days: [day names] (daily; else []), setup, records: [Buffer] (the
 * records in chunks, in run order, laid out as the core's ReportRequest says), loadErrors: [{reason, error, n}] (the
 * load_error beacons received since, by reason and error text, over every arms mode: the gate that sends one knows no arms),
 * payloadBytes, payloadModes: [{bytes, runs}] (every payload mode stored for this arms mode since, the one read
 * included), mainThread: [{reason, n}] (the selected runs whose core ran on the page's main thread, by why they left
 * the Worker: context.worker_fallback, 'unknown' from a module older than it), outcomes: [{outcome, n}] (the selected
 * runs by how they ended: complete, deadline, stopped, error), armsModes: [{arms, recent (1: received since), n}] (every
 * run stored but the doctor's test beacon, by arms mode, '' for a load_error beacon), and for a pooled grouping pooled:
 * {minRuns, values (how many values went into OTHER_GROUP)} }.
 */
export function readReportData(db, schema, {
  metric = 'network_ms', since = '', arms = 'h2-h3', by = 'region', payloadBytes = 0,
  minGroupRuns = schema.limits.minRunsForInterval, daily = false, setup = false,
} = {}) {
  if (!schema.metrics.includes(metric)) throw new Error(`unknown metric "${metric}"; one of ${schema.metrics.join(', ')}`);
  const grouping = GROUP_BY[by];
  if (!Object.hasOwn(GROUP_BY, by)) throw new Error(`--by must be one of ${Object.keys(GROUP_BY).join(', ')}, got "${by}"`);
  const sinceIso = normalizeSince(since);
  checkPayloadBytes(payloadBytes, schema);
  // The doctor's test beacon is in no count (doctorBeacon.mjs): its run's number, or 0 when it is not stored.
  const doctorRun = db.prepare('SELECT rowid FROM runs WHERE run_id = ?').pluck().get(DOCTOR_ID) ?? 0;
  const mode = `c.arms = ? AND c.payload_bytes = ${Number(payloadBytes)} AND c.run != ${Number(doctorRun)}`;
  const join = grouping.runs ? 'JOIN runs r ON r.rowid = c.run' : '';
  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  // Runs per payload mode and region (and day, for the daily series), from the (arms, payload_bytes, region,
  // received_at) index alone: the payload modes stored, and of the mode read the regions, the days, the runs and the
  // dates received, in one walk. By payload mode and region SQLite walks the index in its order; by day too it sorts
  // (a third of the read, so only when the days are wanted).
  // The same walk counts the mode's runs received before `since` (the header's accounting): cells of those alone go.
  const walk = db.prepare(`SELECT c.payload_bytes AS bytes, c.region AS region, ${daily ? `${GROUP_BY.day.sql} AS day` : 'NULL AS day'},
    sum(c.received_at >= ?) AS n, count(*) AS stored, min(CASE WHEN c.received_at >= ? THEN c.received_at END) AS first,
    max(c.received_at) AS last FROM run_records c WHERE c.arms = ? AND c.run != ${Number(doctorRun)}
    GROUP BY c.payload_bytes, c.region${daily ? ', day' : ''}`).all(sinceIso, sinceIso, arms);
  const all = walk.filter((c) => c.n > 0);
  const cells = all.filter((c) => c.bytes === Number(payloadBytes));
  const payloadModes = [...all.reduce((m, c) => m.set(c.bytes, (m.get(c.bytes) ?? 0) + c.n), new Map())]
    .map(([bytes, runs]) => ({ bytes, runs })).sort((a, b) => a.bytes - b.bytes);
  const countsOf = (key) => {
    const counts = new Map();
    for (const cell of cells) counts.set(cell[key] ?? 'unknown', (counts.get(cell[key] ?? 'unknown') ?? 0) + cell.n);
    return [...counts].map(([name, n]) => ({ name, n })).sort(byName);
  };
  const byRegion = countsOf('region');
  let byGroup = by === 'region' || (by === 'day' && daily) ? countsOf(by)
    : db.prepare(`SELECT coalesce(${grouping.sql}, 'unknown') AS name, count(*) AS n FROM run_records c ${join}
      WHERE ${mode} AND c.received_at >= ? GROUP BY name`).all(arms, sinceIso).sort(byName);
  let pooled = null;
  if (grouping.pooled) {
    checkMinGroupRuns(minGroupRuns);
    const { shown, pooled: values } = poolGroups(byGroup, minGroupRuns);
    byGroup = shown;
    pooled = { minRuns: minGroupRuns, values };
  }
  // The group and day numbers in front of each record count up to the core's limit.
  checkGroupCount(by, byGroup.length, schema, grouping.pooled);
  const days = daily ? countsOf('day').map((d) => d.name) : [];
  checkGroupCount('day', days.length, schema);
  const groups = byGroup.map((r) => r.name);
  const storedRuns = byRegion.reduce((s, r) => s + r.n, 0);

  // Each a query of its own: SQLite reads a min() or max() alone from the key's ends, not from every row.
  const lo = db.prepare('SELECT min(run) FROM run_records').pluck().get() ?? 1;
  const hi = db.prepare('SELECT max(run) FROM run_records').pluck().get() ?? 0;
  // A value's number among names (each a ? parameter); with otherLast, any value not listed is the last name's. No
  // name at all (no run) is 0; every value pooled (a young store by network) the last name's, with no CASE (it needs a
  // WHEN).
  const numbered = (sql, names, otherLast) => {
    const listed = otherLast ? names.slice(0, -1) : names;
    if (!listed.length) return groupNumberSql(names.length);
    return `CASE coalesce(${sql}, 'unknown') ${listed.map((_, i) => `WHEN ? THEN ${groupNumberSql(i + 1)}`).join(' ')}${otherLast ? ` ELSE ${groupNumberSql(names.length)}` : ''} END`;
  };
  // Pooled values fall to ELSE: the last group, OTHER_GROUP.
  const otherLast = Boolean(pooled?.values);
  const prefix = [numbered(grouping.sql, groups, otherLast), ...(daily ? [numbered(GROUP_BY.day.sql, days, false)] : [])];
  const params = [...(otherLast ? groups.slice(0, -1) : groups), ...days];
  // || and group_concat keep a BLOB's bytes as they are; the CAST hands the result to JavaScript as one Buffer.
  const chunk = db.prepare(`SELECT CAST(group_concat(${[...prefix, 'c.arm_counts', 'v.arm_values', ...(setup ? ['c.setup'] : [])].join(' || ')}, '') AS BLOB)
    FROM run_records c JOIN arm_values v ON v.metric = ? AND v.run = c.run ${join}
    WHERE c.run BETWEEN ? AND ? AND c.received_at >= ? AND ${mode}`).pluck();
  const metricCode = schema.metrics.indexOf(metric);
  const parts = [];
  for (let from = lo; from <= hi; from += CHUNK_RUNS) {
    const bytes = chunk.get(...params, metricCode, from, Math.min(hi, from + CHUNK_RUNS - 1), sinceIso, arms);
    if (bytes) parts.push(bytes);
  }
  return { metric, since: sinceIso, arms, by, payloadBytes, payloadModes, storedRuns,
    received: { first: cells.length ? cells.map((c) => c.first).sort()[0] : null, last: cells.length ? cells.map((c) => c.last).sort().at(-1) : null },
    regions: byRegion.map((r) => r.name), groups, daily, days, setup, records: parts, ...(pooled ? { pooled } : {}),
    // By reason and the error text each beacon gave, for the report to name the most frequent text beside its reason.
    loadErrors: db.prepare(`SELECT reason, error, count(*) AS n FROM runs WHERE outcome = 'load_error' AND received_at >= ?
      GROUP BY reason, error`).all(sinceIso),
    testBeacons: db.prepare('SELECT count(*) FROM runs WHERE run_id = ? AND received_at >= ?').pluck().get(DOCTOR_ID, sinceIso),
    mainThread: readMainThread(db, { arms, payloadBytes, since: sinceIso }),
    outcomes: readOutcomes(db, { arms, payloadBytes, since: sinceIso, storedRuns }),
    // Every run stored but the doctor's, by arms mode ('' for a load_error beacon) and whether received since: the
    // header's accounting (notReadText()). This mode's from the walk above; the others' from the index on either side
    // of it (two ranges: one OR would walk the whole index).
    armsModes: [{ arms, recent: 1, n: all.reduce((sum, c) => sum + c.n, 0) }, { arms, recent: 0, n: walk.reduce((sum, c) => sum + c.stored - c.n, 0) },
      ...db.prepare(['<', '>'].map((op) => `SELECT arms, received_at >= ? AS recent, count(*) AS n FROM run_records
        WHERE arms ${op} ? AND run != ? GROUP BY arms, recent`).join(' UNION ALL ')).all(sinceIso, arms, doctorRun, sinceIso, arms, doctorRun)
        .map((r) => ({ arms: r.arms ?? '', recent: Number(r.recent), n: r.n }))] };
}

/**
 * The runs of an arms mode and payload mode received since `since` by how they ended: [{outcome, n}], complete being
 * the rest of storedRuns. From the store's partial indexes of the runs that did not complete and of the load errors,
 * not from every run row.
 */
function readOutcomes(db, { arms, payloadBytes, since, storedRuns }) {
  const args = [since, arms, Number(payloadBytes), DOCTOR_ID];
  const unfinished = [...db.prepare(`SELECT outcome, count(*) AS n FROM runs WHERE outcome IN ('deadline', 'stopped', 'error')
    AND received_at >= ? AND arms = ? AND coalesce(payload_bytes, 0) = ? AND run_id != ? GROUP BY outcome`).all(...args),
  // A gate that knew its config's arms names them in its load_error beacon: such a run is of this arms mode too.
  ...db.prepare(`SELECT outcome, count(*) AS n FROM runs WHERE outcome = 'load_error' AND received_at >= ? AND arms = ?
    AND coalesce(payload_bytes, 0) = ? AND run_id != ? GROUP BY outcome`).all(...args)];
  return [{ outcome: 'complete', n: storedRuns - unfinished.reduce((sum, r) => sum + r.n, 0) }, ...unfinished];
}

/**
 * The runs of an arms mode and payload mode received since `since` whose core ran on the page's main thread, by why
 * they left the Worker: [{reason, n}]. From the runs table (the run_records of the report hold no context), through
 * the store's partial index of such runs.
 */
function readMainThread(db, { arms, payloadBytes, since }) {
  return db.prepare(`SELECT coalesce(nullif(worker_fallback, ''), 'unknown') AS reason, count(*) AS n FROM runs
    WHERE run_context = 'main' AND received_at >= ? AND arms = ? AND coalesce(payload_bytes, 0) = ? GROUP BY 1`).all(since, arms, Number(payloadBytes));
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
