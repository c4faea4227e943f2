// The report as text for the terminal: the verdict; per group (overall, then each region, browser, ... as --by chose) the
// counts and exclusions, the Dropbox table with confidence intervals, the paired within-run difference, the order-effect
// test and the sample-size line; then a one-line-per-group summary and, when computed, the daily series.
import { NETWORK_DATA_CREDIT } from '../server/networkFor.mjs';
import { OTHER_GROUP } from './readReportData.mjs';
import { fixed, snap, whole } from './numberText.mjs';

const num = (v, d = 2) => (Number.isFinite(v) ? fixed(v, d) : '-');
const signed = (v, d = 2) => (Number.isFinite(v) ? `${snap(v, d) > 0 ? '+' : ''}${fixed(v, d)}` : '-');
const int = (v) => (Number.isFinite(v) ? whole(v).toLocaleString('en-US') : '-');
const pct = (v, d = 1) => (Number.isFinite(v) ? `${fixed(100 * v, d)}%` : '-');
// An undefined bound (too few runs, or a percentile too extreme for the sample) reads n/a rather than a made-up number.
const interval = (ci, d = 1, unit = '') => (Array.isArray(ci) && Number.isFinite(ci[0]) && Number.isFinite(ci[1])
  ? `[${signed(ci[0], d)}${unit}, ${signed(ci[1], d)}${unit}]` : 'n/a');
/** What a Δ % interval without finite bounds reads (Fieller's set when the HTTP/2 quantile's own interval reaches 0). */
export const UNBOUNDED = 'unbounded';
// A row's Δ % interval: its bounds (each followed by unit), 'unbounded', or n/a.
const pctInterval = (r, unit = '%') => (r.ci_pct_unbounded ? UNBOUNDED : interval(r.ci_pct, 1, unit));
/** What an unbounded Δ % interval means, for the arms of report.arms. */
export const unboundedText = (arms) => `${UNBOUNDED}: the ${armLabels(arms).control} quantile's own interval reaches 0, so no ` +
  'finite bounds hold Δ % (the Δ ms interval still decides)';
export const percentileLabel = (p) => `p${Number((p * 100).toFixed(1))}`;
const hasInterval = (r) => Array.isArray(r.ci_ms) && r.ci_ms.every(Number.isFinite);

/** The marks of a cell, text and HTML alike, and what each means. */
export const MARKS = Object.freeze({
  significant: { mark: '*', what: 'Δ excludes 0 (its interval in ms and in %: one test)' },
  includesZero: { mark: '', what: 'the interval includes 0: no difference shown' },
  noInterval: { mark: '?', what: 'no interval: fewer runs in an arm than the percentile needs' },
  unfinished: { mark: '≥', what: 'not estimable: the percentile reaches requests that did not finish (timed out, cut short or failed), known only to be slower' },
  notComparable: { mark: '!', what: 'the arms are not comparable (see the verdict): no difference is read' },
});
/**
 * The mark of a row (a cell: a group × percentile): significant, includesZero, noInterval or notComparable (the
 * report's arms are not comparable: withoutSignificance() of buildReport.mjs). One decision, the core's `significant`:
 * the Δ ms interval excludes 0, and the Δ % interval (the same test, inverted for the ratio) with it.
 */
export const markOf = (r) => (r.not_comparable ? 'notComparable' : r.unfinished ? 'unfinished' : !hasInterval(r) ? 'noInterval'
  : r.significant ? 'significant' : 'includesZero');
const starOf = (r) => (markOf(r) === 'significant' ? '*' : markOf(r) === 'unfinished' ? MARKS.unfinished.mark : '');
// An arm's quantile: ms, or what an unfinished row holds there (none: its requests did not finish).
const armMs = (r, v) => (r.unfinished && !Number.isFinite(v) ? `${MARKS.unfinished.mark} unfinished` : num(v));

/**
 * The requests that did not go as planned, by what the core's rule does with them (schema.requestClasses' role): those
 * that stay in their arm (as assigned) and those whose run left both arms (an instrument fault). "in their arms:
 * fallback 40, timeout 3; runs dropped (instrument fault): timing_unavailable 2".
 */
