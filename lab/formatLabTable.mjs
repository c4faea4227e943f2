// Text tables for `npm run lab`: network_ms quantiles per setting and arm (with h3 - h2), the report's intervals of Δ per
// setting with whether each covers 0 (what an A/A test must show), and the fidelity fit per arm.

const f = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const s = (v, d = 1) => (Number.isFinite(v) ? `${v > 0 ? '+' : ''}${v.toFixed(d)}` : '-');
const PS = [0.5, 0.9, 0.95, 0.99];

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** results: measureSetting() outputs. One row per setting: n, h2 p50/p90/p95/p99, h3 p50/p90/p95/p99, h3-h2 at each. */
export function formatLabTable(results) {
  const header = ['setting', 'n h2/h3', ...PS.map((p) => `h2 p${p * 100}`), ...PS.map((p) => `h3 p${p * 100}`),
    ...PS.map((p) => `d p${p * 100}`)];
  const rows = results.map((r) => {
    const at = (p) => r.comparison.rows.find((x) => Math.abs(x.p - p) < 1e-9) ?? {};
    return [r.label, `${r.comparison.n_h2}/${r.comparison.n_h3}`, ...PS.map((p) => f(at(p).h2)), ...PS.map((p) => f(at(p).h3)),
      ...PS.map((p) => s(at(p).diff_ms))];
  });
  const aa = results.some((r) => r.aa) ? '; in A/A rows h2 is the control arm and h3 the treatment arm, same protocol' : '';
  return `network_ms (ms); d = h3 - h2 (the report's table)${aa}\n${table(header, rows)}`;
}

const defined = (c) => Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1]);
const covers = (c) => c[0] <= 0 && c[1] >= 0;
const ci = (c, d) => (defined(c) ? `[${s(c[0], d)}, ${s(c[1], d)}]` : 'n/a');

/**
 * results: measureSetting() outputs. Per setting and percentile of the report: Δ and its interval in ms and in %, and
 * whether both intervals cover 0 (n/a: no interval, too few runs); then per setting how many of them do, and for an A/A
 * setting the verdict.
 */
export function formatIntervals(results, confidence = 0.95) {
  const conf = `${Math.round(confidence * 100)}%`;
  const header = ['setting', 'p', 'd ms', `${conf} CI ms`, 'd %', `${conf} CI %`, 'covers 0'];
  const rows = [];
  const verdicts = [];
  for (const r of results) {
    const all = r.comparison.rows;
    const withCi = all.filter((row) => defined(row.ci_ms) && defined(row.ci_pct));
    const covered = withCi.filter((row) => covers(row.ci_ms) && covers(row.ci_pct));
    for (const row of all) {
      const has = withCi.includes(row);
      rows.push([r.label, `p${Number((row.p * 100).toFixed(1))}`, s(row.diff_ms, 2), ci(row.ci_ms, 2), `${s(row.diff_pct, 1)}%`,
        ci(row.ci_pct, 1), !has ? 'n/a' : covered.includes(row) ? 'yes' : 'NO']);
    }
    const verdict = !r.aa ? '' : withCi.length < all.length || all.length === 0 ? ' (A/A: no verdict, an interval is missing)'
      : covered.length === all.length ? ' (A/A: PASS)' : ' (A/A: FAIL)';
    verdicts.push(`${r.label}: ${covered.length} of ${all.length} percentiles have both intervals covering 0${verdict}`);
    verdicts.push(`  ${orderLine(r.comparison.order)}`);
  }
  return `Δ = treatment - control of network_ms with the report's intervals (run as the unit)\n${table(header, rows)}\n` +
    verdicts.join('\n');
}

// The report's order-effect test for a setting: whether running HTTP/3 first changes the paired within-run difference.
function orderLine(o) {
  if (!o) return 'order effect: not testable (needs runs in both orders: --order random)';
  return `order effect: paired Δ ${s(o.mean_h2_first, 2)} ms h2-first (${o.n_h2_first} runs), ${s(o.mean_h3_first, 2)} ms ` +
    `h3-first (${o.n_h3_first}); difference ${s(o.diff, 2)} ms ${ci(o.ci, 2)}, p = ${f(o.p_value, 3)}`;
}

/** fits: {h2: fidelityFit(...), h3: ...}. */
export function formatFidelity(fits) {
  const lines = [];
  for (const [arm, fit] of Object.entries(fits)) {
    lines.push(`${arm}: median at 0 ms ${f(fit.base, 2)} ms; least squares median = ${f(fit.intercept, 2)} + ${f(fit.slope, 3)} x RTT; ` +
      `rule ${fit.ok ? 'MET' : 'NOT MET'}`);
    const rows = fit.rows.map((r) => [`  rtt ${r.rttMs} ms`, f(r.median, 2), f(r.expected, 2), s(r.residual, 2), `±${f(r.tolerance, 2)}`,
      r.ok ? 'ok' : 'OUT']);
    if (rows.length) lines.push(table(['', 'median', 'expected', 'residual', 'tolerance', ''], rows));
  }
  return lines.join('\n');
}
