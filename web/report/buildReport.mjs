// The report from either store's data: SQLite's records go to the C++ core in one call (build_report: counts and
// statistics per group, the daily series and the connection-setup view from the same pass); a warehouse's aggregates
// go to the core one round at a time (inferFromSource: this is the rounds' only loop in JavaScript, the core counts
// and limits them). This file only passes the options, orders the groups and shapes the daily series. Plain
// JSON-able data; formatting is elsewhere.
import { OTHER_GROUP } from './readReportData.mjs';
import { verdict } from './verdict.mjs';
import { assembleSetup } from './connectionSetup.mjs';

const METHODS = Object.freeze(['delta', 'bootstrap']);

// Probabilities at which the CDF plots are drawn: even steps in the body, denser in both tails, where HTTP/3 is meant to act.
const CDF_PROBABILITIES = Object.freeze((() => {
  const ps = new Set();
  for (let p = 0.01; p < 0.995; p += 0.01) ps.add(Number(p.toFixed(4)));
  for (const p of [0.001, 0.002, 0.005, 0.0075, 0.9925, 0.995, 0.9975, 0.998, 0.999]) ps.add(p);
  for (let p = 0.9; p < 0.99; p += 0.0025) ps.add(Number(p.toFixed(4)));
  return [...ps].sort((a, b) => a - b);
})());

/**
 * core: the module from loadH3probeNode(). data: from readReportData(). Options (default: schema().reportDefaults'):
 * method, confidence, percentiles, sampleSize: {p, mde, alpha, power} (runs needed to detect a relative change mde at
 * percentile p), cdf: also compute the CDF points for the plots. Returns the report (assemble()), with its daily series
 * (report.daily, addDailySeries(); its days may be none) when data.daily, and its connection-setup view (report.connectionSetup,
 * assembleSetup(); null unless data.setup).
 */
export function buildReport(core, data, { method = 'delta', confidence, percentiles, sampleSize, cdf = false, estimand } = {}) {
  const schema = core.schema();
  const shape = reportShape(schema, { method, confidence, percentiles, sampleSize, cdf, estimand });
  const out = core.buildReport(data.records, { groups: data.groups, days: data.days ?? [], setup: Boolean(data.setup),
    estimand: shape.estimand }, shape.options);
  if (out.error) throw new Error(`the stored run records do not read: ${out.error}`);
  const report = assemble(core, data, out.groups, shape);
  report.connectionSetup = data.setup ? assembleSetup(schema, out.setup) : null;
  if (data.daily) {
    // No day: no run selected, and the core gives no groups.
    const days = data.days.length ? assemble(core, { ...data, by: 'day', pooled: null }, out.days, reportShape(schema, { method,
      confidence, percentiles: schema.reportDefaults.seriesPercentiles, sampleSize })).groups.slice(1) : [];
    addDailySeries(report, schema.reportDefaults.seriesPercentiles, days, out.looks ?? []);
  }
  return report;
}

/** The estimand a report's verdict decides on (the headline), and the one it shows beside (request_class.hpp). */
export const HEADLINE_ESTIMAND = 'as_assigned';
export const SECOND_ESTIMAND = 'h3_worked';

/**
 * Puts the second estimand's report (the same store and options, SECOND_ESTIMAND) beside the headline's as
 * report.h3Worked: its groups, daily series and verdict, and the share of the headline's runs it keeps (both arms of
 * those runs: overall's runs_paired). The headline's verdict is read again, with its line for the second.
 */
export function addSecondEstimand(core, report, second) {
  const described = core.schema().estimands.find((e) => e.name === SECOND_ESTIMAND);
  const runs = (r) => r.groups[0]?.analysis?.runs_paired ?? 0;
  report.h3Worked = { estimand: SECOND_ESTIMAND, description: described.description, runs: runs(second), of: runs(report),
    groups: second.groups, ...(second.daily ? { daily: second.daily } : {}), verdict: second.verdict };
  report.verdict = verdict(report);
  return report;
}