export function notAsPlannedLine(g, report) {
  const named = (keep) => report.exclusions.filter((r) => g.excluded[r] > 0 && keep(report.classRoles?.[r]))
    .map((r) => `${r} ${int(g.excluded[r])}`);
  const kept = named((role) => role && role !== 'fault');
  const dropped = named((role) => role === 'fault');
  const missing = g.excluded.missing_metric > 0 ? [`missing_metric ${int(g.excluded.missing_metric)}`] : [];
  if (!kept.length && !dropped.length && !missing.length) return 'every request went as planned';
  return [kept.length ? `in their arms: ${kept.join(', ')}` : '', dropped.length ? `runs dropped (instrument fault): ${dropped.join(', ')}` : '',
    missing.length ? `without the metric: ${missing.join(', ')}` : ''].filter(Boolean).join('; ');
}
/** What "n/a" means wherever an interval is printed. */
export const NA_TEXT = 'n/a: no interval (fewer runs in an arm than the percentile needs)';
/** The fewest runs per arm each percentile of rows needs for an interval (the core's min_runs): "p50 10, p95 73". */
export const minRunsText = (rows) => rows.filter((r) => Number.isFinite(r.min_runs))
  .map((r) => `${percentileLabel(r.p)} ${int(r.min_runs)}`).join(', ');

/** How a --by grouping is named in headings. */
export const BY_LABELS = Object.freeze({ region: 'region', browser: 'browser', browser_version: 'browser version', config: 'config',
  effective_type: 'effective connection type', context: 'where the module ran', day: 'day', network: 'network' });

/**
 * Under a pooled split (--by network): which values were pooled as "other" and the network data's credit (its licence
 * asks for it wherever its results show). Empty for other splits.
 */
export function pooledNote(report) {
  if (!report.pooled) return [];
  const { minRuns, values } = report.pooled;
  return [`${BY_LABELS[report.by]}s with fewer than ${int(minRuns)} runs: ${int(values)}, pooled as "${OTHER_GROUP}" (--min-network-runs)`,
    `${NETWORK_DATA_CREDIT.text}`];
}

/**
 * How the report names the arms of a report.arms mode: by protocol in the experiment (h2-h3), by role and protocol in an
 * A/A test, where the true difference is zero. control/treatment: the arm names; aa: the A/A line, or '' for h2-h3.
 */
export function armLabels(arms = 'h2-h3') {
  if (arms === 'h2-h3') return { control: 'HTTP/2', treatment: 'HTTP/3', aa: '' };
  const proto = arms.split('-')[0];
  return { control: `control ${proto}`, treatment: `treatment ${proto}`,
    aa: `A/A test: every interval should cover 0 (${proto} in both arms, on two origins)` };
}

/**
 * Each arm's failure rate (network or HTTP errors of the requests in the arm) and the paired interval of the
 * difference, the core's (failure_rate.hpp): "failed: HTTP/2 0.40% (3 of 750), HTTP/3 1.20% (9 of 750); Δ +0.80 points
 * [+0.10, +1.50] *". The HTML report shows the same line.
 */
export function failureLine(f, report) {
  const L = armLabels(report.arms);
  const points = (v) => signed(100 * v, 2);
  const ci = Array.isArray(f.ci) && f.ci.every(Number.isFinite) ? ` [${points(f.ci[0])}, ${points(f.ci[1])}]${f.significant ? ' *' : ''}` : ' (no interval)';
  return `failed (network or HTTP error): ${L.control} ${pct(f.rate_h2, 2)} (${int(f.failed_h2)} of ${int(f.requests_h2)}), ` +
    `${L.treatment} ${pct(f.rate_h3, 2)} (${int(f.failed_h3)} of ${int(f.requests_h3)}); Δ ${points(f.diff)} points${ci}`;
}

/**
 * The sampled page loads that could not load the run, by reason: "load errors: 3 (wasm_type 2, glue_import 1)". They
 * sent no measurement, so they are in no group below; the HTML report shows the same line.
 */
export function loadErrorLine({ total, byReason }) {
  return `load errors: ${int(total)} (${byReason.map((r) => `${r.reason} ${int(r.n)}`).join(', ')})`;
}

/**
 * Under the load errors' line, one line per reason with the error text its beacons gave most often, so that the cause
 * is read beside the reason: "  worker_import: start: Failed to fetch dynamically imported module: https://…". None for
 * a reason whose beacons gave no text. What each reason can mean and its fix: docs/troubleshooting.md.
 */
