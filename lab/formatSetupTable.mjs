// The lab's connection-setup table: per setting, the cold connections the pre-warm opened (the report's own
// connection-setup view, web/report/connectionSetup.mjs) against the round trips each handshake should take: TCP + TLS
// 1.3 two (TLS one of them), QUIC one, so cold HTTP/2 − cold HTTP/3 one round trip (docs/lab.md, "Connection setup").

/** The tolerance of a round-trip check at RTT r: ±15 % or 3 ms, the larger. */
export const setupTolerance = (rttMs) => Math.max(3, 0.15 * rttMs);

/**
 * The checks of one setting (a result of measureSetting()): for the overall group of its connection-setup view, the
 * medians and the paired within-run saving (cold HTTP/2 − cold HTTP/3 connect, the negated paired Δ), each against its
 * expected number of round trips. Null when the setting has no view (an A/A setting).
 */
export function setupChecks(result) {
  const g = result.setup?.groups?.[0];
  if (!g) return null;
  const r = result.link.rttMs;
  const p50 = (metric, arm) => g[metric].rows.find((x) => Math.abs(x.p - 0.5) < 1e-9)?.[arm] ?? null;
  const check = (value, trips) => ({ value, expected: trips * r, ok: Number.isFinite(value) && Math.abs(value - trips * r) <= setupTolerance(r) });
  const saving = g.connect_ms.paired ? -g.connect_ms.paired.median : null;
  return {
    rttMs: r, pairs: g.paired, runs: g.runs, firstH3Share: g.firstH3.share,
    h2Connect: check(p50('connect_ms', 'h2'), 2), h2Tls: check(p50('tls_ms', 'h2'), 1), h3Connect: check(p50('connect_ms', 'h3'), 1),
    saving: check(saving, 1),
    savingCi: g.connect_ms.paired ? g.connect_ms.paired.ci_median.map((x) => (x === null ? null : -x)).reverse() : [null, null],
  };
}

const f = (v) => (Number.isFinite(v) ? v.toFixed(1) : '-');
const sf = (v) => (Number.isFinite(v) ? `${v > 0 ? '+' : ''}${v.toFixed(1)}` : '-');
const mark = (c) => `${f(c.value)} (${f(c.expected)}) ${c.ok ? 'ok ' : 'OUT'}`;

/** The table over the settings that have a view. */
export function formatSetupTable(results) {
  const rows = results.map((r) => [r.label, setupChecks(r)]).filter(([, c]) => c);
  if (!rows.length) return '';
  const header = ['setting', 'pairs', 'h2 connect p50 (2R)', 'h2 TLS p50 (R)', 'h3 connect p50 (R)', 'saving h2−h3 median (R)', '95% CI', 'first h3'];
  const cells = rows.map(([label, c]) => [label, String(c.pairs), mark(c.h2Connect), mark(c.h2Tls), mark(c.h3Connect), mark(c.saving),
    `[${sf(c.savingCi[0])}, ${sf(c.savingCi[1])}]`, Number.isFinite(c.firstH3Share) ? `${(100 * c.firstH3Share).toFixed(0)}%` : '-']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((x) => x[i].length)));
  const line = (xs) => xs.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  return ['connection setup (cold pre-warm connections, ms; expected in parentheses, tolerance ±15 % or 3 ms):',
    line(header), ...cells.map(line)].join('\n');
}