/**
 * The rounds of the inference over a warehouse's aggregate source (clickhouseAggregates.mjs): start() gives each set's
 * aggregates, one item per set and sample column; each round the core infers every item not yet complete
 * (core.inferReport, one round at a time: the core counts the rounds and says when there have been too many) and
 * lists what it still needs, and the source fetches all of it in the same passes. shapes: per item, reportShape()'s.
 * Resolves to { sets: start()'s, groups: per item the core's groups }. what names the aggregates in an error.
 */
export async function inferFromSource(core, source, shapes, what) {
  const sets = await source.start();
  const aggregates = sets.flatMap((set) => set.aggregates);
  const groups = aggregates.map(() => null);
  for (let round = 0; ; round++) {
    const needs = aggregates.map((a, i) => {
      if (groups[i]) return null;
      const out = core.inferReport(a, shapes[i].options, round);
      if (out.error) throw new Error(`${what}: ${out.error}`);
      if (out.needs) return out.needs;
      groups[i] = out.groups;
      return null;
    });
    if (groups.every(Boolean)) return { sets, groups };
    // The probabilities whose estimates get intervals: the source fetches what their bounds will need in the same pass.
    await source.fill(aggregates, needs, shapes.map((sh) => [...sh.percentiles, sh.sampleSize.p, 0.5]));
  }
}

/**
 * A report's options, checked, each defaulting to schema().reportDefaults': { method, confidence, percentiles,
 * sampleSize, options (for the core) }.
 */
export function reportShape(schema, { method = 'delta', confidence, percentiles, sampleSize, cdf = false, estimand = HEADLINE_ESTIMAND } = {}) {
  const d = schema.reportDefaults;
  if (!METHODS.includes(method)) throw new Error(`--method must be one of ${METHODS.join(', ')}, got "${method}"`);
  if (!schema.estimands.some((e) => e.name === estimand)) {
    throw new Error(`the estimand must be one of ${schema.estimands.map((e) => e.name).join(', ')}, got "${estimand}"`);
  }
  const c = confidence ?? d.confidence;
  if (!(c > 0 && c < 1)) throw new Error(`--confidence must be in (0, 1), got "${confidence}"`);
  const ps = percentiles ?? d.percentiles;
  const size = sampleSize ?? d.sampleSize;
  return { method, confidence: c, percentiles: ps, sampleSize: size, estimand, options: { method, confidence: c, percentiles: Float64Array.from(ps),
    sampleSize: size, ...(cdf ? { cdfProbabilities: Float64Array.from(CDF_PROBABILITIES) } : {}) } };
}

/**
 * Adds the daily series to report (and reads the verdict again, which says when a team may stop): Δ at percentiles
 * (the series') per day received, each day a group of its own with its own intervals. days: the report's day groups
 * (assembled, in date order). looks (optional): the core's groups whose each holds every run received up to the end of
 * its day (the same names), their stopping line marked over the looks with runs: each day then also carries that look,
 * with the fixed-horizon interval beside the anytime-valid one (the confidence sequence, valid however often the series
 * is read).
 */
export function addDailySeries(report, percentiles, days, looks = []) {
  // Arms that are not comparable: no look claims a difference either (withoutSignificance()).
  if (!report.verdict.comparable) for (const g of looks) g.analysis.rows = g.analysis.rows.map(withoutSignificance);
  const byName = new Map(looks.map((g) => [g.name, g]));
  const lookDays = looks.filter((g) => g.runs > 0).map((g) => g.name);
  report.daily = {
    percentiles: [...percentiles],
    days: days.map((g) => ({ day: g.name, runs: g.runs, rows: (g.analysis?.rows ?? []).map((x) => ({
      p: x.p, diff_ms: x.diff_ms, diff_pct: x.diff_pct, ci_ms: x.ci_ms, ci_pct: x.ci_pct, ci_pct_unbounded: x.ci_pct_unbounded,
      significant: x.significant, unfinished: x.unfinished })),
    ...(byName.has(g.name) ? { cumulative: cumulativeLook(byName.get(g.name), lookDays) } : {}) })),
  };
  report.verdict = verdict(report);
}