export function loadErrorDetails({ byReason }) {
  return byReason.filter((r) => r.error).map((r) => `  ${r.reason}: ${r.error}`);
}

/**
 * Where the runs' core ran: "main thread: 3 of 1,200 runs (0.3%) ran on the page's main thread, not in the Worker
 * (worker_load 2, csp 1)". '' for a report of no run. The HTML report shows the same line.
 */
export function mainThreadLine({ runs, main, share, byReason }) {
  if (!runs) return '';
  return `main thread: ${int(main)} of ${int(runs)} runs (${pct(share)}) ran on the page's main thread, not in the Worker` +
    (main ? ` (${byReason.map((r) => `${r.reason} ${int(r.n)}`).join(', ')})` : '');
}

const payloadName = (bytes) => (bytes ? `${int(bytes)} B` : '0 B (the no-op)');

/**
 * Which payload mode the report reads, and the other modes stored for its arms mode (each read on its own, never
 * pooled): "payload: 131,072 B per measured request (--payload-bytes); other payload modes stored: 0 B (the no-op) 120
 * runs". '' when every run of the arms mode fetched the no-op. The HTML report shows the same line.
 */
/**
 * Which stored runs the report reads: "N stored runs" and, where they differ, how many have a measured request (the
 * verdict's and the tables' runs) and how many have none (a run that ended before its first request), and by how they
 * ended where any did not complete; the doctor's test beacons are in no count and named here.
 */
export function storedRunsText({ storedRuns, testBeacons = 0, groups = [], outcomes }) {
  const measured = groups[0]?.runs ?? 0;
  const without = storedRuns - measured;
  const ended = outcomes && outcomes.complete !== storedRuns
    ? `; ${Object.entries(outcomes).filter(([, n]) => n).map(([o, n]) => `${o} ${int(n)}`).join(', ')}` : '';
  return `${int(storedRuns)} stored runs${without > 0 || ended ? ` (${int(measured)} with a measured request, ${int(without)} without${ended})` : ''}` +
    `${testBeacons ? `, ${int(testBeacons)} doctor test beacon${testBeacons === 1 ? '' : 's'} left out` : ''}`;
}

/**
 * The stored runs this report does not read, each count with its reason (report.runCounts): "not read: 40 of other
 * payload modes, 12 of arms h2-h2, 3 load errors (no run), 7 received before --since; 1,062 stored in all". '' when it
 * reads every stored run.
 */
export function notReadText({ runCounts: c }) {
  if (!c || c.read === c.stored) return '';
  const parts = [[c.otherPayloads, 'of other payload modes'], ...c.otherArms.map((a) => [a.runs, `of arms ${a.arms}`]),
    [c.loadErrors, 'load errors (no run)'], [c.beforeSince, 'received before --since']].filter(([n]) => n > 0);
  return `not read: ${parts.map(([n, what]) => `${int(n)} ${what}`).join(', ')}; ${int(c.stored)} stored in all`;
}

export function payloadLine({ payloadBytes = 0, payloadModes = [] }) {
  const others = payloadModes.filter((m) => m.bytes !== payloadBytes);
  if (!payloadBytes && others.length === 0) return '';
  return `payload: ${payloadName(payloadBytes)} per measured request (--payload-bytes); ` +
    (others.length ? `other payload modes stored: ${others.map((m) => `${payloadName(m.bytes)} ${int(m.runs)} runs`).join(', ')}`
      : 'no other payload mode stored');
}

