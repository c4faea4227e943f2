// The report's answer in one line: at which percentiles the treatment arm is faster or slower with confidence, by how
// much, over how many runs and which dates. It reads each cell's one decision (the core's `significant`, which every
// mark, highlight and dot of the report reads too). What could bias it comes next, with its numbers: the core's rule
// (comparability.hpp: arms not comparable, runs failed or timed out, load errors, runs on the page's main thread, a
// group's fallback rate out of line); then the cautions on how far it reaches (too few runs, loopback only). Text and
// HTML print it first; the JSON report carries it as data.
import { armLabels, BY_LABELS, markOf, percentileLabel, UNBOUNDED } from './formatReport.mjs';
import { LOOPBACK_REGION } from '../server/regionFor.mjs';
import { fixed, snap } from './numberText.mjs';

// What to fix when an instrument fault is unequal between the arms (the rule: comparability.hpp, the group's
// `unequal`), by class, and what `h3probe doctor` checks for it. `origin` is the arm's origin, named by the arm that
// has more.
const UNEQUAL_FIX = {
  timing_unavailable: (origin) => `the ${origin} origin's /noop lacks Timing-Allow-Origin for the page, so the browser zeroes its timings (h3probe doctor checks the /noop headers)`,
  protocol_unknown: (origin) => `the ${origin} origin's /noop lacks Timing-Allow-Origin for the page, so the browser hides its protocol (h3probe doctor checks the /noop headers)`,
  no_timing_entry: (origin) => `the ${origin} origin's requests leave no Resource Timing entry in time (a CSP or an extension; h3probe doctor --browser runs the page)`,
  redirected: (origin) => `the ${origin} origin redirects /noop (h3probe doctor checks that it answers 204)`,
  cache_hit: (origin) => `a cache serves the ${origin} origin's /noop (Cache-Control: no-store; h3probe doctor checks the headers)`,
};
const share = (n, of) => `${of ? ((100 * n) / of).toFixed(1) : '0.0'}%`;

const signed = (v, d) => `${snap(v, d) > 0 ? '+' : ''}${fixed(v, d)}`;
// A significant cell's Δ % interval: its bounds, or unbounded (Fieller's set without finite bounds).
const pctCi = (x) => (x.ci_pct_unbounded ? `${UNBOUNDED} in %` : Array.isArray(x.ci_pct) && x.ci_pct.every(Number.isFinite)
  ? `[${signed(x.ci_pct[0], 1)}%, ${signed(x.ci_pct[1], 1)}%]` : 'n/a in %');
const day = (iso) => (iso ? iso.slice(0, 10) : '?');

/**
 * report: from buildReport(). Returns { text, cautions: [text], runs, received: {first, last}, percentiles: [{p, verdict:
 * 'faster'|'slower'|'no difference shown'|'no interval', diff_ms, diff_pct, ci_ms, ci_pct, ci_pct_unbounded, q_value,
 * discovery, cs_ms, significant_cs, stop (stopping() below)}], fdr (discoveries() below) } for the overall group. Its
 * text also says how many cells survive the multiplicity adjustment, naming them, and per percentile whether a team may
 * stop (the anytime-valid sequence has decided, since which daily look) or how many more runs it needs.
 */
