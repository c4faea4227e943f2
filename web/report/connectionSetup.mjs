// The connection-setup view of the report: from each run's pre-warm requests, its cold HTTP/2 connection (TCP+TLS to
// the HTTP/2 origin) and its cold HTTP/3 connection (QUIC to the HTTP/3 origin), compared within the run. Which request
// is a run's cold sample, and every statistic, is the C++ core's (wasm/core/connection_setup.hpp, the report's own
// inference): the core writes each run's cold-setup record when the beacon is stored (run_records.setup), and this file
// reads those records of SQLite for it, and shapes the view the text, HTML and JSON reports show (the ClickHouse store
// computes the same in SQL: clickhouseConnectionSetup.mjs).
import { GROUP_BY, OTHER_GROUP } from './readReportData.mjs';

/** The arms mode the view is made of: only the experiment warms both an HTTP/2 and an HTTP/3 origin. */
export const SETUP_ARMS = 'h2-h3';

// Runs per query of the records: their concatenation is one BLOB (53 bytes a run).
const CHUNK_RUNS = 65536;

/**
 * db: a better-sqlite3 Database of the store. Options: since (ISO, '' for all), by (one of
 * GROUP_BY), groups (the group names, as readReportData() gave them), payloadBytes (the report's payload mode: the view
 * reads the runs the report reads). Returns, for core.connectionSetupReport(), the selected h2-h3 runs' cold-setup
 * records, each prefixed with its group's number and concatenated by SQLite (records: a Buffer). A run whose group is
 * not among `groups` is left out, except that a pooled split (network) puts the values it did not list in OTHER_GROUP.
 */
export function readSetupData(db, { since = '', by = 'region', groups = [], payloadBytes = 0 } = {}) {
  const grouping = GROUP_BY[by];
  if (!grouping) throw new Error(`--by must be one of ${Object.keys(GROUP_BY).join(', ')}, got "${by}"`);
  // A pooled split (network) puts the values it did not list in OTHER_GROUP, listed last, as the arms' report does.
  const other = grouping.pooled && groups.at(-1) === OTHER_GROUP ? groups.length : 0;
  const named = other ? groups.slice(0, -1) : groups;
  const join = grouping.runs ? 'JOIN runs r ON r.rowid = c.run' : '';
  const parts = [];
  if (groups.length) {
    // The group's number as a one-byte BLOB literal; a run of no listed group makes NULL, which group_concat skips.
    const byte = (n) => `x'${n.toString(16).padStart(2, '0')}'`;
    const groupByte = `CASE coalesce(${grouping.sql}, 'unknown') ${named.map((_, i) => `WHEN ? THEN ${byte(i + 1)}`).join(' ')}${other ? ` ELSE ${byte(other)}` : ''} END`;
    // NOT INDEXED: each chunk is a rowid range of run_records; through the (arms, ...) index SQLite would walk every
    // selected run's entry for each chunk.
    const chunk = db.prepare(`SELECT CAST(group_concat(${groupByte} || c.setup, '') AS BLOB) FROM run_records c NOT INDEXED ${join}
      WHERE c.run BETWEEN ? AND ? AND c.arms = ? AND c.payload_bytes = ? AND c.received_at >= ?`).pluck();
    const { lo, hi } = db.prepare('SELECT coalesce(min(run), 1) AS lo, coalesce(max(run), 0) AS hi FROM run_records').get();
    for (let from = lo; from <= hi; from += CHUNK_RUNS) {
      const bytes = chunk.get(...named, from, Math.min(hi, from + CHUNK_RUNS - 1), SETUP_ARMS, payloadBytes, since);
      if (bytes) parts.push(bytes);
    }
  }
  return { records: Buffer.concat(parts) };
}

/** The view from SQLite: readSetupData()'s records, computed by the core. confidence as the report's. */
export function connectionSetupFromData(core, { records }, groupNames, { confidence = core.schema().reportDefaults.confidence } = {}) {
  const out = core.connectionSetupReport(records, groupNames, { method: 'delta', confidence,
    percentiles: Float64Array.from(core.schema().reportDefaults.seriesPercentiles) });
  if (out.error) throw new Error(`the runs' cold-setup records do not read: ${out.error}`);
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
    percentiles: [...schema.reportDefaults.seriesPercentiles],
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
