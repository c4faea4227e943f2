// The report's aggregates computed inside ClickHouse (the store's run_records table, clickhouseStore.mjs), for the C++
// inference (core.inferReport, wasm/core/report_aggregates.cpp): no value leaves the database, only counts, sums and
// the few order statistics the inference asks for. One source serves several groupings at once (the report's `by` and
// the daily series' days): every pass reads the table once for all of them. The passes (docs/clickhouse.md):
//   1. counts per cell (a cell: one value of every grouping's key, and the region): runs, requests by arm and class,
//      missing values, values and runs per arm, paired runs, Σ N² per arm and Σ N2 N3, the count, mean and sample
//      variance of the paired within-run differences (all, and per order); a group's and overall's are the sums of
//      their cells' (the moments pooled);
//   2. a histogram per group and sample (h2 values, h3 values, paired differences) over 2^24 order-preserving buckets
//      of the float64 (its sign, exponent and 12 mantissa bits), each bucket with its count, least and greatest value
//      and the sums of the weights below; overall's is the sum of the first grouping's groups';
//   3. for the ranks the inference asks (the type-7 estimates: floor((N-1)p) and the next) that fall in a bucket of
//      several values, and the buckets within reach of the estimates' interval bounds, the distinct values with their
//      counts and weights, from which each rank's value is read exactly;
//   4. the sums at a threshold q the inference asks (an estimate): Σ S, Σ S², Σ S N, Σ S2 N3, Σ N2 S3 (S: a run's values
//      at or below q, N: its values) are weighted counts of the values at or below q (weights 1, 2r - 1 for the value of
//      rank r in its run, N, the other arm's N), read from the histograms and the fetched buckets: no query;
//   5. Σ S2 S3 at each pair of estimates, per run (arrayCount), summed per cell.
// Groups are numbered in SQL (transform() of the key to its index), so the per-value passes hash small integers, not
// texts. Exact throughout: thresholds go into SQL as the float64's bytes in hex (reinterpretAsFloat64(unhex(…))), never
// as decimal text, and values come back in ClickHouse's shortest round-trip form. 18.16 has no exact multi-rank
// quantile that avoids a sort per group (quantilesExact runs nth_element once per level, and the CDF asks ~300
// levels), hence 2 and 3.
import { classCountColumns, metricColumns } from '../server/clickhouseStore.mjs';
import { CLICKHOUSE_GROUP_BY, SUMMARY_GROUP_BY, pairedSql, runValueTuplesSql, sqlString } from '../server/clickhouseRunSql.mjs';
import { GROUP_BY, OTHER_GROUP, checkGroupCount, checkMinGroupRuns, checkPayloadBytes } from './readReportData.mjs';

const BUCKET_SHIFT = 40;  // keeps the top 24 bits of a float64's 64

export { CLICKHOUSE_GROUP_BY };

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

/**
 * pass(name, sql, {tsv}) → the rows (JSON), or the text (TabSeparated): runs a query on client with a query_id of its
 * own (its row in system.query_log) and pushes { name, queryId, ms (as Node saw it) } onto passes.
 */
