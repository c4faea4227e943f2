// The connection-setup view of the report: from each run's pre-warm requests, its cold HTTP/2 connection (TCP+TLS to
// the HTTP/2 origin) and its cold HTTP/3 connection (QUIC to the HTTP/3 origin), compared within the run. Which request
// is a run's cold sample, and every statistic, is the C++ core's (wasm/core/connection_setup.hpp, the report's own
// inference): the core writes each run's cold-setup record when the beacon is stored, SQLite's report reads those
// records in its one pass (readReportData.mjs), ClickHouse's through its aggregate source
// (clickhouseConnectionSetup.mjs), and this file shapes the view the text, HTML and JSON reports show.

/** The arms mode the view is made of: only the experiment warms both an HTTP/2 and an HTTP/3 origin. */
export const SETUP_ARMS = 'h2-h3';

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