/** report: from buildReport(). Returns the whole text, lines joined with \n. */
export function formatReport(report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const L = armLabels(report.arms);
  const lines = [
    `h3probe report: ${report.metric}, ${storedRunsText(report)}${report.since ? ` received since ${report.since}` : ''}` +
      `${L.aa ? ` with arms ${report.arms}` : ''}; ` +
      `${conf} intervals by the ${report.method === 'delta' ? 'delta method' : 'cluster bootstrap'}, the run (page load) as the unit`,
    ...(notReadText(report) ? [notReadText(report)] : []),
    ...(L.aa ? [L.aa] : []),
    `Δ = ${L.treatment} − ${L.control} (negative: ${L.treatment} faster); * = Δ excludes 0 (in ms and in %: one test, ` +
      'so the two intervals exclude 0 together)',
    ...(report.loadErrors?.total ? [loadErrorLine(report.loadErrors), ...loadErrorDetails(report.loadErrors)] : []),
    ...(report.mainThread && mainThreadLine(report.mainThread) ? [mainThreadLine(report.mainThread)] : []),
    ...(payloadLine(report) ? [payloadLine(report)] : []),
    ...(report.verdict ? ['', report.verdict.text] : []),
  ];
  const by = BY_LABELS[report.by ?? 'region'];
  for (const g of report.groups) {
    // A single group holding every run (e.g. region 'local' for the local stack) would repeat the overall block.
    if (report.groups.length === 2 && g !== report.groups[0] && g.runs === report.groups[0].runs) {
      lines.push('', `== ${by} ${g.name}: every run (same as overall)`);
    } else {
      lines.push('', ...formatGroup(g, report));
    }
  }
  // The group table even for one group: it says which region (browser, ...) the runs are from.
  if (report.groups.length >= 2) lines.push('', ...formatGroupSummary(report));
  if (report.daily?.days?.length) lines.push('', ...formatDaily(report));
  if (report.connectionSetup) lines.push('', ...formatConnectionSetup(report.connectionSetup, report));
  if (report.daily?.days?.some((d) => d.cumulative)) lines.push('', ...formatCumulative(report));
  return lines.join('\n');
}

function formatGroup(g, report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const L = armLabels(report.arms);
  const which = g.name === 'overall' ? ' (every stored run read with a measured request)' : '';
  const lines = [`== ${g.name === 'overall' ? 'overall' : `${BY_LABELS[report.by ?? 'region']} ${g.name}`}: ${int(g.runs)} runs${which}, ${int(g.requests)} measured requests; ` +
    `used ${L.control} ${int(g.arms.h2.n)} (${int(g.arms.h2.runs)} runs), ${L.treatment} ${int(g.arms.h3.n)} (${int(g.arms.h3.runs)} runs)`];
  lines.push(notAsPlannedLine(g, report));
  lines.push(`${L.treatment} fallback rate: ${pct(g.fallback.rate)} (${int(g.fallback.fallbacks)} of ${int(g.fallback.completed)} ` +
    'completed treatment requests went over another protocol)');
  if (g.failures) lines.push(failureLine(g.failures, report));

  const rows = g.analysis?.rows ?? [];
  if (rows.length === 0) {
    lines.push('(no table: an arm has no usable samples)');
  } else {
    const header = ['', `${L.control} ms`, `${L.treatment} ms`, 'Δ ms', `${conf} CI Δ ms`, '', 'Δ %', `${conf} CI Δ %`, ''];
    const cells = rows.map((r) => [percentileLabel(r.p), armMs(r, r.h2), armMs(r, r.h3), signed(r.diff_ms), interval(r.ci_ms, 2),
      starOf(r), `${signed(r.diff_pct, 1)}%`, pctInterval(r), starOf(r)]);
    lines.push(...alignTable(header, cells));
    if (rows.some((r) => !hasInterval(r) && !r.unfinished)) lines.push(`${NA_TEXT}; the fewest runs per arm: ${minRunsText(rows)}`);
    if (rows.some((r) => r.unfinished)) lines.push(`${MARKS.unfinished.mark} ${MARKS.unfinished.what}`);
    if (rows.some((r) => r.ci_pct_unbounded)) lines.push(unboundedText(report.arms));
    lines.push(...comparisonLines(rows, report));
  }

  if (g.paired) {
    const p = g.paired;
    lines.push(`paired within-run Δ (median ${L.treatment} − median ${L.control} of each run, ${int(p.n)} runs): ` +
      `mean ${signed(p.mean)} ms ${interval(p.ci_mean, 2)}, median ${signed(p.median)} ms ${interval(p.ci_median, 2)}, ` +
      `p10 ${signed(p.p10)}, p90 ${signed(p.p90)} ms`);
  } else {
    lines.push('paired within-run Δ: fewer than 2 runs with both arms');
  }
  if (g.order) {
    const o = g.order;
    lines.push(`order effect: mean paired Δ ${signed(o.mean_h2_first)} ms when ${L.control} ran first (${int(o.n_h2_first)} runs), ` +
      `${signed(o.mean_h3_first)} ms when ${L.treatment} ran first (${int(o.n_h3_first)}); difference ${signed(o.diff)} ms ` +
      `${interval(o.ci, 2)}, p = ${num(o.p_value, 3)}${Array.isArray(o.ci) && (o.ci[0] > 0 || o.ci[1] < 0) ? ' *' : ''}`);
  } else {
    lines.push('order effect: not testable (needs runs in both orders: --order random)');
  }
  lines.push(sampleSizeLine(g, report));
  return lines;
}

