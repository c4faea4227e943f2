// The aggregate definitions in SQL, each the twin of one in C++ (wasm/core/value_aggregates.cpp, exact_sum.cpp): over
// one run_records row, what both the store's value summary (run_values, filled at insert by a materialized view:
// clickhouseSchema.mjs) and the report's passes over the raw rows (web/report/clickhouseAggregates.mjs) compute: the
// groupings' expressions, a run's median and paired difference, the rows a run adds to the histograms, and the limbs
// of a sample's exact sums. One home for each in SQL, so that a summary row and a value unrolled from run_records are
// the same row; web/test/unit/clickhouseReport.test.mjs holds them to the core's on the same data (the reports of both
// stores byte for byte).

/**
 * run_records and runs as every reader reads them: FINAL, so that a run two collectors both wrote (each given the same
 * beacon at once, neither finding it in: the store's insert-time check races) is read once before ReplacingMergeTree
 * has merged its copies away. The copies share their sorting key (clickhouseSchema.mjs) and differ only in what each
 * collector adds (received_at): FINAL keeps one whole row, and a query's WHERE is applied to the rows FINAL kept
 * (never PREWHERE, which ClickHouse applies before: a filter on received_at would then let the other copy in).
 */
export const RUN_RECORDS = 'run_records FINAL';
export const RUNS = 'runs FINAL';

/** A text as a ClickHouse string literal (quotes and backslashes escaped). */
export const sqlString = (s) => `'${String(s).replace(/[\\']/g, '\\$&')}'`;

/**
 * What a ClickHouse report can be split by, as an expression over run_records (the SQLite store's GROUP_BY has more: the
 * other splits need the runs table there, which these passes do not read yet).
 */
export const CLICKHOUSE_GROUP_BY = Object.freeze({
  region: 'region', day: 'substring(received_at, 1, 10)',
  // The network's label the collector stored (networkLabel()); 'unknown' without one, as GROUP_BY's groups.
  network: "ifNull(network, 'unknown')",
});

/** The same groupings over the value summary: columns of run_values, each filled with CLICKHOUSE_GROUP_BY's expression. */
export const SUMMARY_GROUP_BY = Object.freeze({ region: 'region', day: 'day', network: 'network' });

const sorted = (a) => `arraySort(${a})`;
const half = (a) => `intDiv(length(${a}), 2)`;
// A run's type-7 median of the values in array column a (their number even: the mean of the middle two).
const medianSql = (a) => `if(length(${a}) % 2 = 1, ${sorted(a)}[${half(a)} + 1], (${sorted(a)}[${half(a)}] + ${sorted(a)}[${half(a)} + 1]) / 2)`;
/**
 * Whether a run is paired (values in both arms); whether it has a paired difference (both arms' medians are times of
 * finished requests, at most maxMs, the core's limits.maxDurationMs: above it lie only the requests that did not
 * finish, request_class.hpp); and that difference: treatment's median minus control's (value_aggregates.hpp).
 */
export const pairedSql = (C, T, maxMs) => ({ both: `(length(${C}) > 0 AND length(${T}) > 0)`,
  finished: `(length(${C}) > 0 AND length(${T}) > 0 AND ${medianSql(C)} <= ${Number(maxMs)} AND ${medianSql(T)} <= ${Number(maxMs)})`,
  diff: `(${medianSql(T)} - ${medianSql(C)})` });

/**
 * The rows a run adds to a metric's three samples, as an array of tuples (s, v, w, n, o): s 0 = each control value v,
 * 1 = each treatment value, 2 = the paired difference (pairedSql's finished runs; maxMs its limit); w = 2r - 1 for the value of rank r among the run's values of its
 * arm, n = that arm's number of values in the run, o = the other arm's (a difference: 1, 1, 0). The histograms and the
 * sums at a threshold are sums of these over the values (clickhouseAggregates.mjs).
 */
export function runValueTuplesSql(C, T, maxMs) {
  const { finished, diff } = pairedSql(C, T, maxMs);
  const arm = (s, A, O) => `arrayMap((x, r) -> (toUInt8(${s}), x, toUInt64(2 * r - 1), toUInt64(length(${A})), toUInt64(length(${O}))),
      arraySort(${A}), arrayEnumerate(${A}))`;
  return `arrayConcat(${arm(0, C, T)}, ${arm(1, T, C)},
      arrayMap(x -> (toUInt8(2), x, toUInt64(1), toUInt64(1), toUInt64(0)), arrayFilter(x -> ${finished}, [${diff}])))`;
}