export function verdict(report) {
  const overall = report.groups[0];
  const L = armLabels(report.arms);
  const conf = `${Math.round(report.confidence * 100)}%`;
  const rows = overall?.analysis?.rows ?? [];
  const percentiles = rows.map((r) => {
    const mark = markOf(r);
    const hasCi = mark !== 'noInterval' && mark !== 'unfinished';
    const word = mark === 'notComparable' ? 'not comparable' : mark === 'unfinished' ? 'not estimable' : !hasCi ? 'no interval'
      : mark !== 'significant' ? 'no difference shown' : r.diff_ms < 0 ? 'faster' : 'slower';
    return { p: r.p, verdict: word, diff_ms: r.diff_ms, diff_pct: r.diff_pct, ci_ms: hasCi ? r.ci_ms : null,
      ci_pct: hasCi ? r.ci_pct : null, ci_pct_unbounded: Boolean(r.ci_pct_unbounded) };
  });
  const runs = overall?.runs ?? 0;
  const dates = report.received?.first ? `${day(report.received.first)} to ${day(report.received.last)}` : 'no dates';
  const named = (word) => percentiles.filter((x) => x.verdict === word);
  const parts = [];
  for (const word of ['faster', 'slower']) {
    const xs = named(word);
    if (xs.length) {
      parts.push(`${L.treatment} ${word} at ${xs.map((x) => `${percentileLabel(x.p)} (${signed(x.diff_ms, 2)} ms, ` +
        `${signed(x.diff_pct, 1)}%, ${conf} CI [${signed(x.ci_ms[0], 2)}, ${signed(x.ci_ms[1], 2)}] ms, ${pctCi(x)})`).join(', ')}`);
    }
  }
  const none = named('no difference shown');
  if (none.length) parts.push(`no difference shown at ${none.map((x) => percentileLabel(x.p)).join(', ')}`);
  const noCi = named('no interval');
  if (noCi.length) parts.push(`no interval at ${noCi.map((x) => percentileLabel(x.p)).join(', ')}`);
  const unfinished = named('not estimable');
  if (unfinished.length) {
    parts.push(`not estimable at ${unfinished.map((x) => percentileLabel(x.p)).join(', ')} (it reaches requests that did not finish)`);
  }
  if (!rows.length) parts.push('no table: an arm has no usable samples');

  // Instrument faults unequal between the arms: the runs left are chosen by one origin's fault, and the answer is that, first.
  const unequal = overall?.unequal ?? [];
  const notComparable = unequal.map((u) => {
    const origin = u.treatment / u.treatment_requests >= u.control / u.control_requests ? L.treatment : L.control;
    const fix = UNEQUAL_FIX[u.class]?.(origin) ?? `the ${origin} arm loses these requests`;
    return `${u.class} (its run dropped) on ${count(u.treatment)} of ${count(u.treatment_requests)} ${L.treatment} requests ` +
      `(${share(u.treatment, u.treatment_requests)}) and ${count(u.control)} of ${count(u.control_requests)} ${L.control} ` +
      `(${share(u.control, u.control_requests)}): ${fix}`;
  });
  // What could bias the answer, past the core's thresholds: these lead the cautions.
  const bias = (report.bias ?? []).map((b) => biasText(b, report, L));
  const cautions = [...bias];
  const regions = report.regions ?? [];
  if (runs > 0 && regions.length === 1 && regions[0] === LOOPBACK_REGION) {
    cautions.push('every run came from loopback (region "local"): browser and origins on one machine, no real network; ' +
      'this says nothing about users');
  }
  if (runs < report.minRunsForInterval) {
    cautions.push(`${runs} runs: too few for any interval (at least ${report.minRunsForInterval} runs per arm)`);
  } else if (noCi.length) {
    cautions.push(`${runs} runs are too few for intervals at ${noCi.map((x) => percentileLabel(x.p)).join(', ')}`);
  }
  const fdr = discoveries(report);
  const stops = stopping(report);
  const counted = `${fdr.survivors.length} of ${fdr.cells} ${report.by ?? 'region'} × percentile cells ` +
    `survive${fdr.survivors.length ? `: ${fdr.survivors.map((x) => `${x.group} ${percentileLabel(x.p)}`).join(', ')}` : ''}`;
  const head = `verdict (${runs.toLocaleString('en-US')} runs, received ${dates}; by the ${conf} interval of Δ): `;
  // What could bias the answer follows it at once; the other cautions close the verdict.
  const said = (cs) => cs.map((c) => `\nCAUTION: ${c}`).join('');
  const text = notComparable.length
    ? `${head}NOT COMPARABLE until fixed: an instrument fault on one arm's origin drops runs by what that origin does, so ` +
      `the runs left are not the users', and no difference is read from them. ${notComparable.join('; ')}` + said(cautions)
    : `${head}${parts.join('; ')}${said(bias)}${secondEstimandLine(report, L)}` +
      (fdr.cells ? `\ncounting every comparison (Benjamini–Hochberg, false discovery rate ${pctLevel(fdr.level)}): ${counted}` : '') +
      (rows.length ? `\nmay we stop? (the ${conf} confidence sequence, valid however often this is read): ` +
        `${stops.map((x) => stopText(x, L)).join('; ')}` : '') +
      said(cautions.slice(bias.length));
  return { text, cautions, comparable: notComparable.length === 0, unequal, bias: report.bias ?? [], runs, received: report.received,
    percentiles: percentiles.map((x, i) => ({ ...x, q_value: rows[i].q_value ?? null, discovery: Boolean(rows[i].discovery),
      cs_ms: rows[i].cs_ms ?? null, significant_cs: Boolean(rows[i].significant_cs), stop: stops[i] })),
    fdr };
}