/** The mark of a cell that survives the report's Benjamini–Hochberg adjustment (the row's discovery), and its meaning. */
export const DISCOVERY_MARK = Object.freeze({ mark: '†', what: 'survives the Benjamini–Hochberg adjustment over every group × percentile' });
const qText = (r) => (Number.isFinite(r.q_value) ? `q ${r.q_value < 0.001 ? '<0.001' : fixed(r.q_value, 3)}${r.discovery ? ` ${DISCOVERY_MARK.mark}` : ''}` : 'q -');

// Beside the table: each Δ ms cell's p-value adjusted for the report's comparisons (the core's Benjamini–Hochberg),
// and the anytime-valid interval of Δ ms with its own mark.
function comparisonLines(rows, report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const lines = [];
  if (rows.some((r) => Number.isFinite(r.q_value))) {
    lines.push(`Δ ms adjusted for every comparison in this report (Benjamini–Hochberg; ${DISCOVERY_MARK.mark} ` +
      `survives at ${Math.round((1 - report.confidence) * 100)}%): ${rows.map((r) => `${percentileLabel(r.p)} ${qText(r)}`).join(', ')}`);
  }
  if (rows.some((r) => Array.isArray(r.cs_ms) && r.cs_ms.every(Number.isFinite))) {
    lines.push(`anytime-valid ${conf} interval of Δ ms (valid however often it is looked at): ` +
      rows.map((r) => `${percentileLabel(r.p)} ${interval(r.cs_ms, 2)}${r.significant_cs ? ' *' : ''}`).join(', '));
  }
  return lines;
}

/** What a sample-size plan rests on: the Δ's own spread (the arms' pairing counted) or the control arm's alone. */
export const sampleSizeBasis = (s) => (s.paired ? 'from the paired Δ' : 'from the control arm alone, as if the arms were unpaired');

function sampleSizeLine(g, report) {
  const t = report.sampleSizeTarget;
  const what = `to detect a ${Math.round(t.mde * 100)}% change at ${percentileLabel(t.p)} (α ${t.alpha}, power ${t.power})`;
  const s = g.sampleSize;
  if (!s || !Number.isFinite(s.runs_per_arm)) return `sample size ${what}: not enough data`;
  return `sample size ${what}: ${int(Math.ceil(s.runs_per_arm))} runs per arm, ${int(Math.min(g.arms.h2.runs, g.arms.h3.runs))} ` +
    `in the smaller arm so far (${sampleSizeBasis(s)}, design effect ${num(s.design_effect)}, ${num(s.requests_per_run, 1)} requests per run, baseline ${num(s.quantile)} ms)`;
}

/** The percentiles of a group whose Δ ms survives the report's Benjamini–Hochberg adjustment, e.g. "p90 p95", or "-". */
export const survivorsOf = (g) => (g.analysis?.rows ?? []).filter((r) => r.discovery).map((r) => percentileLabel(r.p)).join(' ') || '-';

// Δ% with the mark of its own interval, padded so that the numbers line up whatever the mark.
const markedPct = (r) => (r ? `${signed(r.diff_pct, 1)}${MARKS[markOf(r)].mark || ' '}` : '-');
// The notComparable mark only where the report's arms are not comparable.
const legend = (report) => `${Object.entries(MARKS).filter(([k, m]) => m.mark && (k !== 'notComparable' || report.verdict?.comparable === false))
  .map(([, m]) => `${m.mark} ${m.what}`).join('; ')}; ` +
  'no mark: the interval includes 0';