// One look of the cumulative series: the runs so far and, per percentile, Δ with both intervals and their marks, and
// the stopping line (cs_decided_look named by its day among lookDays, the looks in order).
function cumulativeLook(g, lookDays) {
  return { runs: g.runs, rows: (g.analysis?.rows ?? []).map((x) => ({
    p: x.p, diff_ms: x.diff_ms, diff_pct: x.diff_pct, ci_ms: x.ci_ms, ci_pct: x.ci_pct, ci_pct_unbounded: x.ci_pct_unbounded,
    unfinished: x.unfinished, cs_ms: x.cs_ms, cs_pct: x.cs_pct, cs_pct_unbounded: x.cs_pct_unbounded, significant: x.significant,
    significant_cs: x.significant_cs, cs_runs_needed: x.cs_runs_needed, cs_days_needed: x.cs_days_needed,
    cs_decided_look: x.cs_decided_look, cs_decided_day: x.cs_decided_look === null ? null : lookDays[x.cs_decided_look] ?? null,
    cs_decided_side: x.cs_decided_side, cs_conflict: x.cs_conflict })) };
}

// Counts by reason, { total, byReason: [{reason, n}] }, the most frequent first: the sampled page loads that could not
// load the run, and the runs that left their Worker.
function countsByReason(rows) {
  const byReason = rows.map((r) => ({ reason: r.reason, n: Number(r.n) }))
    .sort((a, b) => b.n - a.n || (a.reason < b.reason ? -1 : 1));
  return { total: byReason.reduce((sum, r) => sum + r.n, 0), byReason };
}

/**
 * The load_error beacons by reason, as countsByReason() gives them, each with the error text (the beacon's `error`)
 * that its beacons gave most often: the reason says which file did not load, the text why (a 404, a bundler that could
 * not follow the gate's import). rows: [{reason, error, n}], one per reason and text. Ties go to the first text in
 * code-unit order, so that SQLite's and ClickHouse's reports name the same one; '' where no beacon gave one. Runs of
 * white space become one space: the text is printed on one line.
 */
function loadErrorCounts(rows) {
  const { total, byReason } = countsByReason(Object.values(rows.reduce((acc, r) => {
    acc[r.reason] = { reason: r.reason, n: (acc[r.reason]?.n ?? 0) + Number(r.n) };
    return acc;
  }, {})));
  const texts = rows.filter((r) => r.error).map((r) => ({ ...r, n: Number(r.n), error: String(r.error).replace(/\s+/g, ' ').trim() }));
  const top = (reason) => texts.filter((r) => r.reason === reason)
    .sort((a, b) => b.n - a.n || (a.error < b.error ? -1 : a.error > b.error ? 1 : 0))[0]?.error ?? '';
  return { total, byReason: byReason.map((r) => ({ ...r, error: top(r.reason) })) };
}

// The runs whose core ran on the page's main thread: { runs (every run of the report), main, share (of runs; null
// without runs), byReason: [{reason, n}] } (why they left the Worker), the most frequent first.
function mainThreadCounts(runs, rows) {
  const { total: main, byReason } = countsByReason(rows);
  return { runs, main, share: runs ? main / runs : null, byReason };
}

// The runs read by how they ended, every outcome named (0 when none).
const OUTCOMES = Object.freeze(['complete', 'deadline', 'stopped', 'error', 'load_error']);
const outcomeCounts = (rows) => Object.fromEntries(OUTCOMES.map((o) => [o, Number(rows.find((r) => r.outcome === o)?.n ?? 0)]));

/**
 * Every run the store holds but the doctor's test beacon, each in one count with its reason: { stored, read (this arms
 * and payload mode, received since: storedRuns), otherPayloads (this arms mode, another payload mode), otherArms:
 * [{arms, runs}], loadErrors (load_error beacons of no arms mode; one that names its arms is of that mode), beforeSince (received before --since) }; the parts add up to stored.
 */
