// Reads what the report needs from the collector's SQLite store: the region names and, for every selected run, its
// record (the C++ core wrote it when the beacon was stored: counts by class, and the chosen metric's usable values of
// each arm) prefixed with its region's number, concatenated by SQLite itself. It reads the two narrow tables
// run_records and arm_values, no run or request row: the C++ core then does all the counting and statistics
// (buildReport.mjs).

// Runs per query: the concatenated records of this many runs are one BLOB (~200 bytes a run).
const CHUNK_RUNS = 16384;
// The region number is one byte in front of each record.
const MAX_REGIONS = 250;

/**
 * db: a better-sqlite3 Database holding the store's tables. schema: core.schema(). Options: metric (one of
 * schema.metrics), since (ISO date or date-time: runs received at or after it), arms (the one arms mode read: A/B and
 * A/A runs are never pooled).
 * Returns { metric, since, arms, storedRuns, received: {first, last} (ISO times), regions: [names], records: [Buffer]
 * } (the records in chunks, in run order).
 */
export function readReportData(db, schema, { metric = 'network_ms', since = '', arms = 'h2-h3' } = {}) {
  if (!schema.metrics.includes(metric)) throw new Error(`unknown metric "${metric}"; one of ${schema.metrics.join(', ')}`);
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_records'").get()) {
    throw new Error('this database was written by an older collector: open it once with the store (npm run export does) to rebuild it');
  }
  const sinceIso = normalizeSince(since);
  // Grouped by the bare column, so that SQLite walks the (arms, region, received_at) index in order instead of sorting
  // 420k rows in a temporary B-tree (a third of the read); a run without a region counts as "unknown".
  const counts = new Map();
  for (const { region, n } of db.prepare(`SELECT region, count(*) AS n FROM run_records
    WHERE arms = ? AND received_at >= ? GROUP BY region`).all(arms, sinceIso)) {
    const name = region ?? 'unknown';
    counts.set(name, (counts.get(name) ?? 0) + n);
  }
  const byRegion = [...counts].map(([name, n]) => ({ name, n })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (byRegion.length > MAX_REGIONS) throw new Error(`too many distinct regions (${byRegion.length})`);
  const regions = byRegion.map((r) => r.name);
  const storedRuns = byRegion.reduce((s, r) => s + r.n, 0);
  // The dates the selected runs were received on (the same index).
  const range = db.prepare(`SELECT min(received_at) AS first, max(received_at) AS last FROM run_records
    WHERE arms = ? AND received_at >= ?`).get(arms, sinceIso);

  const { lo, hi } = db.prepare('SELECT coalesce(min(run), 1) AS lo, coalesce(max(run), 0) AS hi FROM run_records').get();
  // The region's number as a one-byte BLOB literal per region: x'01' for the first, and so on.
  const regionByte = regions.length
    ? `CASE coalesce(c.region, 'unknown') ${regions.map((_, i) => `WHEN ? THEN x'${(i + 1).toString(16).padStart(2, '0')}'`).join(' ')} END`
    : "x'00'";
  // || and group_concat keep a BLOB's bytes as they are; the CAST hands the result to JavaScript as one Buffer.
  const chunk = db.prepare(`SELECT CAST(group_concat(${regionByte} || c.arm_counts || v.arm_values, '') AS BLOB)
    FROM run_records c JOIN arm_values v ON v.metric = ? AND v.run = c.run
    WHERE c.run BETWEEN ? AND ? AND c.received_at >= ? AND c.arms = ?`).pluck();
  const metricCode = schema.metrics.indexOf(metric);
  const parts = [];
  for (let from = lo; from <= hi; from += CHUNK_RUNS) {
    const bytes = chunk.get(...regions, metricCode, from, Math.min(hi, from + CHUNK_RUNS - 1), sinceIso, arms);
    if (bytes) parts.push(bytes);
  }
  return { metric, since: sinceIso, arms, storedRuns, received: { first: range.first ?? null, last: range.last ?? null },
    regions, records: parts };
}

/** '2024-05-01' or a full ISO date-time; '' means everything. Throws on anything else. */
export function normalizeSince(since) {
  if (since === undefined || since === null || since === '') return '';
  const d = new Date(since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(d.getTime())) throw new Error(`--since wants a date like 2024-05-01, got "${since}"`);
  return d.toISOString();
}
