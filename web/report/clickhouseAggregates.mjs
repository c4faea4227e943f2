// Aggregates computed inside ClickHouse (the store's run_records table, clickhouseSchema.mjs) for the C++ inference
// (core.inferReport, wasm/core/report_aggregates.cpp): no value leaves the database, only counts, sums and the few
// order statistics the inference asks for. One source: its samples' columns and its rows are parameters, so the
// report (a metric's values per arm) and the connection-setup view (each run's cold HTTP/2 and HTTP/3 value per setup
// metric) read through the same passes, and one source serves several groupings at once (the report's `by` and the
// daily series' days): every pass reads the table once for all of them. The passes (docs/clickhouse.md):
//   1. counts per cell (a cell: one value of every grouping's key, and the day received): runs, requests by arm and
//      class, missing values, and per sample column values and runs per arm, paired runs, Σ N² per arm and Σ N2 N3,
//      and the exact sums of the paired within-run differences (their limbs, exactLimbsSql(); per order); a group's and
//      overall's are the sums of their cells';
//   2. a histogram per group, column and sample (h2 values, h3 values, paired differences) over 2^24 order-preserving
//      buckets of the float64 (its sign, exponent and 12 mantissa bits), each bucket with its count, least and greatest
//      value and the sums of the weights below (a single-valued source's, the connection-setup view's, per distinct
//      value: 3 is then never needed); overall's is the sum of the first grouping's groups';
//   3. for the ranks the inference asks (the type-7 estimates: floor((N-1)p) and the next) that fall in a bucket of
//      several values, and the buckets within reach of the estimates' interval bounds, the distinct values with their
//      counts and weights, from which each rank's value is read exactly;
//   4. the sums at a threshold q the inference asks (an estimate): Σ S, Σ S², Σ S N, Σ S2 N3, Σ N2 S3 (S: a run's values
//      at or below q, N: its values) are weighted counts of the values at or below q (weights 1, 2r - 1 for the value of
//      rank r in its run, N, the other arm's N), read from the histograms and the fetched buckets: no query;
//   5. Σ S2 S3 at each pair of estimates, per run (arrayCount), summed per cell.
// Groups are numbered in SQL (transform() of the key to its index), so the per-value passes hash small integers, not
// texts. Exact throughout: thresholds go into SQL as the float64's bytes in hex (float64Sql()), never as decimal text,
// values come back in ClickHouse's shortest round-trip form, and the differences' sums are whole numbers. 18.16 has no
// exact multi-rank quantile that avoids a sort per group (quantilesExact runs nth_element once per level, and the CDF
// asks ~300 levels), hence 2 and 3.
import { classCountColumns } from '../server/clickhouseSchema.mjs';
import { CLICKHOUSE_GROUP_BY, RUN_RECORDS, SUMMARY_GROUP_BY, exactKeysSql, exactLimbsSql, momentSums, pairedSql, runValueTuplesSql, sqlString,
  valueMomentSums } from '../server/clickhouseRunSql.mjs';
import { GROUP_BY, OTHER_GROUP, checkGroupCount, checkMinGroupRuns } from './readReportData.mjs';
import { DOCTOR_ID } from './doctorBeacon.mjs';


export { CLICKHOUSE_GROUP_BY };

// A cell's sums per sample column, each summed over runs (the counts pass's a_… and their …_c): values and runs per
// arm, differences (pr: runs with a paired difference), paired runs (pb: values in both arms), Σ N², Σ N2 N3, missing.
const CELL_SUMS = Object.freeze(['nC', 'rC', 'nT', 'rT', 'pr', 'pb', 'qC', 'qT', 'qCT', 'miss']);

// The failure sums of a run (failure_rate.hpp, fields(FailureSums) in report_aggregates.hpp), in that order.
const FAILURE_SUMS = Object.freeze(['runs', 'f2', 'n2', 'f3', 'n3', 'f2f2', 'f2n2', 'n2n2', 'f3f3', 'f3n3', 'n3n3', 'f2f3', 'f2n3', 'n2f3', 'n2n3']);

/**
 * Each failure sum of one run as SQL over run_records' counts by class: F per arm its requests of role failed, N those
 * that hold a value (schema().requestClasses), both 0 unless the run is of the estimand (bit). [[name, expression]].
 */
function failureSumsSql(schema, bit) {
  const arm = (a, keep) => `(${schema.requestClasses.filter(keep).map((c) => `${a}_${c.name}`).join(' + ') || '0'})`;
  const on = `toUInt64(bitAnd(estimands, ${Number(bit)}) != 0)`;
  const v = { f2: arm('control', (c) => c.role === 'failed'), n2: arm('control', (c) => c.holdsValue),
    f3: arm('treatment', (c) => c.role === 'failed'), n3: arm('treatment', (c) => c.holdsValue) };
  return FAILURE_SUMS.map((name) => [name, name === 'runs' ? on : `${on} * ${name.match(/[fn][23]/g).map((x) => v[x]).join(' * ')}`]);
}

/** A float64 into SQL exactly (and cheaply for the parser): its bytes in hex; NaN for undefined. */
function float64Sql(x) {
  if (x === undefined) return 'nan';
  const b = Buffer.alloc(8);
  b.writeDoubleLE(x);
  return `reinterpretAsFloat64(unhex('${b.toString('hex')}'))`;
}

/**
 * A pooled grouping's expression (GROUP_BY's `pooled` in readReportData.mjs): its value when shown is one of `shown`,
 * else OTHER_GROUP. The shown values go into the SQL as a literal array for has(): 18.16 takes neither IN (a list or a
 * subquery) inside a UNION ALL nor a scalar subquery over Distributed tables. exprs: the groupings' expressions
 * (SUMMARY_GROUP_BY for the value summary).
 */
export function pooledGroupExpr(by, shown, exprs = CLICKHOUSE_GROUP_BY) {
  const e = exprs[by];
  return `if(has(${shown.length ? `[${shown.map(sqlString).join(', ')}]` : 'emptyArrayString()'}, ${e}), ${e}, ${sqlString(OTHER_GROUP)})`;
}

// The most numbers a query lists to pick keys (inListSql()): about 16 characters each, so that two such lists and the
// rest of a query stay well under ClickHouse's max_query_size (256 KiB by default), which a readonly=1 user may not raise.
export const MAX_LISTED_KEYS = 3000;

/**
 * A filter that holds for every one of keys (non-negative integers below 2^53, as the SQL expression expr computes
 * them) in a query text of bounded length: expr IN (the keys) when they are at most MAX_LISTED_KEYS, else the blocks of
 * 2^k consecutive keys that hold them (bitShiftRight(expr, k) IN (…)), k the least that needs at most MAX_LISTED_KEYS
 * blocks. A superset: the caller keeps only the keys it asked for (a block's other keys cost rows returned, not
 * correctness). Neither query parameters nor external data replace it: 18.16 takes no {name:Type} parameter, and a
 * readonly=1 user may send neither a param_ nor a setting.
 */
export function inListSql(expr, keys) {
  let shift = 0;
  let blocks = [...new Set(keys)];
  while (blocks.length > MAX_LISTED_KEYS) {
    shift++;
    const div = 2 ** shift;
    blocks = [...new Set(keys.map((k) => Math.floor(k / div)))];
  }
  blocks.sort((a, b) => a - b);
  return `${shift ? `bitShiftRight(${expr}, ${shift})` : expr} IN (${blocks.join(', ') || 'NULL'})`;
}

