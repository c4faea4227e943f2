// Turns what readReportData() read into the report: the C++ core (compiled to WASM) reads every run record, counts the
// requests by class and computes per group (overall, then each region) the quantile table with confidence intervals,
// the paired within-run difference, the order-effect test, the sample size and the CDF points. This file only passes
// the options and orders the groups. Plain JSON-able data; formatting is elsewhere.
import { OTHER_GROUP } from './readReportData.mjs';
import { verdict } from './verdict.mjs';

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
 * CDF points for the plots, cumulative: each group after overall holds its runs and every earlier group's (the daily
 * series' looks, in the order of data.groups; delta intervals). Returns { metric, since, arms, by, method, confidence, percentiles, storedRuns, regions,
 * sampleSizeTarget, exclusions, minRunsForInterval, received, loadErrors, mainThread, groups, verdict } (groups: overall, then one per value of
 * `by`; see h3probeNode.d.ts for a group's shape, verdict.mjs for the verdict's).
 */
export function buildReport(core, data, {
  method = 'delta', confidence = 0.95, percentiles = PERCENTILES, sampleSize = { p: 0.95, mde: 0.05, alpha: 0.05, power: 0.8 },
  cdf = false, cumulative = false,
} = {}) {
  const options = { ...reportOptions({ method, confidence, percentiles, sampleSize, cdf }), cumulative };
  const out = core.buildReport(data.records, data.groups, options);
  if (out.error) throw new Error(`the stored run records do not read: ${out.error}`);
  return assemble(core.schema(), data, out.groups, { method, confidence, percentiles, sampleSize });
}

/**
 * Reports from a warehouse's aggregates, one per grouping of the source (clickhouseAggregates.mjs: start() → one
 * {storedRuns, received, regions, groups, aggregates, loadErrors} per grouping, fill([aggregates], [needs])): each
 * round, the C++ inference of every report not yet complete lists what it still needs, and the source computes all of
 * it where the data lives in the same passes. common: { metric, since, arms, method, confidence }; each: the options of
 * each report in the source's order ({ percentiles, sampleSize, cdf, cumulative: its groups after overall are the daily
 * looks, whose stopping line the core then marks }). Delta intervals only.
 */
export async function buildReportsFromAggregates(core, source, {
  metric, since = '', arms = 'h2-h3', method = 'delta', confidence = 0.95,
} = {}, each = [{}]) {
  // reportOptions() refuses a method that is none (and a bad confidence) first: only then is the method bootstrap.
  const shapes = each.map(({ percentiles = PERCENTILES, sampleSize = { p: 0.95, mde: 0.05, alpha: 0.05, power: 0.8 }, cdf = false,
    cumulative = false }) => ({ percentiles, sampleSize, options: { ...reportOptions({ method, confidence, percentiles, sampleSize, cdf }), cumulative } }));
  if (method !== 'delta') throw new Error('--method bootstrap needs every value: use the SQLite store, or --method delta');
  const starts = await source.start();
  // The probabilities whose estimates get intervals (the percentiles, the sample size's, the paired median): the
  // source may fetch what their bounds will need in the same pass.
  const groups = await inferInRounds(core, 'the report', starts.map((st, i) => ({ aggregates: st.aggregates, options: shapes[i].options })),
    (needs) => source.fill(starts.map((st) => st.aggregates), needs, shapes.map((sh) => [...sh.percentiles, sh.sampleSize.p, 0.5])));
  return groups.map((g, i) => {
    const { percentiles, sampleSize } = shapes[i];
    return assemble(core.schema(), { ...starts[i], metric, since, arms }, g, { method, confidence, percentiles, sampleSize });
  });
}

/**
 * infer_report() in rounds over aggregates from outside the core (as infer_from() in report_aggregates.cpp does for a
 * C++ source): items [{aggregates, options}]; fill(needs) adds to the items' aggregates what each still needs (null for
 * an item that is done). Resolves to each item's groups. what names the aggregates in an error.
 */