/**
 * A finite Float64 expression x's share of its sample's exact sums (ExactSum, wasm/core/exact_sum.hpp): x is
 * ±M · 2^(shift − 1074), M its 53-bit mantissa. { shift (0..2046), limbs: nine Int64 expressions: ±M's high 26 and
 * low 27 bits (Σ x), and the coefficients of M² in 14-bit limbs (Σ x²) }, each summed per shift (exact for up to 2^33
 * values), then put together per sample by exactKeysSql() and momentSums().
 */
export function exactLimbsSql(x) {
  const b = `reinterpretAsUInt64(reinterpretAsString(${x}))`;
  const e = `bitAnd(bitShiftRight(${b}, 52), 2047)`;
  const m = `if(${e} = 0, bitAnd(${b}, 4503599627370495), bitOr(bitAnd(${b}, 4503599627370495), 4503599627370496))`;
  const sign = `(1 - 2 * toInt64(bitShiftRight(${b}, 63)))`;
  const limb = (i) => `toInt64(bitAnd(bitShiftRight(${m}, ${14 * i}), 16383))`;
  const k = (j) => [0, 1, 2, 3].flatMap((i) => (j - i >= 0 && j - i <= 3 && i <= j - i ? [`${i === j - i ? 1 : 2} * ${limb(i)} * ${limb(j - i)}`] : [])).join(' + ');
  return { shift: `if(${e} = 0, 0, ${e} - 1)`, limbs: [`${sign} * toInt64(bitShiftRight(${m}, 27))`, `${sign} * toInt64(bitAnd(${m}, 134217727))`,
    ...[0, 1, 2, 3, 4, 5, 6].map(k)] };
}

/**
 * sumMap()'s keys for a row of limb sums (exactLimbsSql()'s nine, then the count of values) of sample column `column`,
 * split `tag` (0..15: the run's order) and `shift`: ((column · 16 + tag) · 2048 + shift) · 16 + slot. A literal list:
 * 18.16 does not see the columns a lambda reads when it prunes a subquery's.
 */
export const exactKeysSql = (column, tag, shift) => `[${[...Array(10).keys()].map((slot) => `toUInt64(((${column} * 16 + ${tag}) * 2048 + ${shift}) * 16 + ${slot})`).join(', ')}]`;

/**
 * The exact sums (MomentSums, as the core reads them: n, and Σ x, Σ x² as ExactSum::text()) of sample column `column`
 * from sumMap()'s [keys, values] of exactKeysSql() (numbers or texts of 64-bit integers), all added; tag: only that
 * split's values (null: every split's).
 */
export function momentSums(maps, column, tag = null) {
  let n = 0n;
  let sum = 0n;
  let sq = 0n;
  for (const [keys, values] of maps) {
    keys.forEach((k, i) => {
      const key = Number(k);
      const slot = key % 16;
      const shift = Math.floor(key / 16) % 2048;
      const split = Math.floor(key / 32768);
      if (Math.floor(split / 16) !== column || (tag !== null && split % 16 !== tag)) return;
      const v = BigInt(values[i]);
      if (slot === 9) n += v;
      else if (slot < 2) sum += v << BigInt(shift + (slot === 0 ? 27 : 0));
      else sq += v << BigInt(2 * shift + 14 * (slot - 2));
    });
  }
  return { n: Number(n), sum: sum.toString(16), sum_sq: sq.toString(16) };
}

/** The same MomentSums of a histogram of distinct values (b: the values, count: how many of each; null: none). */
export function valueMomentSums(h) {
  let n = 0n;
  let sum = 0n;
  let sq = 0n;
  const bytes = Buffer.alloc(8);
  (h?.b ?? []).forEach((x, i) => {
    bytes.writeDoubleLE(x);
    const bits = bytes.readBigUInt64LE();
    const e = (bits >> 52n) & 2047n;
    const m = (bits & ((1n << 52n) - 1n)) | (e ? 1n << 52n : 0n);
    const shift = e ? e - 1n : 0n;
    const k = BigInt(h.count[i]);
    n += k;
    sum += ((bits >> 63n ? -m : m) * k) << shift;
    sq += (m * m * k) << (2n * shift);
  });
  return { n: Number(n), sum: sum.toString(16), sum_sq: sq.toString(16) };
}