/**
 * The run_records a report reads (pass: queryRecorder()'s): with FINAL (RUN_RECORDS) when the table holds a run twice
 * that its merges have not folded yet (two collectors both wrote it), else the table as it is. FINAL merges every
 * part in one stream on 18.16 and made a 420,000-run report 4× the CPU (docs/record/clickhouse.md); copies are rare and
 * their parts are small and recent, so merges fold them soon. One query: the rows, less the rows read FINAL (only the
 * sorting key's columns are read and merged).
 */
export async function runRecordsOnce(pass) {
  const [r] = await pass('copies', `SELECT (SELECT count() FROM run_records) - (SELECT count() FROM ${RUN_RECORDS}) AS copies`);
  return Number(r.copies) > 0 ? RUN_RECORDS : 'run_records';
}

/**
 * pass(name, sql, {tsv, exact}) → the rows (JSON; exact: 64-bit integers as texts), or the text (TabSeparated): runs a
 * query on client with a query_id of its own (its row in system.query_log) and pushes { name, queryId, ms (as Node saw
 * it), sqlLength (its text's length) } onto passes.
 */
export function queryRecorder(client, passes) {
  const tag = `h3probe-report-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return async function pass(name, sql, { tsv = false, exact = false } = {}) {
    const queryId = `${tag}-${passes.length + 1}-${name}`;
    const t = performance.now();
    // No setting but the query_id (a handler parameter): the passes' texts are bounded (inListSql()), so they fit the
    // server's max_query_size, which a readonly=1 user may not raise.
    const settings = { query_id: queryId };
    const out = tsv ? await client.query(`${sql}\nFORMAT TabSeparated`, { settings, read: true }) : await client.json(sql, { settings, exact });
    passes.push({ name, queryId, ms: performance.now() - t, sqlLength: sql.length });
    return out;
  };
}

// The columns of a TabSeparated answer of numbers, each a Float64Array.
function tsvColumns(text, ncols) {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const cols = Array.from({ length: ncols }, () => new Float64Array(lines.length));
  lines.forEach((line, r) => {
    let at = 0;
    for (let c = 0; c < ncols; c++) {
      const tab = line.indexOf('\t', at);
      const end = tab < 0 ? line.length : tab;
      cols[c][r] = Number(line.slice(at, end));
      at = end + 1;
    }
  });
  return cols;
}

// A histogram from its buckets in order (b) and their [count, w, n, o, lo, hi]; below[f][i]: the sum of field f over
// the buckets before bucket i (i up to their number).
function histogram(b, [count, w, n, o, lo, hi]) {
  const below = [count, w, n, o].map((f) => {
    const out = new Float64Array(f.length + 1);
    for (let i = 0; i < f.length; i++) out[i + 1] = out[i] + f[i];
    return out;
  });
  return { b, count, w, n, o, lo, hi, below };
}

// Two histograms (histogram(), either may be null) as one: each bucket's count and weights summed, its least and
// greatest values kept.
function mergeHistograms(x, y) {
  if (!x || !y) return x ?? y ?? null;
  const out = [[], [], [], [], [], [], []];  // b, count, w, n, o, lo, hi
  const fields = ['count', 'w', 'n', 'o'];
  let i = 0;
  let j = 0;
  while (i < x.b.length || j < y.b.length) {
    const bx = i < x.b.length ? x.b[i] : Infinity;
    const by = j < y.b.length ? y.b[j] : Infinity;
    const b = Math.min(bx, by);
    out[0].push(b);
    fields.forEach((f, k) => out[k + 1].push((bx === b ? x[f][i] : 0) + (by === b ? y[f][j] : 0)));
    out[5].push(Math.min(bx === b ? x.lo[i] : Infinity, by === b ? y.lo[j] : Infinity));
    out[6].push(Math.max(bx === b ? x.hi[i] : -Infinity, by === b ? y.hi[j] : -Infinity));
    if (bx === b) i++;
    if (by === b) j++;
  }
  return histogram(Float64Array.from(out[0]), out.slice(1).map((c) => Float64Array.from(c)));
}

// Bucket i of a histogram as one object.
function entry(h, i) {
  return { b: h.b[i], count: h.count[i], w: h.w[i], n: h.n[i], o: h.o[i], lo: h.lo[i], hi: h.hi[i], start: h.below[0][i] };
}

/**
 * client: clickhouseClient(url, {database}). schema: core.schema(). Options:
 *   columns: the samples, [{ C, T, missing }]: C and T Array(Float64) expressions over run_records (a run's usable
 *     values of a metric in each arm; for the connection-setup view, its cold HTTP/2 and HTTP/3 value), missing a
 *     count of usable requests without a value (optional); each column's aggregates are a report of their own; single:
 *     every array holds one value at most (the view's), which spares the SQL its sorts and the histograms their buckets;
 *   from: the table the runs are read from (default RUN_RECORDS, run_records FINAL; a subquery over it that adds columns, such as
 *     another estimand's values, for C and T to name: 18.16 resolves no expression but a column inside the lambdas);
 *   where: the rows read (SQL over run_records: arms mode, payload mode, received since, …);
 *   estimandBit: the report's estimand (schema().estimands' bit): its runs' failure sums (failure_rate.hpp) from their
 *     counts by class; null: none (the connection-setup view);
 *   summary: the value summary run_values' rows of the one column's values (`arms = … AND payload_bytes = … AND metric
 *     = …`), read for each day and region whose totals there equal run_records' (readSummary false: none); null: every
 *     value from run_records;
 *   classes: count requests by arm and class (default true; the view's records have none); orders: split the paired
 *     differences by the run's order (default true; the view's pre-warm has one order);
 *   sets: the groupings, each one of CLICKHOUSE_GROUP_BY (a report's `by`, then 'day' for its daily series);
 *     minGroupRuns: a pooled grouping's fewest runs of a shown value (GROUP_BY's `pooled` in readReportData.mjs;
 *     default the fewest runs for an interval); shown: {[grouping]: [values]}, a pooled grouping's shown values as
 *     another source found them (its other values are OTHER_GROUP) instead of a pool pass of its own;
 *   cumulative: sets ['day'] only: the daily series' looks, each day's group holding every run received up to the end
 *     of that day (the overall group is then left empty: it would count a run once per look, and is not read);
 *   now: the clock (ms), whose UTC day is read from run_records, not the summary; countsFrom: another source over the
 *     same runs, started, whose groupings include this one's but the day: its counts pass's cells are this one's,
 *     merged, instead of a counts pass of its own; passes: the list to record each query in ({ name, queryId (its row
 *     in system.query_log), ms }; default a new one).
 * Returns { passes, start() → one { storedRuns, received, by, regions, groups, pooled?, shown, aggregates: [one per
 * column] } per set, fill(aggregates, needs, estimates) (each a list, one entry per set and column: set i's column c
 * at i * columns + c; needs null when done; estimates: the probabilities whose estimates get intervals), countCells() }.
 */
export function clickhouseAggregateSource(client, schema, {
  columns, single = false, from = RUN_RECORDS, where, estimandBit = null, summary = null, readSummary = true, classes = true, orders = true, sets = ['region'],
  minGroupRuns = schema.limits.minRunsForInterval, shown = {}, cumulative = false, now = Date.now(), countsFrom = null, passes = [],
} = {}) {
  for (const by of sets) {
    if (!Object.hasOwn(CLICKHOUSE_GROUP_BY, by)) {
      throw new Error(`--by ${by}: the ClickHouse store splits by ${Object.keys(CLICKHOUSE_GROUP_BY).join(' or ')} (the SQLite store by every grouping)`);
    }
  }
  if (cumulative && (sets.length !== 1 || sets[0] !== 'day')) throw new Error('cumulative groups are days');
  if (summary && columns.length !== 1) throw new Error('the value summary holds one column\'s values');
  if (single && classes) throw new Error('a single-valued source counts no classes');
  const pass = queryRecorder(client, passes);
  // The distinct keys the passes group by (the region always: the verdict reads the regions whatever the split).
  const keys = [...new Set([...sets, 'region'])];
  const keyOf = sets.map((by) => keys.indexOf(by));
  const grouped = [...new Set(keyOf)];  // the keys whose groups get histograms and sums
  // Each key's expression over run_records and over the value summary; a pooled key's are set in start(), once its
  // shown values are known.
  const expr = Object.fromEntries(keys.map((k) => [k, CLICKHOUSE_GROUP_BY[k]]));
  const summaryExpr = Object.fromEntries(keys.map((k) => [k, SUMMARY_GROUP_BY[k]]));
  const pooledOf = {};
  if (keys.some((k) => GROUP_BY[k]?.pooled)) checkMinGroupRuns(minGroupRuns);
  const classList = classCountColumns(schema);
  const order = orders ? "multiIf(run_order = 'h2-first', 0, run_order = 'h3-first', 1, 2)" : '2';
  // A bucket is the top 24 bits of a float64's 64 (its sign, exponent and 12 mantissa bits); a single-valued source's
  // (one value per run and column, so few) is one value, the value itself, so that no rank needs the values pass.
  const B = 2 ** 24;
  // Branch-free (multiIf evaluates slowly here): the magnitude's top bits, mirrored below zero (-1 - bits of -v).
  const bucket = (v) => `(toInt64(bitShiftRight(reinterpretAsUInt64(reinterpretAsString(abs(${v}))), 40)) * (1 - 2 * toInt64(${v} < 0))
    - toInt64(${v} < 0))`;

  // names[k]: the values of key k, in order; group j of key k (1-based) is names[k][j - 1]; its global id (the g of
  // the histogram and rank passes) offset[k] + j; 0 is overall; ids counts them all.
  let names = [];
  let offset = [];
  let ids = 1;
  let RR = '';  // run_records with each key's group number as g0, g1, …
  let RRcross = '';  // the same for the cross sums (cumulative: one row per look)
  // The value summary's rows of the (day, region) cells read from it, with the same group numbers (empty: none).
  let SV = '';
  // The run_records rows whose values the histogram and values passes read: those of the cells not read from SV.
  let rawCells = '';
  // The runs the counts saw, as far as one can tell: the passes after them leave out a run received later, or of a
  // group they did not see (the collector keeps inserting while a report runs).
  let counted = where;
  // `${c}/${gid}/${s}` → the histogram of column c's sample s in group gid (histogram()).
  const histograms = new Map();
  // `${c}/${gid}/${s}/${b}` → the bucket's distinct values, [{v, count, w, n, o}] ascending (buckets of several values).
  const cells = new Map();
  let countCells = [];  // the counts pass's cells as read, each with its keys by name (key), for countsFrom
  let squares = new Map();  // `${c}/${gid}` → the group's [Σ N_h2², Σ N_h3², Σ N_h2 N_h3], from the counts

  // Every value of the samples with its run's group number in each grouping (g0, g1, …), as the rows of
  // runValueTuplesSql(): c the column, s 0 = h2, 1 = h3, 2 = paired differences, b its bucket, cnt how many such values
  // the row stands for, and the weights for the sums at a threshold (see fillBelow): w = 2r - 1 for the value of rank
  // r among its run's values of that arm, n = that arm's number of values in the run, o = the other arm's (for a
  // difference: 1, 1, 0), summed over the cnt values. From the value summary for the cells it holds exactly (cnt, w,
  // n, o its sums), and one row per value of run_records for the others. sb: only the values whose
  // (c * 4 + s) * 2^24 + b + 2^23 is in this list.
  const valuesSql = (sb = null) => {
    const gs = grouped.map((k) => `g${k}`).join(', ');
    const only = sb ? `WHERE ${inListSql(`((c * 4 + s) * ${B} + b + ${B / 2})`, sb)}` : '';
    const parts = [];
    if (SV) parts.push(`SELECT ${gs}, toUInt8(0) AS c, s, v, ${bucket('v')} AS b, cnt, w, n, o FROM ${SV} ${only}`);
    const from = `FROM ${RR} WHERE ${counted} AND (${rawCells})`;
    if (rawCells && single) {
      // One value per arm at most: each run's values as one list of 3 per column (h2, h3, the difference; NaN: none)
      // and the other arm's count beside each (rank 1: w = n = 1).
      const one = (A) => `if(length(${A}) > 0, ${A}[1], nan)`;
      const vs = columns.flatMap(({ C, T }) => [one(C), one(T), `if(length(${C}) > 0 AND length(${T}) > 0, ${T}[1] - ${C}[1], nan)`]);
      const os = columns.flatMap(({ C, T }) => [`length(${T})`, `length(${C})`, '0']);
      parts.push(`SELECT ${gs}, toUInt8(intDiv(i - 1, 3)) AS c, toUInt8((i - 1) % 3) AS s, v, 0 AS b, toUInt64(1) AS cnt, cnt AS w, cnt AS n,
      toUInt64(x) AS o FROM (SELECT ${gs}, [${vs.join(', ')}] AS vs, [${os.join(', ')}] AS xs ${from})
      ARRAY JOIN vs AS v, xs AS x, arrayEnumerate(vs) AS i WHERE isFinite(v)`);
    } else if (rawCells) {
      const tuples = columns.map(({ C, T }, c) => `arrayMap(u -> (toUInt8(${c}), u.1, u.2, u.3, u.4, u.5), ${runValueTuplesSql(C, T, schema.limits.maxDurationMs)})`);
      parts.push(`SELECT ${gs}, t.1 AS c, t.2 AS s, t.3 AS v, ${bucket('t.3')} AS b, toUInt64(1) AS cnt, t.4 AS w, t.5 AS n, t.6 AS o
      FROM (SELECT ${gs}, ${[...new Set(columns.flatMap(({ C, T }) => [C, T]))].join(', ')} ${from})
      ARRAY JOIN arrayConcat(${tuples.join(', ')}) AS t ${only}`);
    }
    return parts.join('\n    UNION ALL ');
  };
  // A row's sample in each grouping, (c * ids + global group number) * 4 + s (a row with several groupings is counted
  // once in each), and its key, that * 2^24 + b + 2^23: one integer.
  const sampleSql = () => {
    const g = grouped.length === 1 ? `(${offset[grouped[0]]} + g${grouped[0]})`
      : `arrayJoin([${grouped.map((k) => `${offset[k]} + g${k}`).join(', ')}])`;
    return `((c * ${ids} + ${g}) * 4 + s)`;
  };
  const keySql = () => `${sampleSql()} * ${B} + b + ${B / 2}`;
  const keyOfBucket = (c, gid, s, b) => ((c * ids + gid) * 4 + s) * B + b + B / 2;
  const splitKey = (key) => {
    const b = (key % B) - B / 2;
    const rest = Math.floor(key / B);
    const cg = Math.floor(rest / 4);
    return { c: Math.floor(cg / ids), gid: cg % ids, s: rest % 4, b };
  };
  // The bucket of a value, as bucket() computes it in SQL (single: the value).
  const bucketOf = (v) => {
    if (single || v === 0) return v;
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(Math.abs(v));
    const b = Number(bytes.readBigUInt64LE() >> 40n);
    return v > 0 ? b : -1 - b;
  };

  async function start() {
    const measured = classList.map((c) => c.name).join(' + ');
    // A pooled key: the values with fewer than minGroupRuns selected runs become OTHER_GROUP.
    for (const k of keys.filter((key) => GROUP_BY[key]?.pooled)) {
      let values = shown[k];
      if (!values) {
        const counts = await pass(`pool-${k}`, `SELECT ${CLICKHOUSE_GROUP_BY[k]} AS name, count() AS n FROM ${from}
          WHERE ${where} GROUP BY name`);
        values = counts.filter((c) => Number(c.n) >= minGroupRuns).map((c) => c.name);
        pooledOf[k] = { minRuns: minGroupRuns, values: counts.length - values.length };
      }
      expr[k] = pooledGroupExpr(k, values);
      summaryExpr[k] = pooledGroupExpr(k, values, SUMMARY_GROUP_BY);
      shown[k] = values;
    }
    // The cells also by day received (dd), for the check of the value summary's totals.
    const keyCols = [...keys.map((k, i) => `${expr[k]} AS k${i}`), `${CLICKHOUSE_GROUP_BY.day} AS dd`];
    const cellCols = [...keys.map((_, i) => `k${i}`), 'dd'].join(', ');
    // One row per run and sample column (c), grouped first by cell, column, order and the difference's exponent, so
    // that the exact sums' limbs are plain sums (a sumMap of every run's limbs cost twice the pass), then by cell.
    // A run's own counts are taken from its row of column 0. Single (no classes): each run's columns side by side, with
    // no ARRAY JOIN and no limbs: the differences' exact sums come from their histograms of distinct values (group()).
    // Several columns: each run once per column, its values the column's (ARRAY JOIN zips the lists).
    const list = (f) => `[${columns.map(f).join(', ')}]`;
    const perColumnRow = columns.length === 1
      ? `${columns[0].C} AS C, ${columns[0].T} AS T, ${columns[0].missing ?? 'toUInt8(0)'} AS miss, toUInt8(0) AS c FROM ${from}`
      : `C, T, miss, c FROM ${from} ARRAY JOIN ${list((x) => x.C)} AS C, ${list((x) => x.T)} AS T,
          ${list((x) => x.missing ?? 'toUInt8(0)')} AS miss, [${[...columns.keys()].join(', ')}] AS c`;
    const { both, finished, diff } = pairedSql('C', 'T', schema.limits.maxDurationMs);
    const limbs = exactLimbsSql('d');
    const classSums = (arm) => classList.filter((x) => x.arm === arm).map((x) => x.name);
    const failures = classes && estimandBit !== null ? failureSumsSql(schema, estimandBit) : [];
    const perRun = classes ? [`countIf(c = 0 AND ${measured} > 0) AS runs`, `sumIf(${measured}, c = 0) AS requests`,
      ...[...classSums('control'), ...classSums('treatment')].map((name, i) => `sumIf(${name}, c = 0) AS k_${i}`),
      ...failures.map(([name, e]) => `sumIf(${e}, c = 0) AS fs_${name}`)] : [];
    // The aggregates' names differ from the columns' (an alias that names a column of the row is taken for it).
    const inner = `SELECT ${cellCols}, c, o, sh, countIf(c = 0) AS stored, ${perRun.map((x) => `${x}, `).join('')}sum(nC) AS a_nC,
      countIf(nC > 0) AS a_rC, sum(nT) AS a_nT, countIf(nT > 0) AS a_rT, countIf(isFinite(d)) AS a_pr, countIf(${both}) AS a_pb, sum(nC * nC) AS a_qC,
      sum(nT * nT) AS a_qT, sum(nC * nT) AS a_qCT, sum(miss) AS a_miss, ${limbs.limbs.map((x, i) => `sumIf(${x}, isFinite(d)) AS l${i}`).join(', ')},
      min(received_at) AS first, max(received_at) AS last
      FROM (SELECT *, toUInt64(length(C)) AS nC, toUInt64(length(T)) AS nT, if(${finished}, ${diff}, nan) AS d, if(isFinite(d), ${limbs.shift}, 0) AS sh
        FROM (SELECT *, ${keyCols.join(', ')}, ${order} AS o, ${perColumnRow} WHERE ${where}))
      GROUP BY ${cellCols}, c, o, sh`;
    const perColumn = columns.map((_, c) => CELL_SUMS
      .map((f) => `sumIf(a_${f}, c = ${c}) AS ${f}_${c}`).join(', '));
    const singleCounts = () => `SELECT ${cellCols}, count() AS stored, ${columns.map(({ C, T, missing }, c) => {
      const [nC, nT] = [`length(${C})`, `length(${T})`];
      return [`sum(${nC}) AS nC_${c}`, `countIf(${nC} > 0) AS rC_${c}`, `sum(${nT}) AS nT_${c}`, `countIf(${nT} > 0) AS rT_${c}`,
        `countIf(${nC} > 0 AND ${nT} > 0) AS pr_${c}`, `countIf(${nC} > 0 AND ${nT} > 0) AS pb_${c}`, `sum(${nC} * ${nC}) AS qC_${c}`, `sum(${nT} * ${nT}) AS qT_${c}`,
        `sum(${nC} * ${nT}) AS qCT_${c}`, `sum(${missing ?? '0'}) AS miss_${c}`].join(', ');
    }).join(',\n      ')}, min(received_at) AS first, max(received_at) AS last
      FROM (SELECT *, ${keyCols.join(', ')} FROM ${from} WHERE ${where}) GROUP BY ${cellCols}`;
    const nControl = classSums('control').length;
    let rows = countsFrom ? cellsFrom(countsFrom.countCells()) : (await pass('counts', single ? singleCounts() : `SELECT ${cellCols}, sum(stored) AS stored,
      ${classes ? `sum(runs) AS runs, sum(requests) AS requests, [${classSums('control').map((_, i) => `sum(k_${i})`).join(', ')}] AS control,
      [${classSums('treatment').map((_, i) => `sum(k_${nControl + i})`).join(', ')}] AS treatment,` : ''}
      ${failures.map(([name]) => `sum(fs_${name}) AS fs_${name}, `).join('')}${perColumn.join(', ')},
      sumMap(${exactKeysSql('c', 'o', 'sh')}, [${limbs.limbs.map((_, i) => `l${i}`).join(', ')}, toInt64(a_pr)]) AS ex,
      min(first) AS first, max(last) AS last
      FROM (${inner}) GROUP BY ${cellCols}`, { exact: true })).map((r) => ({ ...r, ex: r.ex ? [r.ex] : [] }));
    countCells = rows.map((r) => ({ ...r, key: Object.fromEntries(keys.map((k, i) => [k, r[`k${i}`]])) }));
    const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
    // Cumulative: a run is in its day's group and every later day's. The counts and the histograms are sums, so a
    // look's are those of its day and the days before: the counts and value passes group by day (look j's group number
    // is day j's), and the looks are summed here (the counts) and in the histograms and fetched buckets. Only the cross
    // sums, at each look's own thresholds, give each run one row per look, by arrayJoin over the days received (a
    // literal list: a scalar subquery does not reach the shards of a Distributed table).
    let crossExpr = expr;
    if (cumulative) {
      const dayKey = `k${keys.indexOf('day')}`;
      const days = [...new Set(rows.map((r) => r.dd))].sort(byName);
      rows = rows.flatMap((r) => days.filter((look) => look >= r.dd).map((look) => ({ ...r, [dayKey]: look })));
      crossExpr = { ...expr, day: `arrayJoin(arrayFilter(look -> look >= ${CLICKHOUSE_GROUP_BY.day}, [${days.map(sqlString).join(', ') || "''"}]))` };
    }
    names = keys.map((_, i) => [...new Set(rows.map((r) => r[`k${i}`]))].sort(byName));
    for (const k of grouped) checkGroupCount(keys[k], names[k].length, schema, Boolean(GROUP_BY[keys[k]]?.pooled));
    offset = [];
    ids = 1;
    for (const k of keys.keys()) { offset[k] = ids - 1; ids += grouped.includes(k) ? names[k].length : 0; }
    counted = `${where} AND received_at <= ${sqlString(rows.length ? rows.map((r) => r.last).sort(byName).at(-1) : '')}` +
      grouped.map((k) => ` AND g${k} > 0`).join('');
    const numbered = (e, from) => `(SELECT *, ${grouped.map((k) => `transform(toString(${e[keys[k]]}), [${names[k].map(sqlString).join(', ')}],
      [${names[k].map((_, j) => j + 1).join(', ')}], 0) AS g${k}`).join(', ')} FROM ${from})`;
    RR = numbered(expr, from);
    RRcross = numbered(crossExpr, from);
    await chooseCells(rows, numbered);

    const n = (x) => Number(x ?? 0);
    const zeros = (arm) => classList.filter((c) => c.arm === arm).map(() => 0);
    // A group's aggregates of column c: the sums of its cells'; single: the differences' from their histogram (gid).
    const group = (name, part, c, gid) => {
      const sum = (f) => part.reduce((a, r) => a + n(r[f]), 0);
      const sumList = (f, arm) => (classes ? zeros(arm).map((_, i) => part.reduce((a, r) => a + n(r[f][i]), 0)) : zeros(arm));
      const maps = part.flatMap((r) => r.ex);
      return {
        name, runs: classes ? sum('runs') : 0, requests: classes ? sum('requests') : 0, missing_metric: sum(`miss_${c}`),
        failures: Object.fromEntries(FAILURE_SUMS.map((f) => [f, sum(`fs_${f}`)])),
        classes: [sumList('control', 'control'), sumList('treatment', 'treatment')], runs_paired: sum(`pb_${c}`),
        samples: [[`nC_${c}`, `rC_${c}`], [`nT_${c}`, `rT_${c}`], [`pr_${c}`, `pr_${c}`]].map(([v, r]) => ({ n: sum(v), runs: sum(r), stats: [], below: [] })),
        diffs: single ? valueMomentSums(histograms.get(`${c}/${gid}/2`)) : momentSums(maps, c), diffs_h2_first: momentSums(maps, c, 0),
        diffs_h3_first: momentSums(maps, c, 1), cross: [],
      };
    };
    const squaresOf = (part, c) => [`qC_${c}`, `qT_${c}`, `qCT_${c}`].map((f) => part.reduce((a, r) => a + n(r[f]), 0));
    squares = new Map();
    columns.forEach((_, c) => {
      squares.set(`${c}/0`, squaresOf(rows, c));
      for (const k of grouped) names[k].forEach((v, j) => squares.set(`${c}/${offset[k] + j + 1}`, squaresOf(rows.filter((r) => r[`k${k}`] === v), c)));
    });
    const stored = rows.reduce((a, r) => a + n(r.stored), 0);
    const first = rows.length ? rows.map((r) => r.first).sort(byName)[0] : null;
    const last = rows.length ? rows.map((r) => r.last).sort(byName).at(-1) : null;

    histograms.clear();
    cells.clear();
    if (rows.length) {
      // One 64-bit key per row: grouping by the combination of groups first, then per grouping, was slower. Single:
      // per sample and value.
      const text = await pass('histograms', single
        ? `SELECT ${sampleSql()} * ${B} AS key, v, count() AS k, k, k, sum(o), v, v FROM (${valuesSql()}) GROUP BY key, v ORDER BY key, v`
        : `SELECT ${keySql()} AS key, 0, sum(cnt), sum(w), sum(n), sum(o), min(v), max(v) FROM (${valuesSql()}) GROUP BY key ORDER BY key`, { tsv: true });
      const [key, value, ...fields] = tsvColumns(text, 8);
      // Rows come in key order: each group's sample is one run of rows, in bucket order.
      for (let r0 = 0; r0 < key.length;) {
        const cgs = Math.floor(key[r0] / B);
        let r1 = r0;
        while (r1 < key.length && Math.floor(key[r1] / B) === cgs) r1++;
        const { c, gid, s } = splitKey(key[r0]);
        const b = single ? value.subarray(r0, r1) : key.subarray(r0, r1).map((k) => splitKey(k).b);
        histograms.set(`${c}/${gid}/${s}`, histogram(b, fields.map((f) => f.subarray(r0, r1))));
        r0 = r1;
      }
      // The groups made of others: overall (the first grouping's groups), and the cumulative looks (each day's group
      // and the days' before).
      for (const c of columns.keys()) {
        for (const s of [0, 1, 2]) {
          const of = (gid) => histograms.get(`${c}/${gid}/${s}`);
          if (cumulative) {
            let look = null;
            const looks = dayIds().map((gid) => (look = mergeHistograms(look, of(gid))));
            dayIds().forEach((gid, j) => (looks[j] ? histograms.set(`${c}/${gid}/${s}`, looks[j]) : histograms.delete(`${c}/${gid}/${s}`)));
          } else {
            const all = partsOf(0).reduce((acc, gid) => mergeHistograms(acc, of(gid)), null);
            if (all) histograms.set(`${c}/0/${s}`, all);
          }
        }
      }
    }
    const regionKey = keys.indexOf('region');
    return sets.map((by, i) => {
      const k = keyOf[i];
      return {
        storedRuns: stored, received: { first, last }, by, regions: names[regionKey], groups: names[k], shown: { ...shown },
        ...(pooledOf[by] ? { pooled: pooledOf[by] } : {}),
        // The looks' overall would hold each run once per look and is not read: left empty, nothing is asked of it.
        aggregates: columns.map((_, c) => ({ version: schema.aggregates.version,
          groups: [group('overall', cumulative ? [] : rows, c, 0),
            ...names[k].map((v, j) => group(v, rows.filter((r) => r[`k${k}`] === v), c, offset[k] + j + 1))] })),
      };
    });
  }

  // Picks the cells (a day received and a region) whose values the histogram and values passes read from the value
  // summary: those whose totals there (per sample: values, Σ w, Σ n, Σ o) equal the ones the counts found in
  // run_records, and that were received before today (UTC: a day still receiving runs could gain some between this
  // check and the passes). Any other cell (a day partly selected by since, one the summary misses or holds twice) is
  // read from run_records. Sets SV and rawCells.
  async function chooseCells(rows, numbered) {
    const noGroup = grouped.map((k) => ` AND g${k} > 0`).join('');
    SV = '';
    rawCells = '1';
    if (!summary || !readSummary || !rows.length) return;
    const cellOf = (day, region) => JSON.stringify([day, region]);
    const want = new Map();  // cell → its totals in run_records: [values, Σ w, Σ n, Σ o] per sample
    const regionKey = `k${keys.indexOf('region')}`;
    const dayKey = keys.indexOf('day');
    for (const r of rows) {
      // A cumulative look holds its runs once per later day: each run counted at the look of its own day.
      if (cumulative && r[`k${dayKey}`] !== r.dd) continue;
      const cell = cellOf(r.dd, r[regionKey]);
      if (!want.has(cell)) want.set(cell, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
      const t = want.get(cell);
      const add = (s, ...xs) => xs.forEach((x, f) => { t[s][f] += Number(x ?? 0); });
      add(0, r.nC_0, r.qC_0, r.qC_0, r.qCT_0);
      add(1, r.nT_0, r.qT_0, r.qT_0, r.qCT_0);
      add(2, r.pr_0, r.pr_0, r.pr_0, 0);
    }
    const today = new Date(now).toISOString().slice(0, 10);
    const days = [...new Set([...want.keys()].map((c) => JSON.parse(c)[0]))].filter((d) => d < today);
    if (!days.length) return;
    const totals = await pass('summary-totals', `SELECT day, region, s, sum(cnt) AS c, sum(w) AS w, sum(n) AS n, sum(o) AS o
      FROM run_values WHERE ${summary} AND day IN (${days.map(sqlString).join(', ')}) GROUP BY day, region, s`);
    const have = new Map();
    for (const r of totals) {
      const cell = cellOf(r.day, r.region);
      if (!have.has(cell)) have.set(cell, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
      have.get(cell)[Number(r.s)] = [r.c, r.w, r.n, r.o].map(Number);
    }
    const exact = [];
    const raw = [];
    for (const [cell, t] of want) {
      const [day, region] = JSON.parse(cell);
      const h = have.get(cell) ?? [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]];
      (day < today && t.every((row, s) => row.every((x, f) => x === h[s][f])) ? exact : raw).push([day, region]);
    }
    passes.at(-1).cells = { summary: exact.length, raw: raw.length };
    if (!exact.length) return;
    SV = `(SELECT * FROM ${numbered(summaryExpr, `run_values WHERE ${summary}
      AND (day, region) IN (${exact.map(([d, r]) => `(${sqlString(d)}, ${sqlString(r)})`).join(', ')})`)} WHERE 1${noGroup})`;
    // A day's received_at range as well as its text, so that the table's sorting key narrows the read (a text that
    // starts with the day sorts below the day followed by the byte 0xFF, which UTF-8 never holds).
    rawCells = raw.length ? raw.map(([d, r]) => `(region = ${sqlString(r)} AND received_at >= ${sqlString(d)}
      AND received_at < ${sqlString(d).slice(0, -1)}\\xFF' AND ${CLICKHOUSE_GROUP_BY.day} = ${sqlString(d)})`).join(' OR ') : '';
  }

  // Another source's count cells (countCells()) as this source's cells: keyed by this source's keys (each the other's
  // key of that name, or the day received), the ones that fall in one cell merged: counts added, the exact sums' limbs
  // kept together, the first and last received kept.
  function cellsFrom(list) {
    const merged = new Map();
    for (const c of list) {
      const ks = keys.map((k) => {
        if (k === 'day') return c.dd;
        if (!Object.hasOwn(c.key, k)) throw new Error(`countsFrom: the other source does not group by ${k}`);
        return c.key[k];
      });
      const id = JSON.stringify([...ks, c.dd]);
      const cell = { ...Object.fromEntries(ks.map((v, i) => [`k${i}`, v])), dd: c.dd };
      if (!merged.has(id)) merged.set(id, { cell, parts: [] });
      merged.get(id).parts.push(c);
    }
    const num = (x) => Number(x ?? 0);
    const sums = ['stored', 'runs', 'requests', ...FAILURE_SUMS.map((f) => `fs_${f}`), ...columns.flatMap((_, c) => CELL_SUMS.map((f) => `${f}_${c}`))];
    return [...merged.values()].map(({ cell, parts }) => {
      if (parts.length === 1) return { ...parts[0], ...cell };
      const out = { ...cell };
      for (const f of sums) out[f] = parts.reduce((a, p) => a + num(p[f]), 0);
      for (const f of classes ? ['control', 'treatment'] : []) out[f] = parts[0][f].map((_, i) => parts.reduce((a, p) => a + num(p[f][i]), 0));
      out.ex = parts.flatMap((p) => p.ex);
      out.first = parts.map((r) => r.first).sort()[0];
      out.last = parts.map((r) => r.last).sort().at(-1);
      return out;
    });
  }

  // Overall's values are those of the first grouping's groups.
  const inFirstGrouping = (gid) => gid > offset[grouped[0]] && gid <= offset[grouped[0]] + names[grouped[0]].length;
  // The global ids of the first grouping's groups (cumulative: the days, look j being day j's id).
  const dayIds = () => names[grouped[0]].map((_, j) => offset[grouped[0]] + j + 1);
  // The groups whose values a group's are, as the value passes number them: overall's, the first grouping's; a
  // cumulative look's, its day and the days before (the looks' overall is empty); any other's, its own.
  const partsOf = (gid) => {
    if (gid === 0) return cumulative ? [] : dayIds();
    return cumulative ? dayIds().filter((d) => d <= gid) : [gid];
  };
  // The groups a value numbered gid by the value passes counts in (partsOf() turned around).
  const wholesOf = (gid) => {
    if (cumulative) return dayIds().filter((d) => d >= gid);
    return inFirstGrouping(gid) ? [gid, 0] : [gid];
  };
  // Item k (set i's column c, k = i * columns + c), and the global id of its group j (0: overall).
  const itemOf = (k) => ({ i: Math.floor(k / columns.length), c: k % columns.length });
  const gidOf = (k, j) => (j === 0 ? 0 : offset[keyOf[itemOf(k).i]] + j);

  // The bucket of column c's sample s in group gid that holds a rank, and the rank's offset in it.
  function locateRank(c, gid, s, rank) {
    const h = histograms.get(`${c}/${gid}/${s}`);
    const len = h ? h.b.length : 0;
    let lo = 0;
    let hi = len - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h.below[0][mid + 1] <= rank) lo = mid + 1;
      else hi = mid;
    }
    const e = len ? entry(h, lo) : null;
    if (!e || rank < e.start || rank >= e.start + e.count) throw new Error(`rank ${rank} is outside sample ${s} of group ${gid}`);
    return { e, offset: rank - e.start };
  }

  // The first bucket of column c's sample s in group gid at or above bucket b (e undefined: none), and the sums below it.
  function locateBucket(c, gid, s, b) {
    const h = histograms.get(`${c}/${gid}/${s}`);
    const len = h ? h.b.length : 0;
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h.b[mid] < b) lo = mid + 1;
      else hi = mid;
    }
    const below = h ? { count: h.below[0][lo], w: h.below[1][lo], n: h.below[2][lo], o: h.below[3][lo] } : { count: 0, w: 0, n: 0, o: 0 };
    return { e: lo < len ? entry(h, lo) : undefined, i: lo, below };
  }

  // Fetches the distinct values (with their weights) of the buckets asked, [{c, gid, s, b}], that hold several values
  // and are not fetched yet: one pass over the values.
  async function fetchBuckets(name, wanted) {
    const keysWanted = new Set();
    const todo = new Map();
    for (const { c, gid, s, b } of wanted) {
      const ckey = `${c}/${gid}/${s}/${b}`;
      if (cells.has(ckey) || todo.has(ckey)) continue;
      todo.set(ckey, { c, gid, s, b });
      // A composite group's bucket is the sum of its parts' same bucket.
      for (const g of partsOf(gid)) keysWanted.add(keyOfBucket(c, g, s, b));
    }
    if (todo.size === 0) return;
    // Only the values of the wanted samples' buckets (whatever the group) are unrolled per grouping.
    const sb = [...new Set([...todo.values()].map(({ c, s, b }) => (c * 4 + s) * B + b + B / 2))];
    const text = await pass(name, `SELECT key, v, sum(cnt), sum(w), sum(n), sum(o) FROM (SELECT ${keySql()} AS key, v, cnt, w, n, o
      FROM (${valuesSql(sb)})) WHERE ${inListSql('key', [...keysWanted])} GROUP BY key, v`, { tsv: true });
    const found = new Map();
    const add = (ckey, v, e) => {
      if (!todo.has(ckey)) return;
      if (!found.has(ckey)) found.set(ckey, new Map());
      const cell = found.get(ckey);
      const have = cell.get(v);
      if (!have) cell.set(v, { v, ...e });
      else for (const f of ['count', 'w', 'n', 'o']) have[f] += e[f];
    };
    for (const line of text.split('\n')) {
      if (!line) continue;
      const [key, v, count, w, nn, o] = line.split('\t').map(Number);
      const { c, gid, s, b } = splitKey(key);
      for (const whole of wholesOf(gid)) add(`${c}/${whole}/${s}/${b}`, v, { count, w, n: nn, o });
    }
    for (const ckey of todo.keys()) cells.set(ckey, [...(found.get(ckey)?.values() ?? [])].sort((x, y) => x.v - y.v));
  }

  // The buckets of several values within reach of an estimate's interval bounds: ranks within z √(deff n p (1 - p))
  // of it, for z up to 3.3 (confidence 0.999) and a design effect up to 10.
  function boundBuckets(c, gid, s, rank, n) {
    const p = Math.min(1, Math.max(0, rank / Math.max(1, n - 1)));
    const reach = Math.ceil(3.3 * Math.sqrt(10 * n * p * (1 - p))) + 2;
    const h = histograms.get(`${c}/${gid}/${s}`);
    const out = [];
    if (!h) return out;
    const from = locateRank(c, gid, s, Math.max(0, rank - reach)).e.b;
    const to = locateRank(c, gid, s, Math.min(n - 1, rank + reach)).e.b;
    for (let { i } = locateBucket(c, gid, s, from); i < h.b.length && h.b[i] <= to; i++) {
      if (h.lo[i] !== h.hi[i]) out.push({ c, gid, s, b: h.b[i] });
    }
    return out;
  }

  // The buckets a threshold's sums need read value by value: its own, when it holds several values.
  function thresholdBucket(c, gid, s, q) {
    const { e } = locateBucket(c, gid, s, bucketOf(q));
    return e && e.b === bucketOf(q) && e.lo !== e.hi ? [{ c, gid, s, b: e.b }] : [];
  }

  // The sums of the values at or below q, {count, w, n, o}, of column c's sample s in group gid: the buckets below q's,
  // and in q's the values at or below it.
  function sumsAtOrBelow(c, gid, s, q) {
    const b = bucketOf(q);
    const { e, below } = locateBucket(c, gid, s, b);
    const out = { ...below };
    if (e && e.b === b) {
      const part = e.lo === e.hi ? (q >= e.lo ? [e] : []) : cells.get(`${c}/${gid}/${s}/${b}`).filter((x) => x.v <= q);
      for (const x of part) for (const f of ['count', 'w', 'n', 'o']) out[f] += x[f];
    }
    return out;
  }

  // Per run, S(q) = its values at or below q, and over the runs Σ S, Σ S², Σ S N (N: its values), and Σ S2 N3, Σ N2 S3
  // across the arms. With a run's values sorted, S(q)² = Σ over its values at or below q of 2r - 1 (r: the value's rank
  // in the run), so each is a sum over the values at or below q of a weight the histogram pass sums per bucket (w, n, o):
  // only Σ S2 S3, a product of two thresholds, needs each run again (fillCross).
  function fillBelow(aggregatesList, needsList) {
    for (const [k, needs] of needsList.entries()) {
      const { c } = itemOf(k);
      for (const { group: j, sample: s, threshold: q } of needs?.below ?? []) {
        const gid = gidOf(k, j);
        const t = sumsAtOrBelow(c, gid, s, q);
        // Each difference is a run of its own: S in {0, 1}, N = 1.
        const [below, belowSq, belowSize, sizeSq] = s === 2 ? [t.count, t.count, t.count, aggregatesList[k].groups[j].samples[2].n]
          : [t.count, t.w, t.n, squares.get(`${c}/${gid}`)[s]];
        aggregatesList[k].groups[j].samples[s].below.push({ threshold: q, below, below_sq: belowSq, below_size: belowSize, size_sq: sizeSq });
      }
    }
  }

  async function fillCross(aggregatesList, needsList) {
    // The cross pairs of each column's group (`${c}/${global id}`; 0: overall), deduplicated.
    const want = new Map();
    for (const [k, needs] of needsList.entries()) {
      for (const { group: j, q2, q3 } of needs?.cross ?? []) {
        const id = `${itemOf(k).c}/${gidOf(k, j)}`;
        if (!want.has(id)) want.set(id, new Map());
        const l = want.get(id);
        if (!l.has(`${q2}/${q3}`)) l.set(`${q2}/${q3}`, { q2, q3, at: l.size });
      }
    }
    const pairs = (c, gid) => [...(want.get(`${c}/${gid}`)?.values() ?? [])];
    // Per column and key, pair k of every group, picked by the row's group number (a flat list of numbers: ClickHouse
    // indexes it per row far faster than a list of lists); overall: the number itself.
    const sums = [];
    for (const [c, { C, T }] of columns.entries()) {
      for (const tag of [...grouped.map((k) => `k${k}`), 'o']) {
        const gids = tag === 'o' ? [0] : names[Number(tag.slice(1))].map((_, j) => offset[Number(tag.slice(1))] + j + 1);
        const most = Math.max(...gids.map((gid) => pairs(c, gid).length));
        for (let at = 0; at < most; at++) {
          const pick = (f) => (tag === 'o' ? float64Sql(pairs(c, 0)[at]?.[f]) : `[${gids.map((gid) => float64Sql(pairs(c, gid)[at]?.[f])).join(', ')}][g${tag.slice(1)}]`);
          sums.push(`sum(toUInt64(arrayCount(x -> x <= ${pick('q2')}, ${C}) * arrayCount(y -> y <= ${pick('q3')}, ${T}))) AS c${c}_${tag}_${at}`);
        }
      }
    }
    const gs = grouped.map((k) => `g${k}`).join(', ');
    const rows = await pass('cross', `SELECT ${gs}, ${sums.join(',\n  ')} FROM ${RRcross} WHERE ${counted} GROUP BY ${gs}`);
    // Each group's sums: those of its cells.
    const totals = new Map();
    const addInto = (c, gid, tag, row) => {
      const id = `${c}/${gid}`;
      if (!totals.has(id)) totals.set(id, []);
      const t = totals.get(id);
      pairs(c, gid).forEach((_, at) => { t[at] = (t[at] ?? 0) + Number(row[`c${c}_${tag}_${at}`]); });
    };
    for (const row of rows) {
      for (const c of columns.keys()) {
        for (const k of grouped) addInto(c, offset[k] + Number(row[`g${k}`]), `k${k}`, row);
        addInto(c, 0, 'o', row);
      }
    }
    for (const [k, needs] of needsList.entries()) {
      const { c } = itemOf(k);
      for (const { group: j, q2, q3 } of needs?.cross ?? []) {
        const gid = gidOf(k, j);
        const { at } = want.get(`${c}/${gid}`).get(`${q2}/${q3}`);
        aggregatesList[k].groups[j].cross.push({ q2, q3, s2s3: totals.get(`${c}/${gid}`)?.[at] ?? 0,
          s2n3: sumsAtOrBelow(c, gid, 0, q2).o, n2s3: sumsAtOrBelow(c, gid, 1, q3).o, n2n3: squares.get(`${c}/${gid}`)[2] });
      }
    }
  }

  return {
    start,
    passes,
    /** The counts pass's cells (after start()), for another source's countsFrom. */
    countCells: () => countCells,
    /**
     * Adds what each item's needs ask ({ranks: [{group, sample, rank}], below: [{group, sample, threshold}], cross:
     * [{group, q2, q3}]}) to its aggregates: one pass for the buckets of several values that the ranks and thresholds
     * fall in, one for the cross sums. Items: set i's column c at i * columns + c.
     */
    async fill(aggregatesList, needsList, estimates = []) {
      const ranks = [];
      const buckets = [];
      for (const [k, needs] of needsList.entries()) {
        const { c } = itemOf(k);
        for (const { group: j, sample: s, rank } of needs?.ranks ?? []) {
          const gid = gidOf(k, j);
          const at = locateRank(c, gid, s, rank);
          ranks.push({ k, j, s, rank, c, gid, ...at });
          if (at.e.lo !== at.e.hi) buckets.push({ c, gid, s, b: at.e.b });
          // An estimate's interval bounds are ranks near it, asked a round later: the buckets that may hold them are
          // fetched now, in the same pass (a bound outside them is fetched when asked).
          const n = aggregatesList[k].groups[j].samples[s].n;
          if ((estimates[k] ?? []).some((p) => Math.abs(Math.floor((n - 1) * p) - rank) <= 1)) buckets.push(...boundBuckets(c, gid, s, rank, n));
        }
        for (const { group: j, sample: s, threshold: q } of needs?.below ?? []) buckets.push(...thresholdBucket(c, gidOf(k, j), s, q));
        for (const { group: j, q2, q3 } of needs?.cross ?? []) buckets.push(...thresholdBucket(c, gidOf(k, j), 0, q2), ...thresholdBucket(c, gidOf(k, j), 1, q3));
      }
      if (buckets.length) await fetchBuckets('ranks', buckets);
      for (const r of ranks) {
        let value = r.e.lo;
        if (r.e.lo !== r.e.hi) {
          let at = 0;
          const hit = cells.get(`${r.c}/${r.gid}/${r.s}/${r.e.b}`).find((x) => (at += x.count) > r.offset);
          if (!hit) throw new Error(`the values of bucket ${r.e.b} do not hold rank ${r.rank}`);
          value = hit.v;
        }
        aggregatesList[r.k].groups[r.j].samples[r.s].stats.push({ rank: r.rank, value });
      }
      fillBelow(aggregatesList, needsList);
      if (needsList.some((nd) => nd?.cross.length)) await fillCross(aggregatesList, needsList);
    },
  };
}