function runCounts({ armsModes = [], arms = 'h2-h3', storedRuns = 0 }) {
  const sum = (xs) => xs.reduce((n, r) => n + r.n, 0);
  const recent = armsModes.filter((r) => r.recent);
  return { stored: sum(armsModes), read: storedRuns, otherPayloads: sum(recent.filter((r) => r.arms === arms)) - storedRuns,
    otherArms: recent.filter((r) => r.arms !== arms && r.arms !== '').map((r) => ({ arms: r.arms, runs: r.n }))
      .sort((a, b) => (a.arms < b.arms ? -1 : 1)),
    loadErrors: sum(recent.filter((r) => r.arms === '')), beforeSince: sum(armsModes.filter((r) => !r.recent)) };
}

/**
 * A row (a cell) of arms that are not comparable (an exclusion unequal between them, comparability.hpp): no decision
 * of its own is left standing, so no mark, highlight, dot or stopping line claims a difference the verdict does not.
 * markOf() reads not_comparable.
 */
export function withoutSignificance(r) {
  return { ...r, significant: false, discovery: false, significant_cs: false, cs_decided_side: 0, cs_decided_look: null,
    not_comparable: true };
}

/** The report object from the core's groups (overall first, then one per name in data.groups' order). */
export function assemble(core, data, groups, { method, confidence, percentiles, sampleSize, estimand = HEADLINE_ESTIMAND }) {
  const schema = core.schema();
  const [overall, ...rest] = groups;
  if (overall?.unequal?.length) {
    for (const g of groups) if (g.analysis) g.analysis.rows = g.analysis.rows.map(withoutSignificance);
  }
  // Overall first, then the groups with the most runs (days in date order); groups without any measured request are
  // left out.
  const order = data.by === 'day' ? (a, b) => (a.name < b.name ? -1 : 1)
    : (a, b) => b.runs - a.runs || (a.name < b.name ? -1 : 1);
  const shown = rest.filter((g) => g.runs > 0).sort(order);
  // A pooled grouping's OTHER_GROUP (readReportData.mjs) goes last, whatever its size.
  if (data.pooled) shown.sort((a, b) => (a.name === OTHER_GROUP) - (b.name === OTHER_GROUP));
  const report = {
    metric: data.metric, since: data.since, arms: data.arms ?? 'h2-h3', by: data.by ?? 'region', estimand, method, confidence,
    percentiles: [...percentiles], storedRuns: data.storedRuns, testBeacons: data.testBeacons ?? 0, regions: data.regions ?? [],
    received: data.received ?? { first: null, last: null },
    sampleSizeTarget: sampleSize,
    // What each request that did not go as planned was, in the core's order: its classes other than usable and
    // pre-warm (each stays in its arm or drops its run: schema.requestClasses' role), then the report-time reason that
    // the chosen metric is missing.
    exclusions: [...schema.requestClasses.filter((c) => !c.usable && c.name !== 'prewarm').map((c) => c.name), 'missing_metric'],
    classRoles: Object.fromEntries(schema.requestClasses.map((c) => [c.name, c.role])),
    minRunsForInterval: schema.limits.minRunsForInterval,
    loadErrors: loadErrorCounts(data.loadErrors ?? []),
    mainThread: mainThreadCounts(data.storedRuns, data.mainThread ?? []),
    outcomes: outcomeCounts(data.outcomes ?? []),
    runCounts: runCounts(data),
    // A pooled grouping (network): {minRuns, values}, the values with fewer runs being the group OTHER_GROUP.
    ...(data.pooled ? { pooled: data.pooled } : {}),
    // The payload mode read (0: the no-op) and every mode stored for the arms mode, each read on its own.
    payloadBytes: data.payloadBytes ?? 0,
    payloadModes: data.payloadModes ?? [],
    groups: [overall, ...shown],
  };
  // What could bias the answer (the core's rule, comparability.hpp): the verdict leads with it.
  report.bias = core.sampleBiases({ runs: report.storedRuns, failed: report.outcomes.error, timedOut: report.outcomes.deadline,
    loadErrors: report.loadErrors.total, mainThread: report.mainThread.main },
  report.groups.map((g) => ({ name: g.name, fallbacks: g.fallback.fallbacks, completed: g.fallback.completed })));
  report.verdict = verdict(report);
  return report;
}
