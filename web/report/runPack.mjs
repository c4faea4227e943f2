// The one rule that decides whether a measured request is usable in its arm or why it is excluded, in the two forms the
// report needs side by side so they cannot drift apart: statusSql() (the SQL CASE the row scan in scanRuns.mjs runs over the
// requests table) and requestStatus() (the same rule in JavaScript, which packRun() applies when a beacon is stored).
// packRun() is the write-time packing of one run for the default metric network_ms: the usable samples of each arm as
// little-endian Float64 BLOBs in idx order and the run's counts as a small Int32 BLOB, stored in the runs row so that the
// report reads one row per run instead of every request row (see scanRuns.mjs, fast path). Pure: no database here.

/** Why a measured request is not in its arm, in the order the table shows them. */
export const EXCLUSIONS = Object.freeze(['fallback', 'timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry',
  'aborted', 'missing_metric', 'other']);

/** Bumped whenever what packRun() stores changes; the report only trusts rows packed with this version. 2: sample counts. */
export const PACK_VERSION = 2;
/** The metric the packed columns hold. */
export const PACKED_METRIC = 'network_ms';
/**
 * Layout of the counts BLOB (Int32, little-endian): measured requests, fallback denominator, the number of samples in
 * h2_network and in h3_network, then the exclusions in EXCLUSIONS order.
 */
export const COUNTS_LENGTH = 4 + EXCLUSIONS.length;

// Results with their own exclusion; status = 1 + index in EXCLUSIONS, 0 = usable.
const RESULT_STATUS = ['timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry', 'aborted'];
const FALLBACK = 1;
const MISSING_METRIC = EXCLUSIONS.indexOf('missing_metric') + 1;
const OTHER = EXCLUSIONS.indexOf('other') + 1;
const RESULT_CODE = new Map(RESULT_STATUS.map((r, i) => [r, EXCLUSIONS.indexOf(r) + 1]));

/**
 * The status of a measured request (alias q) as a SQL expression: 0 usable, else 1 + the index of its reason in EXCLUSIONS.
 * The common case (ok over the arm's own protocol) is settled by the first comparisons.
 */
export function statusSql(metric, q = 'q') {
  return `CASE WHEN ${q}.result = 'ok' THEN
        CASE WHEN ${q}.protocol = (CASE ${q}.phase WHEN 'control' THEN 'h2' ELSE 'h3' END)
          THEN (CASE WHEN ${q}.${metric} IS NULL THEN ${MISSING_METRIC} ELSE 0 END)
          ELSE ${FALLBACK} END
      ELSE CASE ${q}.result ${RESULT_STATUS.map((r) => `WHEN '${r}' THEN ${RESULT_CODE.get(r)}`).join(' ')}
        ELSE ${OTHER} END
      END`;
}

/**
 * The same rule over a request row as the store writes it (phase 'control' or 'treatment'; result, protocol as stored;
 * value: the metric, a number or null). SQL's NULL comparisons are never true, and strict equality with a string is
 * never true for null either, so the two agree on missing fields too.
 */
export function requestStatus(phase, result, protocol, value) {
  if (result === 'ok') {
    if (protocol !== (phase === 'control' ? 'h2' : 'h3')) return FALLBACK;
    return isStoredNull(value) ? MISSING_METRIC : 0;
  }
  return RESULT_CODE.get(result) ?? OTHER;
}

// SQLite stores NaN as NULL.
const isStoredNull = (v) => v === null || v === undefined || Number.isNaN(v);

/**
 * Packs one run's request rows (objects with phase, idx, result, protocol, network_ms, as stored) for the runs row:
 * { packed_version, h2_network, h3_network, packed_counts } (Buffers). Only control and treatment rows count, as in the scan.
 */
export function packRun(rows) {
  const counts = new Int32Array(COUNTS_LENGTH);
  const arms = [[], []];
  for (const row of rows) {
    const { phase } = row;
    if (phase !== 'control' && phase !== 'treatment') continue;
    const arm = phase === 'treatment' ? 1 : 0;
    const st = requestStatus(phase, row.result, row.protocol, row[PACKED_METRIC]);
    counts[0]++;
    if (arm === 1 && st <= 1) counts[1]++;
    if (st === 0) arms[arm].push(row);
    else counts[3 + st]++;
  }
  counts[2] = arms[0].length;
  counts[3] = arms[1].length;
  return {
    packed_version: PACK_VERSION,
    h2_network: armBlob(arms[0]),
    h3_network: armBlob(arms[1]),
    packed_counts: Buffer.from(counts.buffer, counts.byteOffset, counts.byteLength),
  };
}

// The row scan sees an arm's requests in the order of the requests table's key (run_id, phase, idx).
function armBlob(rows) {
  if (rows.length > 1) rows.sort((a, b) => compareSqlite(a.idx, b.idx));
  const out = Buffer.allocUnsafe(rows.length * 8);
  // -0 is stored by SQLite as 0.
  for (let i = 0; i < rows.length; i++) out.writeDoubleLE(rows[i][PACKED_METRIC] + 0, i * 8);
  return out;
}

// SQLite's order of values: NULL, then numbers, then text.
function compareSqlite(a, b) {
  const rank = (v) => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) return a - b;
  return a < b ? -1 : a > b ? 1 : 0;
}