export async function inferInRounds(core, what, items, fill) {
  const groups = items.map(() => null);
  for (let round = 0; ; round++) {
    const needs = items.map(({ aggregates, options }, i) => {
      if (groups[i]) return null;
      const out = core.inferReport(JSON.stringify(aggregates), options);
      if (out.error) throw new Error(`${what}: the aggregates do not read: ${out.error}`);
      if (out.needs !== null) return JSON.parse(out.needs);
      groups[i] = out.groups;
      return null;
    });
    if (groups.every(Boolean)) return groups;
    const max = core.schema().limits.maxInferenceRounds;
    if (round === max) throw new Error(`${what} still needs aggregates after ${max} rounds`);
    await fill(needs);
  }
}

function reportOptions({ method, confidence, percentiles, sampleSize, cdf }) {
  if (!METHODS.includes(method)) throw new Error(`--method must be one of ${METHODS.join(', ')}, got "${method}"`);
  if (!(confidence > 0 && confidence < 1)) throw new Error(`--confidence must be in (0, 1), got "${confidence}"`);
  return {
    method, confidence, percentiles: Float64Array.from(percentiles), sampleSize,
    ...(cdf ? { cdfProbabilities: Float64Array.from(CDF_PROBABILITIES) } : {}),
  };
}

// Counts by reason, { total, byReason: [{reason, n}] }, the most frequent first: the sampled page loads that could not
// load the run, and the runs that left their Worker.
function countsByReason(rows) {
  const byReason = rows.map((r) => ({ reason: r.reason, n: Number(r.n) }))
    .sort((a, b) => b.n - a.n || (a.reason < b.reason ? -1 : 1));
  return { total: byReason.reduce((sum, r) => sum + r.n, 0), byReason };
}

// The runs whose core ran on the page's main thread: { runs (every run of the report), main, share (of runs; null
// without runs), byReason: [{reason, n}] } (why they left the Worker), the most frequent first.
function mainThreadCounts(runs, rows) {
  const { total: main, byReason } = countsByReason(rows);
  return { runs, main, share: runs ? main / runs : null, byReason };
}

// The report object from the core's groups (overall first, then one per name in data.groups' order).
function assemble(schema, data, groups, { method, confidence, percentiles, sampleSize }) {
  const [overall, ...rest] = groups;
  // Overall first, then the groups with the most runs (days in date order); groups without any measured request are
  // left out.
  const order = data.by === 'day' ? (a, b) => (a.name < b.name ? -1 : 1)
    : (a, b) => b.runs - a.runs || (a.name < b.name ? -1 : 1);
  const shown = rest.filter((g) => g.runs > 0).sort(order);
  // A pooled grouping's OTHER_GROUP (readReportData.mjs) goes last, whatever its size.
  if (data.pooled) shown.sort((a, b) => (a.name === OTHER_GROUP) - (b.name === OTHER_GROUP));
  const report = {
    metric: data.metric, since: data.since, arms: data.arms ?? 'h2-h3', by: data.by ?? 'region', method, confidence,
    percentiles: [...percentiles], storedRuns: data.storedRuns, regions: data.regions ?? [],
    received: data.received ?? { first: null, last: null },
    sampleSizeTarget: sampleSize,
    // Why a request is not in its arm, in the core's order: its classes other than usable and pre-warm, then the
    // report-time reason that the chosen metric is missing.
    exclusions: [...schema.requestClasses.filter((c) => !c.usable && c.name !== 'prewarm').map((c) => c.name), 'missing_metric'],
    minRunsForInterval: schema.limits.minRunsForInterval,
    loadErrors: countsByReason(data.loadErrors ?? []),
    mainThread: mainThreadCounts(data.storedRuns, data.mainThread ?? []),
    // A pooled grouping (network): {minRuns, values}, the values with fewer runs being the group OTHER_GROUP.
    ...(data.pooled ? { pooled: data.pooled } : {}),
    // The payload mode read (0: the no-op) and every mode stored for the arms mode, each read on its own.
    payloadBytes: data.payloadBytes ?? 0,
    payloadModes: data.payloadModes ?? [],
    groups: [overall, ...shown],
  };
  report.verdict = verdict(report);
  return report;
}