/**
 * What the report says besides its groups, from run_records and runs, as readReportData.mjs reads it: every payload
 * mode stored for the arms mode since, the load_error beacons by reason and error text (every arms mode), and the selected runs whose
 * core ran on the page's main thread, by why. records: run_records as the report reads it (runRecordsOnce()).
 */
export async function clickhouseReportFacts(pass, { since, arms, payloadBytes, records = RUN_RECORDS }) {
  const loadErrors = (await pass('load-errors', `SELECT reason, error, uniqExact(run_id) AS n FROM runs
    WHERE outcome = 'load_error' AND received_at >= ${sqlString(since)} GROUP BY reason, error`))
    .map((r) => ({ reason: r.reason, error: r.error, n: Number(r.n) }));
  const mainThread = (await pass('main-thread', `SELECT if(worker_fallback = '', 'unknown', worker_fallback) AS reason,
    uniqExact(run_id) AS n FROM runs WHERE run_context = 'main' AND received_at >= ${sqlString(since)}
    AND arms = ${sqlString(arms)} AND ifNull(payload_bytes, 0) = ${Number(payloadBytes)} GROUP BY reason`))
    .map((r) => ({ reason: r.reason, n: Number(r.n) }));
  const payloadModes = (await pass('payload-modes', `SELECT payload_bytes AS bytes, count() AS runs FROM ${records}
    WHERE arms = ${sqlString(arms)} AND received_at >= ${sqlString(since)} AND run_id != ${sqlString(DOCTOR_ID)}
    GROUP BY bytes ORDER BY bytes`)).map((r) => ({ bytes: Number(r.bytes), runs: Number(r.runs) }));
  // The doctor's test beacon, left out of every count above and named in the report.
  const [doctor] = await pass('test-beacons', `SELECT uniqExact(run_id) AS n FROM runs WHERE run_id = ${sqlString(DOCTOR_ID)}
    AND received_at >= ${sqlString(since)}`);
  // The runs read by how they ended (readReportData's outcomes).
  const outcomes = (await pass('outcomes', `SELECT outcome, uniqExact(run_id) AS n FROM runs WHERE arms = ${sqlString(arms)}
    AND ifNull(payload_bytes, 0) = ${Number(payloadBytes)} AND received_at >= ${sqlString(since)} AND run_id != ${sqlString(DOCTOR_ID)}
    GROUP BY outcome`)).map((r) => ({ outcome: r.outcome, n: Number(r.n) }));
  // Every run stored but the doctor's, by arms mode and whether received since (readReportData's armsModes).
  const armsModes = (await pass('arms-modes', `SELECT arms, received_at >= ${sqlString(since)} AS recent, count() AS n
    FROM ${records} WHERE run_id != ${sqlString(DOCTOR_ID)} GROUP BY arms, recent`))
    .map((r) => ({ arms: r.arms, recent: Number(r.recent), n: Number(r.n) }));
  return { loadErrors, mainThread, payloadModes, outcomes, armsModes, testBeacons: Number(doctor?.n ?? 0) };
}