const byReason = (xs) => xs.map((r) => `${r.reason} ${count(r.n)}`).join(', ');

/**
 * The second estimand in one line under the headline (report.h3Worked, addSecondEstimand() of buildReport.mjs): the
 * share of runs it keeps and, per percentile of its overall group, Δ % with its interval and the same marks. '' when
 * the report has none.
 */
export function secondEstimandLine(report, L = armLabels(report.arms)) {
  const w = report.h3Worked;
  if (!w) return '';
  const conf = `${Math.round(report.confidence * 100)}%`;
  const rows = w.groups[0]?.analysis?.rows ?? [];
  const cell = (r) => {
    const mark = markOf(r);
    if (mark === 'unfinished') return `${percentileLabel(r.p)} not estimable`;
    if (mark === 'noInterval' || !Number.isFinite(r.diff_pct)) return `${percentileLabel(r.p)} no interval`;
    return `${percentileLabel(r.p)} ${signed(r.diff_pct, 1)}% ${pctCi(r).replace(' in %', '')}${mark === 'significant' ? ' *' : ''}`;
  };
  return `\nwhere ${L.treatment} worked (${count(w.runs)} of ${count(w.of)} runs, ${share(w.runs, w.of)}; both arms of those runs, ` +
    `${conf} CI): ${rows.length ? rows.map(cell).join(', ') : 'no table: no run in which every request finished over its arm\'s protocol'}`;
}

// One finding of the core's sample rule (comparability.hpp, thresholds in schema().limits) as the verdict says it.
function biasText(b, report, L) {
  const of = `${count(b.n)} of ${count(b.of)}`;
  if (b.kind === 'failed_runs') {
    const o = report.outcomes ?? {};
    return `${of} runs (${share(b.n, b.of)}) failed or timed out (error ${count(o.error ?? 0)}, deadline ${count(o.deadline ?? 0)}): ` +
      'a run that ends early loses the slowest page loads first, so the rest lean to faster networks ' +
      '(the run\'s error names why; h3probe doctor --browser runs the page)';
  }
  if (b.kind === 'load_errors') {
    return `${of} sampled page loads (${share(b.n, b.of)}) could not load the run (${byReason(report.loadErrors?.byReason ?? [])}): ` +
      'those users are in neither arm (each reason and its fix: docs/embedding.md; h3probe doctor checks the module files)';
  }
  if (b.kind === 'main_thread') {
    return `${of} (${share(b.n, b.of)}) of the runs ran on the page's main thread, not in the Worker ` +
      `(${byReason(report.mainThread?.byReason ?? [])}): there the probe works on the page's own thread; ` +
      'each reason and its fix: docs/embedding.md, "Where it runs"';
  }
  const by = BY_LABELS[report.by ?? 'region'];
  return `${by} ${b.group}: ${L.treatment} fell back for ${of} completed requests (${share(b.n, b.of)}), against ` +
    `${count(b.rest_n)} of ${count(b.rest_of)} (${share(b.rest_n, b.rest_of)}) in the other ${by}s: there ${L.treatment} is ` +
    'measured only where it gets through (UDP blocked elsewhere), so its Δ is not the same users\' as in the others';
}
const finite = (ci) => Array.isArray(ci) && ci.every(Number.isFinite);
const count = (n) => Math.round(n).toLocaleString('en-US');
const days = (n) => (n < 1.5 ? 'about a day' : `about ${count(n)} days`);

