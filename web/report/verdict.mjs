// The report's answer in one line: at which percentiles the treatment arm is faster or slower with confidence, by how
// much, over how many runs and which dates. It reads one interval, Δ ms's (VERDICT_INTERVAL), and says so: the Δ %
// interval is computed apart and can include 0 where Δ ms's does not; and the cautions that must be read with it (too few runs, loopback
// only, runs on the page's main thread).
// Text and HTML print it first; the JSON report carries it as data.
import { armLabels, markOf, percentileLabel } from './formatReport.mjs';
import { fixed, snap } from './numberText.mjs';

/** Above this share of a report's runs on the page's main thread (not in the Worker), the verdict carries a caution. */
export const MAIN_THREAD_CAUTION_SHARE = 0.01;

// The region the collector gives loopback clients (web/server/regionFor.mjs): no real network between browser and origins.
const LOOPBACK_REGION = 'local';

/** The interval the verdict reads: the row's Δ ms interval and its mark. */
export const VERDICT_INTERVAL = Object.freeze({ unit: 'ms', name: 'Δ ms' });

const signed = (v, d) => `${snap(v, d) > 0 ? '+' : ''}${fixed(v, d)}`;
const day = (iso) => (iso ? iso.slice(0, 10) : '?');

/**
 * report: from buildReport(). Returns { text, interval: 'ms' (the one it reads), cautions: [text], runs, received: {first, last}, percentiles: [{p, verdict:
 * 'faster'|'slower'|'no difference shown'|'no interval', diff_ms, diff_pct, ci_ms, q_value, discovery, cs_ms,
 * significant_cs_ms}], fdr (discoveries() below) } for the overall group. Its text also says how many cells survive
 * the multiplicity adjustment, naming them, and where the anytime-valid interval excludes 0.
 */
export function verdict(report) {
  const overall = report.groups[0];
  const L = armLabels(report.arms);
  const conf = `${Math.round(report.confidence * 100)}%`;
  const rows = overall?.analysis?.rows ?? [];
  const percentiles = rows.map((r) => {
    const mark = markOf(r, VERDICT_INTERVAL.unit);
    const hasCi = mark !== 'noInterval';
    const word = !hasCi ? 'no interval' : mark !== 'significant' ? 'no difference shown' : r.diff_ms < 0 ? 'faster' : 'slower';
    return { p: r.p, verdict: word, diff_ms: r.diff_ms, diff_pct: r.diff_pct, ci_ms: hasCi ? r.ci_ms : null };
  });
  const runs = overall?.runs ?? 0;
  const dates = report.received?.first ? `${day(report.received.first)} to ${day(report.received.last)}` : 'no dates';
  const named = (word) => percentiles.filter((x) => x.verdict === word);
  const parts = [];
  for (const word of ['faster', 'slower']) {
    const xs = named(word);
    if (xs.length) {
      parts.push(`${L.treatment} ${word} at ${xs.map((x) => `${percentileLabel(x.p)} (${signed(x.diff_ms, 2)} ms, ` +
        `${signed(x.diff_pct, 1)}%, ${conf} CI [${signed(x.ci_ms[0], 2)}, ${signed(x.ci_ms[1], 2)}] ms)`).join(', ')}`);
    }
  }
  const none = named('no difference shown');
  if (none.length) parts.push(`no difference shown at ${none.map((x) => percentileLabel(x.p)).join(', ')}`);
  const noCi = named('no interval');
  if (noCi.length) parts.push(`no interval at ${noCi.map((x) => percentileLabel(x.p)).join(', ')}`);
  if (!rows.length) parts.push('no table: an arm has no usable samples');

  const cautions = [];
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
  const main = report.mainThread;
  if (main?.share > MAIN_THREAD_CAUTION_SHARE) {
    cautions.push(`${mainThreadShare(main)} of the runs ran on the page's main thread, not in the Worker ` +
      `(${main.byReason.map((r) => `${r.reason} ${r.n}`).join(', ')}): there the probe works on the page's own thread; ` +
      'each reason and its fix: docs/embedding.md, "Where it runs"');
  }
  const fdr = discoveries(report);
  const anytime = rows.filter((r) => r.significant_cs_ms).map((r) => percentileLabel(r.p));
  const counted = `${fdr.survivors.length} of ${fdr.cells} ${report.by ?? 'region'} × percentile cells ` +
    `survive${fdr.survivors.length ? `: ${fdr.survivors.map((x) => `${x.group} ${percentileLabel(x.p)}`).join(', ')}` : ''}`;
  const text = `verdict (${runs.toLocaleString('en-US')} runs, received ${dates}; by the ${conf} interval of ` +
    `${VERDICT_INTERVAL.name}): ${parts.join('; ')}` +
    (fdr.cells ? `\ncounting every comparison (Benjamini–Hochberg, false discovery rate ${pctLevel(fdr.level)}): ${counted}` : '') +
    (rows.some((r) => Array.isArray(r.cs_ms) && r.cs_ms.every(Number.isFinite))
      ? `\nanytime-valid (the ${conf} confidence sequence, valid however often this is read): ` +
        `${anytime.length ? `excludes 0 at ${anytime.join(', ')}` : 'no difference shown'}` : '') +
    cautions.map((c) => `\nCAUTION: ${c}`).join('');
  return { text, interval: VERDICT_INTERVAL.unit, cautions, runs, received: report.received,
    percentiles: percentiles.map((x, i) => ({ ...x, q_value: rows[i].q_value ?? null, discovery: Boolean(rows[i].discovery),
      cs_ms: rows[i].cs_ms ?? null, significant_cs_ms: Boolean(rows[i].significant_cs_ms) })),
    fdr };
}

const mainThreadShare = ({ main, runs, share }) => `${main.toLocaleString('en-US')} of ${runs.toLocaleString('en-US')} (${(100 * share).toFixed(1)}%)`;
const pctLevel = (x) => `${Number((100 * x).toFixed(2))}%`;

/**
 * The cells that survive the core's Benjamini–Hochberg adjustment (multiplicity.hpp: every group × percentile with a
 * p-value is one family, at 1 − confidence): { method, level, cells, survivors: [{group, p, diff_ms, q_value}] }.
 */
export function discoveries(report) {
  const cells = report.groups.flatMap((g) => (g.analysis?.rows ?? []).filter((r) => Number.isFinite(r.p_value))
    .map((r) => ({ group: g.name, p: r.p, diff_ms: r.diff_ms, q_value: r.q_value, discovery: Boolean(r.discovery) })));
  return { method: 'Benjamini-Hochberg', level: 1 - report.confidence, cells: cells.length,
    survivors: cells.filter((c) => c.discovery).map(({ discovery, ...c }) => c) };
}
