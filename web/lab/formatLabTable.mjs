// Text tables for `npm run lab`: network_ms quantiles per setting and arm (with h3 - h2), and the fidelity fit per arm.

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
  return `network_ms (ms); d = h3 - h2 (the report's table)\n${table(header, rows)}`;
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
