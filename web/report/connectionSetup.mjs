// The connection-setup view of the report: from each run's pre-warm requests, its cold HTTP/2 connection (TCP+TLS to
// the HTTP/2 origin) and its cold HTTP/3 connection (QUIC to the HTTP/3 origin), compared within the run. Which request
// is a run's cold sample, and every statistic, is the C++ core's (wasm/core/connection_setup.hpp, the report's own
// inference): the core writes each run's cold-setup record when the beacon is stored (run_records.setup), and this file
// reads those records of SQLite for it (and the pre-warm rows of runs stored before the record existed), and shapes the
// view the text, HTML and JSON reports show (the ClickHouse store computes the same in SQL:
// clickhouseConnectionSetup.mjs).
import { GROUP_BY, OTHER_GROUP, groupCaseSql, groupNumberSql, payloadModeSql } from './readReportData.mjs';
import { hasSetupRecords, packedRequestColumns } from '../server/store.mjs';

/** The percentiles of the view: the body and the tail Dropbox reported. */
export const SETUP_PERCENTILES = Object.freeze([0.5, 0.9, 0.95]);
/** The arms mode the view is made of: only the experiment warms both an HTTP/2 and an HTTP/3 origin. */
export const SETUP_ARMS = 'h2-h3';

// The row columns the core reads (connection_setup.hpp, SetupRows).
const TEXT_COLUMNS = ['origin', 'result', 'protocol', 'server_protocol'];
const NUMBER_COLUMNS = ['idx', 'reused', 'connect_ms', 'tls_ms', 'network_ms'];
// Runs per query of the records: their concatenation is one BLOB (53 bytes a run).
const CHUNK_RUNS = 65536;

/**
 * db: a better-sqlite3 Database of the store; schema: core.schema(). Options: since (ISO, '' for all), by (one of
 * GROUP_BY), groups (the group names, as readReportData() gave them), payloadBytes (the report's payload mode: the view
 * reads the runs the report reads). Returns, for core.connectionSetupReport(), the
 * selected h2-h3 runs' cold-setup records, each prefixed with its group's number and concatenated by SQLite
 * (records: a Buffer), and the pre-warm rows of the selected runs stored without a record (rows, column by column:
 * such a run's request list is parsed here). A run whose group is not among `groups` is in neither, except that a
 * pooled split (network) puts the values it did not list in OTHER_GROUP.
 */
export function readSetupData(db, schema, { since = '', by = 'region', groups = [], payloadBytes = 0 } = {}) {
  const grouping = GROUP_BY[by];
  if (!grouping) throw new Error(`--by must be one of ${Object.keys(GROUP_BY).join(', ')}, got "${by}"`);
  const withRecords = hasSetupRecords(db);
  // A pooled split (network) puts the values it did not list in OTHER_GROUP, listed last, as the arms' report does.
  const other = grouping.pooled && groups.at(-1) === OTHER_GROUP ? groups.length : 0;
  const named = other ? groups.slice(0, -1) : groups;
  const join = grouping.runs ? 'JOIN runs r ON r.rowid = c.run' : '';
  const parts = [];
  if (withRecords && groups.length) {
    // The group's number as a BLOB literal; a run of no listed group makes NULL, which group_concat skips.
    const groupByte = groupCaseSql(grouping, named, (i) => groupNumberSql(i + 1), other ? groupNumberSql(other) : null);
    // NOT INDEXED: each chunk is a rowid range of run_records; through the (arms, ...) index SQLite would walk every
    // selected run's entry for each chunk.
    const chunk = db.prepare(`SELECT CAST(group_concat(${groupByte} || c.setup, '') AS BLOB) FROM run_records c NOT INDEXED ${join}
      WHERE c.run BETWEEN ? AND ? AND c.arms = ? AND ${payloadModeSql(db)} = ? AND c.received_at >= ? AND c.setup IS NOT NULL`).pluck();
    const { lo, hi } = db.prepare('SELECT coalesce(min(run), 1) AS lo, coalesce(max(run), 0) AS hi FROM run_records').get();
    for (let from = lo; from <= hi; from += CHUNK_RUNS) {
      const bytes = chunk.get(...named, from, Math.min(hi, from + CHUNK_RUNS - 1), SETUP_ARMS, payloadBytes, since);
      if (bytes) parts.push(bytes);
    }
  }
  // Runs without a record, found through the store's partial index of them where it has one (store.mjs).
  const indexed = withRecords && db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'run_records_no_setup'").get();
  const rows = readSetupRows(db, schema, { grouping, groups, other, since, payloadBytes, where: withRecords ? 'AND c.setup IS NULL' : '',
    index: indexed ? 'INDEXED BY run_records_no_setup' : '' });
  return { records: Buffer.concat(parts), rows };
}