function formatGroupSummary(report) {
  const by = BY_LABELS[report.by ?? 'region'];
  const header = [by, 'runs', 'fallback', 'mismatch', ...report.percentiles.flatMap((p) => [`${percentileLabel(p)} Δ%`]),
    'runs needed per arm', 'runs in smaller arm', `${DISCOVERY_MARK.mark} survives BH`];
  const cells = report.groups.map((g) => {
    const byP = new Map((g.analysis?.rows ?? []).map((r) => [r.p, r]));
    return [g.name, int(g.runs), pct(g.fallback.rate), int(g.excluded.protocol_mismatch ?? 0),
      ...report.percentiles.map((p) => markedPct(byP.get(p))),
      g.sampleSize && Number.isFinite(g.sampleSize.runs_per_arm) ? int(Math.ceil(g.sampleSize.runs_per_arm)) : '-',
      int(Math.min(g.arms.h2.runs, g.arms.h3.runs)), survivorsOf(g)];
  });
  const L = armLabels(report.arms);
  return [`by ${by} (Δ% of ${L.treatment} vs ${L.control}; runs needed per arm for the sample-size target above):`,
    ...alignTable(header, cells), `${legend(report)}; ${DISCOVERY_MARK.mark} survives BH: the percentiles whose Δ ms ${DISCOVERY_MARK.what}`,
    ...pooledNote(report)];
}

// One line per day: Δ% with its interval at the daily percentiles.
function formatDaily(report) {
  const { percentiles, days } = report.daily;
  const header = ['day', 'runs', ...percentiles.map((p) => `${percentileLabel(p)} Δ% [CI]`)];
  const cells = days.map((d) => {
    const byP = new Map(d.rows.map((r) => [r.p, r]));
    return [d.day, int(d.runs), ...percentiles.map((p) => {
      const r = byP.get(p);
      return r ? `${markedPct(r)} ${pctInterval(r, '')}` : '-';
    })];
  });
  return ['by day received (is the effect stable from day to day?):', ...alignTable(header, cells), legend(report)];
}

// The daily looks: per day, Δ ms over every run received up to then, with the fixed-horizon interval (valid for one
// look planned in advance) beside the anytime-valid one (valid however often it is looked at).
function formatCumulative(report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const { percentiles, days } = report.daily;
  const header = ['up to day', 'runs', ...percentiles.flatMap((p) => [`${percentileLabel(p)} Δ ms`, 'fixed', 'anytime'])];
  const cells = days.filter((d) => d.cumulative).map((d) => {
    const byP = new Map(d.cumulative.rows.map((r) => [r.p, r]));
    return [d.day, int(d.cumulative.runs), ...percentiles.flatMap((p) => {
      const r = byP.get(p);
      return r ? [signed(r.diff_ms), `${interval(r.ci_ms, 2)}${starOf(r) || ' '}`, `${interval(r.cs_ms, 2)}${r.significant_cs ? '*' : ' '}`]
        : ['-', '-', '-'];
    })];
  });
  return [`cumulative by day (every run received up to the end of the day; ${conf} fixed-horizon interval, valid for one look ` +
    'planned in advance, beside the anytime-valid one, valid however often it is looked at):', ...alignTable(header, cells),
  `* the interval excludes 0; ${NA_TEXT}`];
}

function alignTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

// The connection-setup view as text (the view's data: connectionSetup.mjs): the cold HTTP/2 and HTTP/3 connections the
// pre-warm requests opened, per protocol at the view's percentiles with intervals, their difference within the run, and
// how often the first request to the HTTP/3 origin already went over HTTP/3. renderConnectionSetupHtml.mjs reads its
// words from here.
const metricLabel = Object.freeze({ connect_ms: 'connect', network_ms: 'network', tls_ms: 'TLS' });
/** What each protocol's cold sample is, in the words the text and HTML use. */
export const SETUP_WHAT = Object.freeze({
  h2: 'HTTP/2: TCP + TLS to the HTTP/2 origin',
  h3: 'HTTP/3: QUIC to the HTTP/3 origin',
});
/** Why tls_ms is shown for HTTP/2 only. */
export const TLS_NOTE = 'TLS for HTTP/2 only: QUIC carries TLS in its handshake, so for HTTP/3 the browsers report '
  + 'secureConnectionStart at (or within a fraction of a millisecond of) connectStart';

