// The connection-setup view as text (the view's data: connectionSetup.mjs): the cold HTTP/2 and HTTP/3 connections the
// pre-warm requests opened, per protocol at the view's percentiles with intervals, their difference within the run, and
// how often the first request to the HTTP/3 origin already went over HTTP/3.
import { alignTable, BY_LABELS, cells, percentileLabel } from './formatReport.mjs';

// formatReport.mjs imports this file: its cell formats are read when a view is formatted, not when the module loads.
const metricLabel = Object.freeze({ connect_ms: 'connect', network_ms: 'network', tls_ms: 'TLS' });
/** What each protocol's cold sample is, in the words the text and HTML use. */
export const SETUP_WHAT = Object.freeze({
  h2: 'HTTP/2: TCP + TLS to the HTTP/2 origin',
  h3: 'HTTP/3: QUIC to the HTTP/3 origin',
});
/** Why tls_ms is shown for HTTP/2 only. */
export const TLS_NOTE = 'TLS for HTTP/2 only: QUIC carries TLS in its handshake, so for HTTP/3 the browsers report '
  + 'secureConnectionStart at (or within a fraction of a millisecond of) connectStart';

/** One line per protocol: how many runs gave a cold sample, and why the others did not. */
export function outcomeText(g, p) {
  const { int } = cells;
  const o = g.outcomes[p];
  const others = Object.entries(o).filter(([k, n]) => k !== 'cold' && n > 0).map(([k, n]) => `${k} ${int(n)}`);
  return `${int(o.cold)} runs${others.length ? ` (not cold: ${others.join(', ')})` : ''}`;
}

/** The share line: first request to the HTTP/3 origin already over HTTP/3. */
export function firstH3Text(g) {
  const { int, pct } = cells;
  const f = g.firstH3;
  const known = f.over_h3 + f.over_other;
  return `first request to the HTTP/3 origin already over HTTP/3 (Alt-Svc remembered, or the browser told to): ${pct(f.share)} `
    + `(${int(f.over_h3)} of ${int(known)} runs${f.unknown ? `; ${int(f.unknown)} more whose first request failed or whose protocol is not verified` : ''})`;
}

/** view: report.connectionSetup; report: for the confidence. Returns the lines. */
export function formatConnectionSetup(view, report) {
  const { num, signed, int, pct, interval } = cells;
  // A quantile's own interval: unsigned, as the quantile.
  const range = (c) => (Array.isArray(c) && c.every(Number.isFinite) ? `[${num(c[0])}, ${num(c[1])}]` : 'n/a');
  const conf = `${Math.round(report.confidence * 100)}%`;
  const [overall, ...groups] = view.groups;
  const lines = [`== connection setup: the cold connections the pre-warm requests opened (never in the arms above), ${int(overall.runs)} runs of arms ${view.arms}`,
    `cold ${SETUP_WHAT.h2}: ${outcomeText(overall, 'h2')}`,
    `cold ${SETUP_WHAT.h3}: ${outcomeText(overall, 'h3')}`,
    `both in ${int(overall.paired)} runs; ${firstH3Text(overall)}`];
  const header = ['', 'HTTP/2 ms', `${conf} CI`, 'HTTP/3 ms', `${conf} CI`, 'Δ ms', `${conf} CI Δ ms`, ''];
  const rows = [];
  for (const m of view.metrics) {
    for (const r of overall[m.name].rows) {
      const label = `${metricLabel[m.name] ?? m.name} ${percentileLabel(r.p)}`;
      rows.push(m.paired
        ? [label, num(r.h2), range(r.ci_h2), num(r.h3), range(r.ci_h3), signed(r.diff_ms), interval(r.ci_ms, 2), r.significant ? '*' : '']
        : [label, num(r.h2), range(r.ci_h2), '-', '', '', '', '']);
    }
  }
  if (rows.length) lines.push(...alignTable(header, rows), `${TLS_NOTE}; Δ = HTTP/3 − HTTP/2, quantile by quantile`);
  if (view.metrics.some((m) => m.paired && overall[m.name].rows.length === 0)) {
    lines.push('(no connect or network rows: they need runs with a cold sample of each protocol)');
  }
  for (const m of view.metrics.filter((x) => x.paired)) {
    const p = overall[m.name].paired;
    lines.push(p
      ? `paired within-run Δ ${metricLabel[m.name]} (cold HTTP/3 − cold HTTP/2 of each run, ${int(p.n)} runs): median ${signed(p.median)} ms ` +
        `${interval(p.ci_median, 2)}, mean ${signed(p.mean)} ms ${interval(p.ci_mean, 2)}, p10 ${signed(p.p10)}, p90 ${signed(p.p90)} ms`
      : `paired within-run Δ ${metricLabel[m.name]}: fewer than 2 runs with both cold samples`);
  }
  if (groups.length) {
    const p50 = (g, name) => g[name].paired;
    lines.push(`by ${BY_LABELS[report.by ?? 'region']}:`, ...alignTable(['', 'runs', 'both cold', 'paired Δ connect median [CI]', 'paired Δ network median [CI]', 'first over HTTP/3'],
      groups.map((g) => [g.name, int(g.runs), int(g.paired),
        p50(g, 'connect_ms') ? `${signed(p50(g, 'connect_ms').median)} ${interval(p50(g, 'connect_ms').ci_median, 2)}` : '-',
        p50(g, 'network_ms') ? `${signed(p50(g, 'network_ms').median)} ${interval(p50(g, 'network_ms').ci_median, 2)}` : '-',
        pct(g.firstH3.share)])));
  }
  return lines;
}
