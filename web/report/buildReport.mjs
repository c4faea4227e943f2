// Turns what readReportData() read into the report: for each group (overall, then each region) the C++ statistics compiled to
// WASM (per-percentile differences with run-clustered confidence intervals, the paired within-run difference, the order-effect
// test, the sample size) next to the counts, exclusions and fallback rate. Plain JSON-able data; formatting is elsewhere.

export const PERCENTILES = Object.freeze([0.5, 0.75, 0.9, 0.95, 0.99]);
export const METHODS = Object.freeze(['delta', 'bootstrap']);

// Probabilities at which the CDF plots are drawn: even steps in the body, denser in both tails, where HTTP/3 is meant to act.
export const CDF_PROBABILITIES = Object.freeze((() => {
  const ps = new Set();
  for (let p = 0.01; p < 0.995; p += 0.01) ps.add(Number(p.toFixed(4)));
  for (const p of [0.001, 0.002, 0.005, 0.0075, 0.9925, 0.995, 0.9975, 0.998, 0.999]) ps.add(p);
  for (let p = 0.9; p < 0.99; p += 0.0025) ps.add(Number(p.toFixed(4)));
  return [...ps].sort((a, b) => a - b);
})());

/**
 * core: the module from loadH3probeNode(). data: from readReportData(). Options: method, confidence, percentiles,
 * sampleSize: {p, mde, alpha, power} (runs needed to detect a relative change mde at percentile p), cdf: also compute the
 * CDF points for the plots. Returns { metric, since, method, confidence, percentiles, storedRuns, sampleSizeTarget, groups }.
 */
export function buildReport(core, data, {
  method = 'delta', confidence = 0.95, percentiles = PERCENTILES, sampleSize = { p: 0.95, mde: 0.05, alpha: 0.05, power: 0.8 },
  cdf = false,
} = {}) {
  if (!METHODS.includes(method)) throw new Error(`--method must be one of ${METHODS.join(', ')}, got "${method}"`);
  if (!(confidence > 0 && confidence < 1)) throw new Error(`confidence must be in (0, 1), got ${confidence}`);
  const missing = ['analyzeArms', 'pairedDifferences', 'orderEffect', 'sampleSize'].filter((f) => typeof core[f] !== 'function');
  if (missing.length) throw new Error(`the WASM core lacks ${missing.join(', ')}: rebuild (npm run build) with the statistics`);
  const ps = Float64Array.from(percentiles);

  const groups = data.groups.map((g) => {
    const { h2, h3 } = g.arms;
    const analysis = JSON.parse(core.analyzeArms(h2.values, h2.runs, h3.values, h3.runs, ps, method, confidence));
    const paired = g.paired.diffs.length >= 2 ? JSON.parse(core.pairedDifferences(g.paired.diffs, confidence)) : null;
    // Only a randomised order gives both groups; Dropbox's fixed h2-first order cannot be tested.
    const order = g.paired.h2First.length >= 2 && g.paired.h3First.length >= 2
      ? JSON.parse(core.orderEffect(g.paired.h2First, g.paired.h3First, confidence)) : null;
    const size = h2.n >= 2 && h2.nRuns >= 2
      ? JSON.parse(core.sampleSize(h2.values, h2.runs, sampleSize.p, sampleSize.mde, sampleSize.alpha, sampleSize.power)) : null;
    return {
      name: g.name,
      runs: g.runs,
      requests: g.requests,
      excluded: g.excluded,
      fallback: g.fallback,
      arms: { h2: { n: h2.n, runs: h2.nRuns }, h3: { n: h3.n, runs: h3.nRuns } },
      analysis,
      paired,
      order,
      sampleSize: size,
      ...(cdf ? { cdf: cdfPoints(core, g.arms) } : {}),
    };
  });
  return {
    metric: data.metric, since: data.since, method, confidence, percentiles: [...percentiles], storedRuns: data.storedRuns,
    sampleSizeTarget: sampleSize, groups,
  };
}

// [[ms, probability], ...] per arm from the exact quantiles (C++), or [] for an empty arm.
function cdfPoints(core, arms) {
  const out = {};
  for (const arm of ['h2', 'h3']) {
    const { values } = arms[arm];
    if (values.length === 0) { out[arm] = []; continue; }
    const ps = values.length >= 2 ? CDF_PROBABILITIES : [0.5];
    const q = core.quantiles(values, Float64Array.from(ps));
    out[arm] = ps.map((p, i) => [q[i], p]);
  }
  return out;
}