/** One line per protocol: how many runs gave a cold sample, and why the others did not. */
export function outcomeText(g, p) {
  const o = g.outcomes[p];
  const others = Object.entries(o).filter(([k, n]) => k !== 'cold' && n > 0).map(([k, n]) => `${k} ${int(n)}`);
  return `${int(o.cold)} runs${others.length ? ` (not cold: ${others.join(', ')})` : ''}`;
}

/** The share line: first request to the HTTP/3 origin already over HTTP/3. */
export function firstH3Text(g) {
  const f = g.firstH3;
  const known = f.over_h3 + f.over_other;
  return `first request to the HTTP/3 origin already over HTTP/3 (Alt-Svc remembered, or the browser told to): ${pct(f.share)} `
    + `(${int(f.over_h3)} of ${int(known)} runs${f.unknown ? `; ${int(f.unknown)} more whose first request failed or whose protocol is not verified` : ''})`;
}

/** view: report.connectionSetup; report: for the confidence. Returns the lines. */
export function formatConnectionSetup(view, report) {
  // A quantile's own interval: unsigned, as the quantile.
  const range = (c) => (Array.isArray(c) && c.every(Number.isFinite) ? `[${num(c[0])}, ${num(c[1])}]` : 'n/a');
  const conf = `${Math.round(report.confidence * 100)}%`;
  const [overall, ...groups] = view.groups;
  const lines = [`== connection setup: the cold connections the pre-warm requests opened (never in the arms above), ${int(overall.runs)} runs of arms ${view.arms}`,
    `cold ${SETUP_WHAT.h2}: ${outcomeText(overall, 'h2')}`,
    `cold ${SETUP_WHAT.h3}: ${outcomeText(overall, 'h3')}`,
    `both in ${int(overall.paired)} runs; ${firstH3Text(overall)}`];
  const header = ['', 'HTTP/2 ms', `${conf} CI`, 'HTTP/3 ms', `${conf} CI`, 'Δ ms', `${conf} CI Δ ms`, ''];
  const rows = [];
  for (const m of view.metrics) {
    for (const r of overall[m.name].rows) {
      const label = `${metricLabel[m.name] ?? m.name} ${percentileLabel(r.p)}`;
      rows.push(m.paired
        ? [label, num(r.h2), range(r.ci_h2), num(r.h3), range(r.ci_h3), signed(r.diff_ms), interval(r.ci_ms, 2), r.significant ? '*' : '']
        : [label, num(r.h2), range(r.ci_h2), '-', '', '', '', '']);
    }
  }
  if (rows.length) lines.push(...alignTable(header, rows), `${TLS_NOTE}; Δ = HTTP/3 − HTTP/2, quantile by quantile`);
  if (view.metrics.some((m) => m.paired && overall[m.name].rows.length === 0)) {
    lines.push('(no connect or network rows: they need runs with a cold sample of each protocol)');
  }
  for (const m of view.metrics.filter((x) => x.paired)) {
    const p = overall[m.name].paired;
    lines.push(p
      ? `paired within-run Δ ${metricLabel[m.name]} (cold HTTP/3 − cold HTTP/2 of each run, ${int(p.n)} runs): median ${signed(p.median)} ms ` +
        `${interval(p.ci_median, 2)}, mean ${signed(p.mean)} ms ${interval(p.ci_mean, 2)}, p10 ${signed(p.p10)}, p90 ${signed(p.p90)} ms`
      : `paired within-run Δ ${metricLabel[m.name]}: fewer than 2 runs with both cold samples`);
  }
  if (groups.length) {
    const p50 = (g, name) => g[name].paired;
    lines.push(`by ${BY_LABELS[report.by ?? 'region']}:`, ...alignTable(['', 'runs', 'both cold', 'paired Δ connect median [CI]', 'paired Δ network median [CI]', 'first over HTTP/3'],
      groups.map((g) => [g.name, int(g.runs), int(g.paired),
        p50(g, 'connect_ms') ? `${signed(p50(g, 'connect_ms').median)} ${interval(p50(g, 'connect_ms').ci_median, 2)}` : '-',
        p50(g, 'network_ms') ? `${signed(p50(g, 'network_ms').median)} ${interval(p50(g, 'network_ms').ci_median, 2)}` : '-',
        pct(g.firstH3.share)])));
  }
  return lines;
}
