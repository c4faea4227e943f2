// Prints the per-protocol table (n, p50..p99 of network time, h3 - h2 in ms and %) computed by the C++ core.

const fmt = (v, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '-');
const signed = (v, digits = 1) => (Number.isFinite(v) ? `${v > 0 ? '+' : ''}${v.toFixed(digits)}` : '-');

// comparison: the parsed JSON of core.compareArms(h2Values, h3Values).
export function formatArmTable(comparison, { metric = 'network_ms' } = {}) {
  const lines = [`${metric}: HTTP/2 n=${comparison.n_h2} requests, HTTP/3 n=${comparison.n_h3} requests`];
  if (comparison.rows.length === 0) {
    lines.push('(no table: an arm has no usable samples)');
    return lines.join('\n');
  }
  const header = ['', 'HTTP/2 ms', 'HTTP/3 ms', 'h3-h2 ms', 'h3-h2 %'];
  const rows = comparison.rows.map((r) => [`p${Math.round(r.p * 100)}`, fmt(r.h2, 2), fmt(r.h3, 2), signed(r.diff_ms, 2),
    `${signed(r.diff_pct)}%`]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  lines.push(line(header), ...rows.map(line));
  return lines.join('\n');
}
