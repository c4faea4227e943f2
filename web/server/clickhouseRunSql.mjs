// The SQL over one run_records row that both the store's value summary (run_values, filled at insert by a materialized
// view: clickhouseStore.mjs) and the report's passes over the raw rows (web/report/clickhouseAggregates.mjs) compute:
// the groupings' expressions, a run's median and paired difference, and the rows a run adds to the histograms. One
// home for each, so that a summary row and a value unrolled from run_records are the same row.

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
/** A run's type-7 median of the values in array column a (their number even: the mean of the middle two). */
export const medianSql = (a) => `if(length(${a}) % 2 = 1, ${sorted(a)}[${half(a)} + 1], (${sorted(a)}[${half(a)}] + ${sorted(a)}[${half(a)} + 1]) / 2)`;
/** Whether a run is paired (values in both arms), and its paired difference: treatment's median minus control's. */
export const pairedSql = (C, T) => ({ both: `(length(${C}) > 0 AND length(${T}) > 0)`, diff: `(${medianSql(T)} - ${medianSql(C)})` });

/**
 * The rows a run adds to a metric's three samples, as an array of tuples (s, v, w, n, o): s 0 = each control value v,
 * 1 = each treatment value, 2 = the paired difference; w = 2r - 1 for the value of rank r among the run's values of its
 * arm, n = that arm's number of values in the run, o = the other arm's (a difference: 1, 1, 0). The histograms and the
 * sums at a threshold are sums of these over the values (clickhouseAggregates.mjs).
 */
export function runValueTuplesSql(C, T) {
  const { both, diff } = pairedSql(C, T);
  const arm = (s, A, O) => `arrayMap((x, r) -> (toUInt8(${s}), x, toUInt64(2 * r - 1), toUInt64(length(${A})), toUInt64(length(${O}))),
      arraySort(${A}), arrayEnumerate(${A}))`;
  return `arrayConcat(${arm(0, C, T)}, ${arm(1, T, C)},
      arrayMap(x -> (toUInt8(2), x, toUInt64(1), toUInt64(1), toUInt64(0)), arrayFilter(x -> ${both}, [${diff}])))`;
}