// The pre-warm rows of the selected runs (`where`: a further condition on run_records c, `index` its index), from
// their request lists.
function readSetupRows(db, schema, { grouping, groups, other, where, index, since, payloadBytes }) {
  const packed = packedRequestColumns(schema);
  const at = Object.fromEntries([...TEXT_COLUMNS, ...NUMBER_COLUMNS, 'phase'].map((c) => [c, packed.indexOf(c)]));
  const groupOf = new Map(groups.map((name, i) => [name, i + 1]));
  const texts = [];
  const code = new Map();
  const textCode = (v) => {
    const s = typeof v === 'string' ? v : '';
    let c = code.get(s);
    if (c === undefined) {
      c = texts.length;
      texts.push(s);
      code.set(s, c);
    }
    return c;
  };
  const cols = { group: [], run: [], ...Object.fromEntries([...TEXT_COLUMNS, ...NUMBER_COLUMNS].map((c) => [c, []])) };
  const stmt = db.prepare(`SELECT coalesce(${grouping.sql}, 'unknown') AS g, c.run AS run, r.request_list AS list
    FROM run_records c ${index} JOIN runs r ON r.rowid = c.run WHERE c.arms = ? AND ${payloadModeSql(db)} = ? AND c.received_at >= ? ${where}
    ORDER BY c.run`).raw();
  for (const [g, run, list] of stmt.iterate(SETUP_ARMS, payloadBytes, since)) {
    const group = groupOf.get(g) ?? other;
    if (!group || !list) continue;
    for (const q of (at.phase === 0 ? prewarmPart(list) : JSON.parse(list))) {
      if (q[at.phase] !== 'prewarm') continue;
      cols.group.push(group);
      cols.run.push(run);
      for (const c of TEXT_COLUMNS) cols[c].push(textCode(q[at[c]]));
      for (const c of NUMBER_COLUMNS) cols[c].push(q[at[c]] ?? Number.NaN);
    }
  }
  return {
    texts, group: Uint16Array.from(cols.group), run: Float64Array.from(cols.run),
    ...Object.fromEntries(TEXT_COLUMNS.map((c) => [c, Uint32Array.from(cols[c])])),
    ...Object.fromEntries(NUMBER_COLUMNS.map((c) => [c, Float64Array.from(cols[c])])),
  };
}

// The requests of a run's list up to its first measured one, when no pre-warm request follows that (a beacon of the
// module lists its pre-warm first): a fifth of the text to parse. The list is JSON.stringify's text of arrays whose
// first value is the phase, and in that text an unescaped ["  never occurs inside a string, so it starts a request.
function prewarmPart(list) {
  const control = list.indexOf('["control"');
  const treatment = list.indexOf('["treatment"');
  const cut = control < 0 ? treatment : treatment < 0 ? control : Math.min(control, treatment);
  if (cut < 0 || list.includes('["prewarm"', cut)) return JSON.parse(list);
  return JSON.parse(`${list.slice(0, cut).replace(/,$/, '')}]`);
}

/** The view from SQLite: readSetupData()'s records and rows, computed by the core. confidence as the report's. */
export function connectionSetupFromData(core, { records, rows }, groupNames, { confidence = 0.95 } = {}) {
  const out = core.connectionSetupReport(records, rows, groupNames, { method: 'delta', confidence, percentiles: Float64Array.from(SETUP_PERCENTILES) });
  if (out.error) throw new Error(`the runs' cold-setup records or pre-warm requests do not read: ${out.error}`);
  return assembleSetup(core.schema(), out.groups);
}

/**
 * The view's data from the core's groups (overall first; either store): per group the runs, the outcome of each
 * protocol's cold sample, the share of runs whose first request to the HTTP/3 origin already went over HTTP/3, and per
 * metric the quantile rows (HTTP/2, HTTP/3, Δ = HTTP/3 − HTTP/2, each with its interval) and the paired within-run Δ; for
 * a metric the core does not pair (tls_ms), the HTTP/2 rows only. Groups without a run are left out.
 */
export function assembleSetup(schema, groups) {
  const metrics = schema.setupMetrics.map((m) => ({ name: m.name, paired: m.paired, description: m.description }));
  const [overall, ...rest] = groups;
  const shown = [overall, ...rest.filter((g) => g.runs > 0).sort((a, b) => b.runs - a.runs || (a.name < b.name ? -1 : 1))];
  return {
    arms: SETUP_ARMS,
    percentiles: [...SETUP_PERCENTILES],
    outcomes: schema.setupOutcomes.map((o) => ({ name: o.name, description: o.description })),
    metrics,
    groups: shown.map((g) => {
      const known = g.firstH3.over_h3 + g.firstH3.over_other;
      const view = {
        name: g.name, runs: g.runs, paired: g.paired, outcomes: g.outcomes,
        firstH3: { ...g.firstH3, share: known ? g.firstH3.over_h3 / known : null },
      };
      for (const m of metrics) {
        const { analysis, paired } = g.metrics[m.name];
        view[m.name] = m.paired
          ? { runs_paired: analysis.runs_paired, rows: analysis.rows, paired }
          : { rows: analysis.rows.map((r) => ({ p: r.p, h2: r.h2, ci_h2: r.ci_h2 })) };
      }
      return view;
    }),
  };
}
