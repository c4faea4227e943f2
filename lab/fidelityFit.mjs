// The fidelity rule (docs/design.md): raising the injected RTT by R raises the median warm-connection time by R, within 3 ms or 5%
// (whichever is larger); the intercept is the median measured at zero added delay. Also a least-squares line, for the record.

/** points: [{rttMs, median}] for one arm (one point must have rttMs 0). */
export function fidelityFit(points, { absMs = 3, rel = 0.05 } = {}) {
  const usable = points.filter((p) => Number.isFinite(p.median));
  const base = usable.find((p) => p.rttMs === 0);
  const n = usable.length;
  let slope = NaN;
  let intercept = NaN;
  if (n >= 2) {
    const mx = usable.reduce((s, p) => s + p.rttMs, 0) / n;
    const my = usable.reduce((s, p) => s + p.median, 0) / n;
    const sxx = usable.reduce((s, p) => s + (p.rttMs - mx) ** 2, 0);
    const sxy = usable.reduce((s, p) => s + (p.rttMs - mx) * (p.median - my), 0);
    slope = sxx > 0 ? sxy / sxx : NaN;
    intercept = my - slope * mx;
  }
  const rows = usable.filter((p) => p !== base).map((p) => {
    const expected = base ? base.median + p.rttMs : NaN;
    const residual = p.median - expected;
    const tolerance = Math.max(absMs, rel * p.rttMs);
    return { rttMs: p.rttMs, median: p.median, expected, residual, tolerance, ok: Math.abs(residual) <= tolerance };
  });
  return { base: base?.median ?? NaN, slope, intercept, rows, ok: Boolean(base) && rows.length > 0 && rows.every((r) => r.ok) };
}
