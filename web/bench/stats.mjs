// The small statistics the benchmarks print: one home for each, so that two benches never count alike things two ways.

/** The p-quantile of values (the order statistic at floor(p n)); NaN for none. */
export function quantile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
}

/** Wilson's 95 % interval for a rate of k in n, as [low, high] fractions: honest at k = 0, where k / n ± z SE is [0, 0]. */
export function wilson(k, n) {
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const mid = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, mid - half), Math.min(1, mid + half)];
}