export function queryRecorder(client, passes) {
  const tag = `h3probe-report-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return async function pass(name, sql, { tsv = false } = {}) {
    const queryId = `${tag}-${passes.length + 1}-${name}`;
    const t = performance.now();
    // A long IN list of bucket keys is query text: room for it.
    const settings = { query_id: queryId, max_query_size: String(Math.max(262_144, 2 * sql.length)) };
    const out = tsv ? await client.query(`${sql}\nFORMAT TabSeparated`, { settings }) : await client.json(sql, { settings });
    passes.push({ name, queryId, ms: performance.now() - t });
    return out;
  };
}

/** Pools the moments [n, mean, sample variance] of disjoint parts (Chan et al.); a single part is returned as it is. */
export function poolMoments(parts) {
  const some = parts.filter((p) => p[0] > 0);
  if (some.length === 0) return [0, null, null];
  if (some.length === 1) return some[0];
  const n = some.reduce((a, p) => a + p[0], 0);
  const mean = some.reduce((a, p) => a + p[0] * p[1], 0) / n;
  const m2 = some.reduce((a, [k, mu, v]) => a + (k > 1 ? v * (k - 1) : 0) + k * (mu - mean) ** 2, 0);
  return [n, mean, n > 1 ? m2 / (n - 1) : null];
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
 * client: clickhouseClient(url, {database}). schema: core.schema(). Options: metric, since (ISO, '' for all), arms, sets
 * (the groupings, each one of CLICKHOUSE_GROUP_BY; a report's `by`, then 'day' for its daily series), minGroupRuns (a
 * pooled grouping's fewest runs of a shown value, GROUP_BY's `pooled` in readReportData.mjs; default the fewest runs
 * for an interval), payloadBytes (the one payload mode read, 0 the no-op), cumulative (sets ['day'] only: the daily
 * series' looks, each day's group holding every run received up to the end of that day; the overall group is then
 * left empty: it would count a run once per look, and is not read), readSummary (default true: the values of a day and region whose totals in
 * the value summary run_values equal those the counts pass finds in run_records are read from the summary; false:
 * every value from run_records), now (the clock, ms: the UTC day it falls in is read from run_records), countsFrom
 * (another source over the same runs, started, whose groupings include this one's but the day: its counts pass's cells
 * are this one's, merged, instead of a counts pass of its own). Returns
 * { passes, start() → one {storedRuns, received, by, regions, groups, aggregates, loadErrors, mainThread, pooled?} per set,
 * fill([aggregates per set], [needs per set, or null]), shown(by) } for buildReportsFromAggregates. passes lists each
 * query as it ran: { name, queryId (its row in system.query_log), ms }.
 */
export function clickhouseAggregateSource(client, schema, {
  metric = 'network_ms', since = '', arms = 'h2-h3', sets = ['region'], minGroupRuns = schema.limits.minRunsForInterval,
  payloadBytes = 0, cumulative = false, readSummary = true, now = Date.now(), countsFrom = null,
} = {}) {
  for (const by of sets) {
    if (!Object.hasOwn(CLICKHOUSE_GROUP_BY, by)) {
      throw new Error(`--by ${by}: the ClickHouse store splits by ${Object.keys(CLICKHOUSE_GROUP_BY).join(' or ')} (the SQLite store by every grouping)`);
    }
  }
  if (cumulative && (sets.length !== 1 || sets[0] !== 'day')) throw new Error('cumulative groups are days');
  // The distinct keys the passes group by (the region always: the verdict reads the regions whatever the split).
  const keys = [...new Set([...sets, 'region'])];
  const keyOf = sets.map((by) => keys.indexOf(by));
  const grouped = [...new Set(keyOf)];  // the keys whose groups get histograms and sums
  // Each key's expression over run_records and over the value summary; a pooled key's are set in start(), once its
  // shown values are known.
  const expr = Object.fromEntries(keys.map((k) => [k, CLICKHOUSE_GROUP_BY[k]]));
  const summaryExpr = Object.fromEntries(keys.map((k) => [k, SUMMARY_GROUP_BY[k]]));
  const pooledOf = {};
  const shownOf = {};  // a pooled key's values shown by name (the others are OTHER_GROUP)
  if (keys.some((k) => GROUP_BY[k]?.pooled)) checkMinGroupRuns(minGroupRuns);
  const m = metricColumns(schema).find((c) => c.metric === metric);
  if (!m) throw new Error(`unknown metric "${metric}"; one of ${schema.metrics.join(', ')}`);
  const C = m.control;
  const T = m.treatment;
  checkPayloadBytes(payloadBytes, schema);
  const mode = `arms = ${sqlString(arms)} AND payload_bytes = ${Number(payloadBytes)}`;
  const where = `${mode} AND received_at >= ${sqlString(since)}`;
  const classes = classCountColumns(schema);
  const { both, diff } = pairedSql(C, T);
  // Branch-free (multiIf evaluates slowly here): the magnitude's top bits, mirrored below zero (-1 - bits of -v).
  const bucket = (v) => `(toInt64(bitShiftRight(reinterpretAsUInt64(reinterpretAsString(abs(${v}))), ${BUCKET_SHIFT})) * (1 - 2 * toInt64(${v} < 0))
    - toInt64(${v} < 0))`;

  // Each query's name, id and time as Node saw it, in order.
  const passes = [];
  const pass = queryRecorder(client, passes);

  // names[k]: the values of key k, in order; group j of key k (1-based) is names[k][j - 1]; its global id (the g of
  // the histogram and rank passes) offset[k] + j; 0 is overall.
  let names = [];
  let offset = [];
  let RR = '';  // run_records with each key's group number as g0, g1, …
  let RRcross = '';  // the same for the cross sums (cumulative: one row per look)
  // The value summary's rows of the (day, region) cells read from it, with the same group numbers (empty: none).
  let SV = '';
  // The run_records rows whose values the histogram and values passes read: those of the cells not read from SV.
  let rawCells = '';
  // The runs the counts saw, as far as one can tell: the passes after them leave out a run received later, or of a
  // group they did not see (the collector keeps inserting while a report runs).
  let counted = where;
  // `${gid}/${s}` → the histogram of group gid's sample s (histogram()).
  const histograms = new Map();
  // `${gid}/${s}/${b}` → the bucket's distinct values, [{v, count, w, n, o}] ascending (buckets of several values, fetched).
  const cells = new Map();
  let countCells = [];  // the counts pass's cells as read, each with its keys by name (key), for countsFrom
  let squares = new Map();  // gid → the group's [Σ N_h2², Σ N_h3², Σ N_h2 N_h3], from the counts

  // Every value of the three samples with its run's group number in each grouping (g0, g1, …), as the rows of
  // runValueTuplesSql(): s 0 = h2, 1 = h3, 2 = paired differences, b its bucket, c how many such values the row stands
  // for, and the weights for the sums at a threshold (see fillBelow): w = 2r - 1 for the value of rank r among its
  // run's values of that arm, n = that arm's number of values in the run, o = the other arm's (for a difference: 1,
  // 1, 0), summed over the c values. From the value summary for the cells it holds exactly (c, w, n, o its sums), and
  // one row per value of run_records for the others. sb: only the values whose s * 2^24 + b + 2^23 is in this list.
  const valuesSql = (sb = null) => {
    const gs = grouped.map((k) => `g${k}`).join(', ');
    const only = sb ? `WHERE s * ${2 ** 24} + b + ${2 ** 23} IN (${sb.join(', ')})` : '';
    const parts = [];
    if (SV) parts.push(`SELECT ${gs}, s, v, ${bucket('v')} AS b, cnt AS c, w, n, o FROM ${SV} ${only}`);
    if (rawCells) {
      parts.push(`SELECT ${gs}, t.1 AS s, t.2 AS v, ${bucket('t.2')} AS b, toUInt64(1) AS c, t.3 AS w, t.4 AS n, t.5 AS o
      FROM (SELECT ${gs}, ${C}, ${T} FROM ${RR} WHERE ${counted} AND (${rawCells})) ARRAY JOIN ${runValueTuplesSql(C, T)} AS t ${only}`);
    }
    return parts.join('\n    UNION ALL ');
  };
  // A row's key in each grouping, (global group number * 4 + s) * 2^24 + b + 2^23: one integer (a row with several
  // groupings is counted once in each).
  const keySql = () => {
    const g = grouped.length === 1 ? `(${offset[grouped[0]]} + g${grouped[0]})`
      : `arrayJoin([${grouped.map((k) => `${offset[k]} + g${k}`).join(', ')}])`;
    return `(${g} * 4 + s) * ${2 ** 24} + b + ${2 ** 23}`;
  };
  const keyOfBucket = (gid, s, b) => (gid * 4 + s) * 2 ** 24 + b + 2 ** 23;
  // The bucket of a value, as bucket() computes it in SQL.
  const bucketOf = (v) => {
    if (v === 0) return 0;
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(Math.abs(v));
    const b = Number(bytes.readBigUInt64LE() >> BigInt(BUCKET_SHIFT));
    return v > 0 ? b : -1 - b;
  };

  async function start() {
    const measured = classes.map((c) => c.name).join(' + ');
    // varSampStable, not varSamp: varSamp's one-pass sum of squares loses the variance of values far from 0 and goes
    // below 0 for equal ones (no interval, where SQLite's path has one).
    const moments = (cond, name) => `countIf(isFinite(d) AND ${cond}) AS ${name}_n, avgIf(d, isFinite(d) AND ${cond}) AS ${name}_mean,
      varSampStableIf(d, isFinite(d) AND ${cond}) AS ${name}_var`;
    // A pooled key: the values with fewer than minGroupRuns selected runs become OTHER_GROUP.
    for (const k of keys.filter((key) => GROUP_BY[key]?.pooled)) {
      const counts = await pass(`pool-${k}`, `SELECT ${CLICKHOUSE_GROUP_BY[k]} AS name, count() AS n FROM run_records
        WHERE ${where} GROUP BY name`);
      const shown = counts.filter((c) => Number(c.n) >= minGroupRuns).map((c) => c.name);
      expr[k] = pooledGroupExpr(k, shown);
      summaryExpr[k] = pooledGroupExpr(k, shown, SUMMARY_GROUP_BY);
      pooledOf[k] = { minRuns: minGroupRuns, values: counts.length - shown.length };
      shownOf[k] = shown;
    }
    // The cells also by day received (dd), for the check of the value summary's totals.
    const keyCols = [...keys.map((k, i) => `${expr[k]} AS k${i}`), `${CLICKHOUSE_GROUP_BY.day} AS dd`];
    const cellCols = [...keys.map((_, i) => `k${i}`), 'dd'].join(', ');
    // The run's paired difference computed once (NaN: not paired).
    let rows = countsFrom ? cellsFrom(countsFrom.countCells()) : await pass('counts', `SELECT ${cellCols}, count() AS stored, countIf(${measured} > 0) AS runs,
      sum(${measured}) AS requests,
      [${classes.filter((c) => c.arm === 'control').map((c) => `sum(${c.name})`).join(', ')}] AS control,
      [${classes.filter((c) => c.arm === 'treatment').map((c) => `sum(${c.name})`).join(', ')}] AS treatment,
      sum(${m.missing}) AS missing, sum(nC) AS n_h2, countIf(nC > 0) AS runs_h2, sum(nT) AS n_h3, countIf(nT > 0) AS runs_h3,
      countIf(isFinite(d)) AS paired, sum(nC * nC) AS nn0, sum(nT * nT) AS nn1, sum(nC * nT) AS nn23,
      ${moments('1', 'd')}, ${moments(`run_order = 'h2-first'`, 'd1')}, ${moments(`run_order = 'h3-first'`, 'd3')},
      min(received_at) AS first, max(received_at) AS last
      FROM (SELECT *, ${keyCols.join(', ')}, toUInt64(length(${C})) AS nC, toUInt64(length(${T})) AS nT, if(${both}, ${diff}, nan) AS d
        FROM run_records WHERE ${where}) GROUP BY ${cellCols}`);
    countCells = rows.map((r) => ({ ...r, key: Object.fromEntries(keys.map((k, i) => [k, r[`k${i}`]])) }));
    const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
    // Cumulative: a run is in its day's group and every later day's. The counts and the histograms are sums, so a
    // look's are those of its day and the days before: the counts and value passes group by day (look j's group number
    // is day j's), and the looks are summed here (the counts) and in mergeLooks() (the histograms and fetched buckets).
    // Only the cross sums, at each look's own thresholds, give each run one row per look, by arrayJoin over the days
    // received (a literal list: a scalar subquery does not reach the shards of a Distributed table).
    let crossExpr = expr;
    if (cumulative) {
      const dayKey = `k${keys.indexOf('day')}`;
      const days = [...new Set(rows.map((r) => r.dd))].sort(byName);
      rows = rows.flatMap((r) => days.filter((look) => look >= r.dd).map((look) => ({ ...r, [dayKey]: look })));
      crossExpr = { ...expr, day: `arrayJoin(arrayFilter(look -> look >= ${CLICKHOUSE_GROUP_BY.day}, [${days.map(sqlString).join(', ') || "''"}]))` };
    }
    names = keys.map((_, i) => [...new Set(rows.map((r) => r[`k${i}`]))].sort(byName));
    for (const k of grouped) {
      checkGroupCount(keys[k], names[k].length, schema, Boolean(GROUP_BY[keys[k]]?.pooled));
    }
    offset = [];
    let at = 0;
    for (const k of keys.keys()) { offset[k] = at; at += grouped.includes(k) ? names[k].length : 0; }
    counted = `${where} AND received_at <= ${sqlString(rows.length ? rows.map((r) => r.last).sort(byName).at(-1) : '')}` +
      grouped.map((k) => ` AND g${k} > 0`).join('');
    const numbered = (e, from) => `(SELECT *, ${grouped.map((k) => `transform(toString(${e[keys[k]]}), [${names[k].map(sqlString).join(', ')}],
      [${names[k].map((_, j) => j + 1).join(', ')}], 0) AS g${k}`).join(', ')} FROM ${from})`;
    RR = numbered(expr, 'run_records');
    RRcross = numbered(crossExpr, 'run_records');
    await chooseCells(rows, numbered);

    const n = (x) => Number(x ?? 0);
    const num = (x) => (x === null || x === undefined ? null : Number(x));
    const armCount = (arm) => classes.filter((c) => c.arm === arm).length;
    // A group's counts: the sums of its cells'.
    const group = (name, part) => {
      const sum = (f) => part.reduce((a, r) => a + n(r[f]), 0);
      const sumList = (f, len) => Array.from({ length: len }, (_, i) => part.reduce((a, r) => a + n(r[f][i]), 0));
      const pooled = (p) => poolMoments(part.map((r) => [n(r[`${p}_n`]), num(r[`${p}_mean`]), num(r[`${p}_var`])]));
      return {
        name, runs: sum('runs'), requests: sum('requests'), missing_metric: sum('missing'),
        classes: [sumList('control', armCount('control')), sumList('treatment', armCount('treatment'))],
        runs_paired: sum('paired'),
        samples: [
          { n: sum('n_h2'), runs: sum('runs_h2'), stats: [], below: [] },
          { n: sum('n_h3'), runs: sum('runs_h3'), stats: [], below: [] },
          { n: sum('d_n'), runs: sum('d_n'), stats: [], below: [] },
        ],
        diffs: pooled('d'), diffs_h2_first: pooled('d1'), diffs_h3_first: pooled('d3'),
        cross: [],
      };
    };
    const squaresOf = (part) => ['nn0', 'nn1', 'nn23'].map((f) => part.reduce((a, r) => a + n(r[f]), 0));
    squares = new Map([[0, squaresOf(rows)]]);
    for (const k of grouped) names[k].forEach((v, j) => squares.set(offset[k] + j + 1, squaresOf(rows.filter((r) => r[`k${k}`] === v))));
    const stored = rows.reduce((a, r) => a + n(r.stored), 0);
    const first = rows.length ? rows.map((r) => r.first).sort(byName)[0] : null;
    const last = rows.length ? rows.map((r) => r.last).sort(byName).at(-1) : null;

    histograms.clear();
    cells.clear();
    if (rows.length) {
      // One 64-bit key per row: grouping by the combination of groups first, then per grouping, was slower.
      const text = await pass('histograms', `SELECT ${keySql()} AS key, sum(c), sum(w), sum(n), sum(o), min(v), max(v)
        FROM (${valuesSql()}) GROUP BY key ORDER BY key`, { tsv: true });
      const [key, ...fields] = tsvColumns(text, 7);
      // Rows come in key order: each group's sample is one run of rows, in bucket order.
      for (let r0 = 0; r0 < key.length;) {
        const gs = Math.floor(key[r0] / 2 ** 24);
        let r1 = r0;
        while (r1 < key.length && Math.floor(key[r1] / 2 ** 24) === gs) r1++;
        const { gid, s } = splitKey(key[r0]);
        histograms.set(`${gid}/${s}`, histogram(key.subarray(r0, r1).map((k) => splitKey(k).b), fields.map((f) => f.subarray(r0, r1))));
        r0 = r1;
      }
      // The groups made of others: overall (the first grouping's groups), and the cumulative looks (each day's group
      // and the days' before).
      for (const s of [0, 1, 2]) {
        const of = (gid) => histograms.get(`${gid}/${s}`);
        if (cumulative) {
          let look = null;
          const looks = dayIds().map((gid) => (look = mergeHistograms(look, of(gid))));
          dayIds().forEach((gid, j) => (looks[j] ? histograms.set(`${gid}/${s}`, looks[j]) : histograms.delete(`${gid}/${s}`)));
        } else {
          const all = partsOf(0).reduce((acc, gid) => mergeHistograms(acc, of(gid)), null);
          if (all) histograms.set(`0/${s}`, all);
        }
      }
    }
    // The load_error beacons by reason, as readReportData.mjs counts them (every arms mode).
    const loadErrors = (await pass('load-errors', `SELECT reason, uniqExact(run_id) AS n FROM runs
      WHERE outcome = 'load_error' AND received_at >= ${sqlString(since)} GROUP BY reason`)).map((r) => ({ reason: r.reason, n: n(r.n) }));
    // The selected runs whose core ran on the page's main thread, by why, as readReportData.mjs counts them ('unknown'
    // in a store whose runs table has no reason yet: one opened read-only since the core gained it).
    const [{ has }] = await pass('main-thread-column', `SELECT count() AS has FROM system.columns
      WHERE database = currentDatabase() AND table = 'runs' AND name = 'worker_fallback'`);
    const reason = Number(has) ? "if(worker_fallback = '', 'unknown', worker_fallback)" : "'unknown'";
    const mainThread = (await pass('main-thread', `SELECT ${reason} AS reason,
      uniqExact(run_id) AS n FROM runs WHERE run_context = 'main' AND received_at >= ${sqlString(since)}
      AND arms = ${sqlString(arms)} AND ifNull(payload_bytes, 0) = ${Number(payloadBytes)} GROUP BY reason`))
      .map((r) => ({ reason: r.reason, n: n(r.n) }));
    // Every payload mode stored for this arms mode, as readReportData.mjs lists them.
    const payloadModes = (await pass('payload-modes', `SELECT payload_bytes AS bytes, count() AS runs FROM run_records
      WHERE arms = ${sqlString(arms)} AND received_at >= ${sqlString(since)} GROUP BY bytes ORDER BY bytes`))
      .map((r) => ({ bytes: n(r.bytes), runs: n(r.runs) }));
    const regionKey = keys.indexOf('region');
    return sets.map((by, i) => {
      const k = keyOf[i];
      return {
        storedRuns: stored, received: { first, last }, by, regions: names[regionKey], groups: names[k], loadErrors, mainThread,
        payloadBytes, payloadModes, ...(pooledOf[by] ? { pooled: pooledOf[by] } : {}),
        // The looks' overall would hold each run once per look and is not read: left empty, nothing is asked of it.
        aggregates: { groups: [group('overall', cumulative ? [] : rows), ...names[k].map((v) => group(v, rows.filter((r) => r[`k${k}`] === v)))] },
      };
    });
  }

  // Picks the cells (a day received and a region) whose values the histogram and values passes read from the value
  // summary: those whose totals there (per sample: values, Σ w, Σ n, Σ o) equal the ones the counts found in
  // run_records, and that were received before today (UTC: a day still receiving runs could gain some between this check and
  // the passes). Any other cell (a day partly selected by since, one the summary misses or holds twice) is read from
  // run_records. Sets SV and rawCells.
  async function chooseCells(rows, numbered) {
    const noGroup = grouped.map((k) => ` AND g${k} > 0`).join('');
    SV = '';
    rawCells = '1';
    if (!readSummary || !rows.length) return;
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
      add(0, r.n_h2, r.nn0, r.nn0, r.nn23);
      add(1, r.n_h3, r.nn1, r.nn1, r.nn23);
      add(2, r.paired, r.paired, r.paired, 0);
    }
    const today = new Date(now).toISOString().slice(0, 10);
    const days = [...new Set([...want.keys()].map((c) => JSON.parse(c)[0]))].filter((d) => d < today);
    if (!days.length) return;
    const totals = await pass('summary-totals', `SELECT day, region, s, sum(cnt) AS c, sum(w) AS w, sum(n) AS n, sum(o) AS o
      FROM run_values WHERE ${mode} AND metric = ${sqlString(metric)} AND day IN (${days.map(sqlString).join(', ')})
      GROUP BY day, region, s`);
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
    SV = `(SELECT * FROM ${numbered(summaryExpr, `run_values WHERE ${mode} AND metric = ${sqlString(metric)}
      AND (day, region) IN (${exact.map(([d, r]) => `(${sqlString(d)}, ${sqlString(r)})`).join(', ')})`)} WHERE 1${noGroup})`;
    // A day's received_at range as well as its text, so that the table's sorting key narrows the read (a text that
    // starts with the day sorts below the day followed by the byte 0xFF, which UTF-8 never holds).
    rawCells = raw.length ? raw.map(([d, r]) => `(region = ${sqlString(r)} AND received_at >= ${sqlString(d)}
      AND received_at < ${sqlString(d).slice(0, -1)}\\xFF' AND ${CLICKHOUSE_GROUP_BY.day} = ${sqlString(d)})`).join(' OR ') : '';
  }

  // Another source's count cells (countCells()) as this source's cells: keyed by this source's keys (each the other's
  // key of that name, or the day received), the ones that fall in one cell merged: counts added, the moments pooled,
  // the first and last received kept.
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
    const sums = ['stored', 'runs', 'requests', 'missing', 'n_h2', 'runs_h2', 'n_h3', 'runs_h3', 'paired', 'nn0', 'nn1', 'nn23'];
    return [...merged.values()].map(({ cell, parts }) => {
      if (parts.length === 1) return { ...parts[0], ...cell };
      const out = { ...cell };
      for (const f of sums) out[f] = parts.reduce((a, p) => a + num(p[f]), 0);
      for (const f of ['control', 'treatment']) out[f] = parts[0][f].map((_, i) => parts.reduce((a, p) => a + num(p[f][i]), 0));
      for (const p of ['d', 'd1', 'd3']) {
        [out[`${p}_n`], out[`${p}_mean`], out[`${p}_var`]] = poolMoments(parts.map((r) => [num(r[`${p}_n`]),
          r[`${p}_mean`] === null ? null : Number(r[`${p}_mean`]), r[`${p}_var`] === null ? null : Number(r[`${p}_var`])]));
      }
      out.first = parts.map((r) => r.first).sort()[0];
      out.last = parts.map((r) => r.last).sort().at(-1);
      return out;
    });
  }

  const splitKey = (key) => {
    const b = (key % 2 ** 24) - 2 ** 23;
    const gs = Math.floor(key / 2 ** 24);
    return { gid: Math.floor(gs / 4), s: gs % 4, b };
  };
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
  // The global id of group j (0: overall) of set i.
  const gidOf = (i, j) => (j === 0 ? 0 : offset[keyOf[i]] + j);

  // The bucket of group gid's sample s that holds a rank, and the rank's offset in it.
  function locateRank(gid, s, rank) {
    const h = histograms.get(`${gid}/${s}`);
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

  // The first bucket of group gid's sample s at or above bucket b (e undefined: none), and the sums below it.
  function locateBucket(gid, s, b) {
    const h = histograms.get(`${gid}/${s}`);
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

  // Fetches the distinct values (with their weights) of the buckets asked, [{gid, s, b}], that hold several values and
  // are not fetched yet: one pass over the values.
  async function fetchBuckets(name, wanted) {
    const keysWanted = new Set();
    const todo = new Map();
    for (const { gid, s, b } of wanted) {
      const ckey = `${gid}/${s}/${b}`;
      if (cells.has(ckey) || todo.has(ckey)) continue;
      todo.set(ckey, { gid, s, b });
      // A composite group's bucket is the sum of its parts' same bucket.
      for (const g of partsOf(gid)) keysWanted.add(keyOfBucket(g, s, b));
    }
    if (todo.size === 0) return;
    // Only the values of the wanted samples' buckets (whatever the group) are unrolled per grouping.
    const sb = [...new Set([...keysWanted].map((k) => k % 2 ** 26))];
    const text = await pass(name, `SELECT key, v, sum(c), sum(w), sum(n), sum(o) FROM (SELECT ${keySql()} AS key, v, c, w, n, o
      FROM (${valuesSql(sb)})) WHERE key IN (${[...keysWanted].join(', ')}) GROUP BY key, v`, { tsv: true });
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
      const { gid, s, b } = splitKey(key);
      for (const whole of wholesOf(gid)) add(`${whole}/${s}/${b}`, v, { count, w, n: nn, o });
    }
    for (const ckey of todo.keys()) cells.set(ckey, [...(found.get(ckey)?.values() ?? [])].sort((x, y) => x.v - y.v));
  }

  // The buckets of several values within reach of an estimate's interval bounds: ranks within z √(deff n p (1 - p))
  // of it, for z up to 3.3 (confidence 0.999) and a design effect up to 10.
  function boundBuckets(gid, s, rank, n) {
    const p = Math.min(1, Math.max(0, rank / Math.max(1, n - 1)));
    const reach = Math.ceil(3.3 * Math.sqrt(10 * n * p * (1 - p))) + 2;
    const h = histograms.get(`${gid}/${s}`);
    const out = [];
    if (!h) return out;
    const from = locateRank(gid, s, Math.max(0, rank - reach)).e.b;
    const to = locateRank(gid, s, Math.min(n - 1, rank + reach)).e.b;
    for (let { i } = locateBucket(gid, s, from); i < h.b.length && h.b[i] <= to; i++) {
      if (h.lo[i] !== h.hi[i]) out.push({ gid, s, b: h.b[i] });
    }
    return out;
  }

  // The buckets a threshold's sums need read value by value: its own, when it holds several values.
  function thresholdBucket(gid, s, q) {
    const { e } = locateBucket(gid, s, bucketOf(q));
    return e && e.b === bucketOf(q) && e.lo !== e.hi ? [{ gid, s, b: e.b }] : [];
  }

  // The sums of the values at or below q, {count, w, n, o}, of group gid's sample s: the buckets below q's, and in q's
  // the values at or below it.
  function sumsAtOrBelow(gid, s, q) {
    const b = bucketOf(q);
    const { e, below } = locateBucket(gid, s, b);
    const out = { ...below };
    if (e && e.b === b) {
      const part = e.lo === e.hi ? (q >= e.lo ? [e] : []) : cells.get(`${gid}/${s}/${b}`).filter((c) => c.v <= q);
      for (const c of part) for (const f of ['count', 'w', 'n', 'o']) out[f] += c[f];
    }
    return out;
  }

  // Per run, S(q) = its values at or below q, and over the runs Σ S, Σ S², Σ S N (N: its values), and Σ S2 N3, Σ N2 S3
  // across the arms. With a run's values sorted, S(q)² = Σ over its values at or below q of 2r - 1 (r: the value's rank
  // in the run), so each is a sum over the values at or below q of a weight the histogram pass sums per bucket (w, n, o):
  // only Σ S2 S3, a product of two thresholds, needs each run again (fillCross).
  function fillBelow(aggregatesList, needsList) {
    for (const [i, needs] of needsList.entries()) {
      for (const [j, s, q] of needs?.below ?? []) {
        const gid = gidOf(i, j);
        const t = sumsAtOrBelow(gid, s, q);
        // Each difference is a run of its own: S in {0, 1}, N = 1.
        const below = s === 2 ? [q, t.count, t.count, t.count, aggregatesList[i].groups[j].samples[2].n]
          : [q, t.count, t.w, t.n, squares.get(gid)[s]];
        aggregatesList[i].groups[j].samples[s].below.push(below);
      }
    }
  }

  async function fillCross(aggregatesList, needsList) {
    // The cross pairs of each group (global id; 0: overall), deduplicated.
    const want = new Map();
    for (const [i, needs] of needsList.entries()) {
      for (const [j, qa, qb] of needs?.cross ?? []) {
        const gid = gidOf(i, j);
        if (!want.has(gid)) want.set(gid, new Map());
        const l = want.get(gid);
        if (!l.has(`${qa}/${qb}`)) l.set(`${qa}/${qb}`, { qa, qb, k: l.size });
      }
    }
    const pairs = (gid) => [...(want.get(gid)?.values() ?? [])];
    // A threshold as the float64's bytes in hex (exact, and cheap for the parser); NaN for a group with fewer pairs.
    const float = (x) => {
      if (x === undefined) return 'nan';
      const b = Buffer.alloc(8);
      b.writeDoubleLE(x);
      return `reinterpretAsFloat64(unhex('${b.toString('hex')}'))`;
    };
    // Per key, pair k of every group, picked by the row's group number (a flat list of numbers: ClickHouse indexes it
    // per row far faster than a list of lists); overall: the number itself.
    const sums = [];
    for (const tag of [...grouped.map((k) => `k${k}`), 'o']) {
      const ids = tag === 'o' ? [0] : names[Number(tag.slice(1))].map((_, j) => offset[Number(tag.slice(1))] + j + 1);
      const most = Math.max(...ids.map((gid) => pairs(gid).length));
      for (let k = 0; k < most; k++) {
        const pick = (f) => (tag === 'o' ? float(pairs(0)[k]?.[f]) : `[${ids.map((gid) => float(pairs(gid)[k]?.[f])).join(', ')}][g${tag.slice(1)}]`);
        sums.push(`sum(toUInt64(arrayCount(x -> x <= ${pick('qa')}, ${C}) * arrayCount(y -> y <= ${pick('qb')}, ${T}))) AS ${tag}_${k}`);
      }
    }
    const gs = grouped.map((k) => `g${k}`).join(', ');
    const rows = await pass('cross', `SELECT ${gs}, ${sums.join(',\n  ')}
      FROM ${RRcross} WHERE ${counted} AND length(${C}) > 0 AND length(${T}) > 0 GROUP BY ${gs}`);
    // Each group's sums: those of its cells.
    const totals = new Map();
    const addInto = (gid, tag, row) => {
      if (!totals.has(gid)) totals.set(gid, []);
      const t = totals.get(gid);
      pairs(gid).forEach((_, k) => { t[k] = (t[k] ?? 0) + Number(row[`${tag}_${k}`]); });
    };
    for (const row of rows) {
      for (const k of grouped) addInto(offset[k] + Number(row[`g${k}`]), `k${k}`, row);
      addInto(0, 'o', row);
    }
    for (const [i, needs] of needsList.entries()) {
      for (const [j, qa, qb] of needs?.cross ?? []) {
        const gid = gidOf(i, j);
        const { k } = want.get(gid).get(`${qa}/${qb}`);
        const ss = totals.get(gid)?.[k] ?? 0;
        aggregatesList[i].groups[j].cross.push([qa, qb, ss, sumsAtOrBelow(gid, 0, qa).o, sumsAtOrBelow(gid, 1, qb).o, squares.get(gid)[2]]);
      }
    }
  }

  return {
    start,
    passes,
    /**
     * After start(): a pooled grouping's values shown by name, every other value being OTHER_GROUP (null for a grouping
     * that pools nothing). A shown value may have no group in the report (one without a measured request).
     */
    shown: (by) => shownOf[by] ?? null,
    /** The counts pass's cells (after start()), for another source's countsFrom. */
    countCells: () => countCells,
    /**
     * Adds what each set's needs ask ({ranks: [[g, s, rank]], below: [[g, s, q]], cross: [[g, q2, q3]]}) to its
     * aggregates: one pass for the buckets of several values that the ranks and thresholds fall in, one for the cross
     * sums.
     */
    async fill(aggregatesList, needsList, estimates = []) {
      const ranks = [];
      const buckets = [];
      for (const [i, needs] of needsList.entries()) {
        for (const [j, s, rank] of needs?.ranks ?? []) {
          const gid = gidOf(i, j);
          const at = locateRank(gid, s, rank);
          ranks.push({ i, j, s, rank, gid, ...at });
          if (at.e.lo !== at.e.hi) buckets.push({ gid, s, b: at.e.b });
          // An estimate's interval bounds are ranks near it, asked a round later: the buckets that may hold them are
          // fetched now, in the same pass (a bound outside them is fetched when asked).
          const n = aggregatesList[i].groups[j].samples[s].n;
          if ((estimates[i] ?? []).some((p) => Math.abs(Math.floor((n - 1) * p) - rank) <= 1)) buckets.push(...boundBuckets(gid, s, rank, n));
        }
        for (const [j, s, q] of needs?.below ?? []) buckets.push(...thresholdBucket(gidOf(i, j), s, q));
        for (const [j, qa, qb] of needs?.cross ?? []) buckets.push(...thresholdBucket(gidOf(i, j), 0, qa), ...thresholdBucket(gidOf(i, j), 1, qb));
      }
      if (buckets.length) await fetchBuckets('ranks', buckets);
      for (const r of ranks) {
        let value = r.e.lo;
        if (r.e.lo !== r.e.hi) {
          let at = 0;
          const hit = cells.get(`${r.gid}/${r.s}/${r.e.b}`).find((c) => (at += c.count) > r.offset);
          if (!hit) throw new Error(`the values of bucket ${r.e.b} do not hold rank ${r.rank}`);
          value = hit.v;
        }
        aggregatesList[r.i].groups[r.j].samples[r.s].stats.push([r.rank, value]);
      }
      fillBelow(aggregatesList, needsList);
      if (needsList.some((nd) => nd?.cross.length)) await fillCross(aggregatesList, needsList);
    },
  };
}