/**
 * Per percentile of the overall group, whether a team may stop, as the core marked the confidence sequence
 * (confidence_sequence.hpp): read from the last daily look when the report has the daily series (each look every run
 * up to its day), else from the overall row, which names no look and no days. Each { p, decided: 'faster'|'slower'|null,
 * since_day, since_look (1-based), looks, excludes_now (the latest look's sequence alone excludes 0), conflict (looks
 * excluded 0 on both sides), runs_needed (more runs until the sequence excludes 0 at the current Δ and spread; null
 * without a sequence, or when Δ is 0 and no number of runs would), days_needed (at the looks' runs per day), sequence
 * (false: too few runs for one), min_runs (the runs per arm an interval at p needs) }.
 */
export function stopping(report) {
  const looks = (report.daily?.days ?? []).filter((d) => d.cumulative);
  const last = looks.at(-1)?.cumulative;
  return (report.groups[0]?.analysis?.rows ?? []).map((r) => {
    const look = last?.rows.find((x) => x.p === r.p) ?? null;
    const from = look ?? r;
    const side = look ? look.cs_decided_side : r.significant_cs ? (r.diff_ms < 0 ? -1 : 1) : 0;
    return { p: r.p, unfinished: Boolean(r.unfinished), sequence: finite(from.cs_ms), min_runs: r.min_runs ?? null, decided: side < 0 ? 'faster' : side > 0 ? 'slower' : null,
      since_day: look?.cs_decided_day ?? null, since_look: look && look.cs_decided_look !== null ? look.cs_decided_look + 1 : null,
      looks: look ? looks.length : null, excludes_now: Boolean(from.significant_cs), conflict: Boolean(look?.cs_conflict),
      runs_needed: Number.isFinite(from.cs_runs_needed) ? from.cs_runs_needed : null,
      days_needed: look && Number.isFinite(look.cs_days_needed) ? look.cs_days_needed : null };
  });
}

// One percentile's stopping line.
function stopText(x, L) {
  const p = percentileLabel(x.p);
  if (x.unfinished) return `${p}: not estimable (it reaches requests that did not finish)`;
  if (!x.sequence) return `${p}: no sequence yet (too few runs: ${count(x.min_runs ?? NaN)} per arm needed)`;
  if (x.conflict) return `${p}: the looks excluded 0 on both sides; do not stop, look for what changed (an order effect, a deploy)`;
  if (x.decided) {
    const since = x.since_day ? ` since ${x.since_day} (look ${x.since_look} of ${x.looks})` : ' at this look';
    return `${p}: yes, ${L.treatment} ${x.decided}${since}` +
      (x.excludes_now ? '' : '; the latest look alone includes 0 again, but the sequence holds over every look at once');
  }
  if (x.runs_needed === null) return `${p}: not yet; Δ is 0 at this look, so no number of runs decides at this effect`;
  const rate = x.days_needed > 0 ? ` (${days(x.days_needed)} at ${count(x.runs_needed / x.days_needed)} runs a day)`
    : ' (--daily gives the days)';
  return `${p}: not yet; about ${count(x.runs_needed)} more runs at this Δ and spread${rate}`;
}

const pctLevel = (x) => `${Number((100 * x).toFixed(2))}%`;

/**
 * The cells that survive the core's Benjamini–Hochberg adjustment (multiplicity.hpp: every group × percentile with a
 * p-value is one family, at 1 − confidence): { method, level, cells, survivors: [{group, p, diff_ms, q_value}] }.
 */
function discoveries(report) {
  const cells = report.groups.flatMap((g) => (g.analysis?.rows ?? []).filter((r) => Number.isFinite(r.p_value))
    .map((r) => ({ group: g.name, p: r.p, diff_ms: r.diff_ms, q_value: r.q_value, discovery: Boolean(r.discovery) })));
  return { method: 'Benjamini-Hochberg', level: 1 - report.confidence, cells: cells.length,
    survivors: cells.filter((c) => c.discovery).map(({ discovery, ...c }) => c) };
}
