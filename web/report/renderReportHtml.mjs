// The report as one self-contained HTML page: inline CSS and hand-made SVG (no script, no external request; the page's own
// Content-Security-Policy forbids any). The answer on one screen: the verdict, what could bias it, and one forest plot
// (Δ % with its interval per percentile, overall and per group); then the tables: the summary per group (region,
// browser, ... as --by chose) with the fallback rates, and per group its percentiles; folded below, per group the tail
// (CCDF on log-log axes) and the CDF, the methods, and the daily series with its looks.
import { armLabels, BY_LABELS, DISCOVERY_MARK, failureLine, loadErrorDetails, loadErrorLine, mainThreadLine, notAsPlannedLine, notReadText, storedRunsText, MARKS,
  markOf, minRunsText, NA_TEXT, payloadLine, percentileLabel, pooledNote, sampleSizeBasis, survivorsOf, UNBOUNDED, unboundedText } from './formatReport.mjs';
import { NETWORK_DATA_CREDIT } from '../server/networkFor.mjs';
import { renderConnectionSetupHtml } from './renderConnectionSetupHtml.mjs';
import { fixed, snap, whole } from './numberText.mjs';

const COLORS = { h2: '#2563eb', h3: '#ea580c' };

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const num = (v, d = 2) => (Number.isFinite(v) ? fixed(v, d) : '–');
const signed = (v, d = 2) => (Number.isFinite(v) ? `${snap(v, d) > 0 ? '+' : snap(v, d) < 0 ? '−' : ''}${fixed(Math.abs(v), d)}` : '–');
const int = (v) => (Number.isFinite(v) ? whole(v).toLocaleString('en-US') : '–');
const pct = (v, d = 1) => (Number.isFinite(v) ? `${fixed(100 * v, d)}%` : '–');
const ci = (c, d, unit = '') => (Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1])
  ? `[${signed(c[0], d)}${unit}, ${signed(c[1], d)}${unit}]` : 'n/a');
const f1 = (v) => snap(v, 1);
// An arm's quantile, or what a row that reaches requests that did not finish holds there (as the text report).
const armMs = (r, v) => (r.unfinished && !Number.isFinite(v) ? `${MARKS.unfinished.mark} unfinished` : num(v));
// A row's Δ % interval as ci() writes it, or unbounded (Fieller's set without finite bounds).
const ciPct = (r, d = 1, unit = '') => (r.ci_pct_unbounded ? UNBOUNDED : ci(r.ci_pct, d, unit));

/** report: from buildReport(..., {cdf: true}). options.generatedAt: a date string for the footer. Returns the HTML text. */
export function renderReportHtml(report, { generatedAt = new Date().toISOString(), title = 'h3probe report' } = {}) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const groups = report.groups.slice(1);
  const by = BY_LABELS[report.by ?? 'region'];
  const L = armLabels(report.arms);
  const lede = `<p class="lede">Network time of the ${report.payloadBytes ? `${int(report.payloadBytes)}-byte` : 'no-op'} requests, ${L.aa ? `${L.treatment} against ${L.control}` : 'HTTP/3 (treatment) against HTTP/2 (control)'}. Metric <code>${esc(report.metric)}</code>;
      ${conf} confidence intervals by the ${report.method === 'delta' ? 'delta method' : 'cluster bootstrap'} with the run (page load) as the unit. Δ = ${L.treatment} − ${L.control}:
      negative means ${L.treatment} was faster; <b>*</b> marks a cell whose Δ excludes 0 (in ms and in %: one test, so both intervals exclude 0 together).</p>`;
  const body = [
    `<h1>${esc(title)}</h1>`,
    ...(report.verdict ? [verdictSection(report.verdict)] : []),
    forestFigure(report, L),
    decisionTable(report, L),
    ...(report.verdict ? [verdictMore(report.verdict)] : []),
    ...(L.aa ? [`<p class="aa"><b>${esc(L.aa)}.</b> Arms <code>${esc(report.arms)}</code>.</p>`] : []),
    `<p class="runs">Runs: ${esc(storedRunsText(report))}${report.since ? ` received since ${esc(report.since)}` : ''}` +
      `${notReadText(report) ? `; ${esc(notReadText(report))}` : ''}.</p>`,
    groups.length >= 1 ? summarySection(report) : '',
    ...report.groups.map((g, i) => (report.groups.length === 2 && i === 1 && g.runs === report.groups[0].runs
      ? `<section class="group-same" data-group="${esc(g.name)}"><h2>${esc(by)} ${esc(g.name)}</h2><p class="meta">Every run is in this ${esc(by)}: see Overall.</p></section>`
      : groupSection(g, report, i))),
    report.connectionSetup ? renderConnectionSetupHtml(report.connectionSetup, report) : '',
    `<details class="methods"><summary>Methods: what is measured, and how</summary>
${lede}
${payloadLine(report) ? `<p class="payload">${esc(payloadLine(report))}.</p>` : ''}
${report.loadErrors?.total ? `<p class="load-errors">${esc(loadErrorLine(report.loadErrors))}: sampled page loads that could not load the run, its glue or its .wasm (no measurement).</p>` : ''}
${report.loadErrors?.total && loadErrorDetails(report.loadErrors).length ? `<ul class="load-errors">${loadErrorDetails(report.loadErrors).map((l) => `<li>${esc(l.trim())}</li>`).join('')}</ul>` : ''}
${report.mainThread && mainThreadLine(report.mainThread) ? `<p class="main-thread">${esc(mainThreadLine(report.mainThread))}.</p>` : ''}
<p class="meta">Quantiles are exact (linear interpolation, type 7). Both arms hold the same runs: a request that fell back counts in its arm as
assigned, one that timed out, was cut short or failed counts as slower than every finished one, and a run the instrument could not time
(no Timing-Allow-Origin, no timing entry) leaves both arms.</p>
</details>`,
    report.daily?.days?.length ? `<details class="daily-looks"><summary>Day by day, and the daily looks</summary>${dailySection(report)}</details>` : '',
    `<footer>Generated ${esc(generatedAt)} by h3probe.</footer>`,
  ];
  const html = body.filter(Boolean).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}@media (max-width: 600px) {\n${stackedLabels(html)}\n}\n</style>
</head>
<body>
${html}
</body>
</html>
`;
}

// On a narrow screen the CSS stacks each table row into a card of label-value lines, so that no figure is off-screen
// and nothing scrolls sideways: each cell's label is its column's heading, from the CSS (one rule per table class and
// column, the tables of a class sharing their headings), so the cells' markup stays as wide screens read it.
function stackedLabels(html) {
  const seen = new Map();
  for (const [, cls, head] of html.matchAll(/<table class="([\w-]+)">\s*<thead>([\s\S]*?)<\/thead>/g)) {
    if (seen.has(cls)) continue;
    seen.set(cls, [...head.matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) => m[1].replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim()
      .replace(/&(amp|lt|gt|quot|#39);/g, (e) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" })[e])));
  }
  const css = (t) => t.replace(/[\\"]/g, (c) => `\\${c}`).replace(/</g, '\\3c ');
  return [...seen].flatMap(([cls, labels]) => labels.map((label, i) => (label && i > 0
    ? `table.${cls} td:nth-child(${i + 1})::before { content: "${css(label)}"; }` : ''))).filter(Boolean).join('\n');
}

// The verdict first, as the text report prints it, with each caution on its own, loud (what could bias the answer
// first: the verdict's cautions are in that order); its other lines (every comparison counted, may we stop?) follow the
// forest plot (verdictMore()).
function verdictSection(v) {
  const [line] = v.text.split('\n');
  return [`<p class="verdict"><b>${esc(line)}</b></p>`, ...v.cautions.map((c) => `<p class="caution">Caution: ${esc(c)}</p>`)].join('\n');
}

function verdictMore(v) {
  const more = v.text.split('\n').slice(1).filter((l) => !l.startsWith('CAUTION: '));
  return more.map((m) => `<p class="verdict-more">${esc(m)}</p>`).join('\n');
}

// Plot frame shared by the charts: drawn W wide, about the width of a column of .plots, which the SVG then fills.
const W = 400;
const H = 300;
const M = { left: 64, right: 14, top: 14, bottom: 40 };
// Text in the charts: its size (CSS, svg text), the room a character takes at that size, and the least space between the
// centres of two x-axis labels of the band charts.
const FONT = 12;
const CHAR_W = 0.62 * FONT;
const LABEL_GAP = 48;

// Why the layout is so: on a wide screen a table that cannot fit scrolls in a box of its own (.wide) with its first
// column held in place and a shadow at the right edge while there is more; on a narrow one each row is a card (below).
// The charts are drawn at about the width they are shown at (W) and scale to their column of the grid, so that their
// text stays near 11 px from a 390 px phone to a 1,280 px screen, three charts a row.
const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2937; margin: 24px auto; max-width: 1200px; padding: 0 16px; overflow-wrap: break-word; }
.verdict { font-size: 15.5px; background: #f8fafc; border-left: 4px solid #334155; padding: 8px 12px; }
.verdict-more { background: #f8fafc; border-left: 4px solid #94a3b8; padding: 4px 12px; margin: 2px 0; }
.caution { background: #fef2f2; border-left: 4px solid #dc2626; padding: 6px 12px; color: #7f1d1d; font-weight: 600; }
h1 { font-size: 24px; margin: 0 0 8px; } h2 { font-size: 19px; margin: 32px 0 6px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
.lede { color: #374151; max-width: 900px; } .aa { background: #eff6ff; padding: 6px 10px; border-left: 3px solid #2563eb; } code { background: #f3f4f6; padding: 0 3px; border-radius: 3px; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 330px), 1fr)); gap: 16px 20px; margin: 8px 0; }
.plots figure { min-width: 0; max-width: 560px; } .plots svg { display: block; width: 100%; height: auto; }
figure { margin: 0; } figcaption { font-size: 12.5px; color: #4b5563; margin: 2px 0 0 4px; }
.wide { overflow-x: auto; margin: 8px 0; background: linear-gradient(to left, #fff 50%, rgba(255, 255, 255, 0)) right / 24px 100% no-repeat local,
  radial-gradient(farthest-side at 100% 50%, rgba(15, 23, 42, 0.22), rgba(15, 23, 42, 0)) right / 12px 100% no-repeat scroll; }
table { border-collapse: collapse; margin: 0; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 7px; text-align: right; border-bottom: 1px solid #eef0f3; white-space: nowrap; } th { background: #f9fafb; font-weight: 600; white-space: normal; min-width: 3.5em; vertical-align: bottom; }
td:first-child, th:first-child { text-align: left; position: sticky; left: 0; z-index: 1; background: #fff; } th:first-child { background: #f9fafb; min-width: 0; }
.summary td:first-child, .setup-groups td:first-child { white-space: normal; width: 10em; } td.survivors { white-space: normal; width: 5.5em; }
td.sig { font-weight: 700; background: #fff7ed; } .summary th, .summary td { padding: 3px 6px; font-size: 13px; } .cumulative th, .cumulative td { padding: 3px 5px; font-size: 12.5px; }
.ci { display: block; font-size: 11.5px; font-weight: 400; color: #6b7280; white-space: nowrap; }
.meta { color: #4b5563; margin: 2px 0; } .muted { color: #9ca3af; } .legend { font-size: 12.5px; color: #4b5563; max-width: 1000px; }
td.noci { color: #6b7280; } details summary { cursor: default; color: #374151; margin: 4px 0; }
.key { display: inline-block; width: 12px; height: 3px; vertical-align: middle; margin: 0 4px 0 10px; }
svg text { font: ${FONT}px system-ui, sans-serif; fill: #374151; } svg .axis { stroke: #9ca3af; stroke-width: 1; }
svg .grid { stroke: #eef0f3; stroke-width: 1; } svg .zero { stroke: #6b7280; stroke-dasharray: 4 3; }
footer { margin-top: 36px; color: #6b7280; font-size: 12px; }
.forest-figure { max-width: 560px; margin: 8px 0 4px; } .forest-figure svg { display: block; width: 100%; height: auto; }
.runs { color: #374151; margin: 10px 0 2px; } details.methods, details.daily-looks { margin: 24px 0 0; }
details.methods > summary, details.daily-looks > summary { font-size: 17px; font-weight: 600; }
@media (max-width: 600px) {
  body { margin: 8px auto; padding: 0 12px; } h1 { font-size: 20px; margin-bottom: 4px; } .verdict { font-size: 13.5px; padding: 6px 10px; }
  .caution { font-size: 13px; padding: 4px 10px; margin: 6px 0; } .verdict-more { font-size: 13px; }
  .wide { overflow-x: visible; background: none; }
  table, tbody, tr, td { display: block; width: auto; } thead { display: none; } table { font-size: 13px; }
  tr { border: 1px solid #e5e7eb; border-radius: 4px; margin: 6px 0; padding: 2px 8px; }
  td, .summary td:first-child, .setup-groups td:first-child, td.survivors { display: flow-root; text-align: right; white-space: normal; width: auto; min-width: 0;
    border-bottom: 1px solid #f1f5f9; padding: 2px 0; overflow-wrap: anywhere; }
  td::before { float: left; max-width: 58%; text-align: left; color: #6b7280; font-weight: 400; font-size: 12px; }
  td:first-child, .summary td:first-child, .setup-groups td:first-child { position: static; font-weight: 700; text-align: left; border-bottom: 1px solid #e5e7eb; }
  td:first-child::before { content: none; } td:last-child { border-bottom: 0; } .ci { display: inline; margin-left: 6px; }
}
`;

// A Δ% cell with the cell's mark, the same marks as the text report's.
function deltaCell(r) {
  if (!r) return '<td>–</td>';
  const mark = markOf(r);
  if (mark === 'unfinished') return `<td class="noci">${MARKS.unfinished.mark}<span class="ci">not estimable</span></td>`;
  return `<td class="${mark === 'significant' ? 'sig' : mark === 'noInterval' ? 'noci' : ''}">${signed(r.diff_pct, 1)}%` +
    `${MARKS[mark].mark ? ` ${MARKS[mark].mark}` : ''}<span class="ci">${ciPct(r)}</span></td>`;
}

// A Δ and its interval as two cells, both marked (bold, *) when the cell's Δ excludes 0.
// The decision in figures, under the verdict and its forest plot: per percentile of the overall group, Δ % with its
// interval for each estimand (the headline, as assigned, and where the treatment's protocol worked), marked as every
// other cell is.
function decisionTable(report, L) {
  const rows = report.groups[0]?.analysis?.rows ?? [];
  if (!rows.length) return '';
  const conf = `${Math.round(report.confidence * 100)}%`;
  const worked = new Map((report.h3Worked?.groups[0]?.analysis?.rows ?? []).map((r) => [r.p, r]));
  const cells = (r) => (!r ? '<td>–</td><td>–</td>' : markOf(r) === 'unfinished' ? `<td>${MARKS.unfinished.mark}</td><td>not estimable</td>`
    : markedCells(r, `${signed(r.diff_pct, 1)}%`, ciPct(r, 1, '%')));
  const share = report.h3Worked?.of ? ` (${int(report.h3Worked.runs)} of ${int(report.h3Worked.of)} runs)` : '';
  return `<div class="wide"><table class="decision">
<thead><tr><th></th><th>Δ % as assigned</th><th>${conf} CI</th><th>Δ % where ${esc(L.treatment)} worked${esc(share)}</th><th>${conf} CI</th></tr></thead>
<tbody>${rows.map((r) => `<tr><td>${percentileLabel(r.p)}</td>${cells(r)}${cells(worked.get(r.p))}</tr>`).join('')}</tbody></table></div>`;
}

function markedCells(r, delta, interval) {
  const sig = markOf(r) === 'significant';
  return `<td${sig ? ' class="sig"' : ''}>${delta}${sig ? ' *' : ''}</td><td${sig ? ' class="sig"' : ''}>${interval}</td>`;
}

// The cell's adjusted p-value (and the mark when it survives) and its anytime-valid interval of Δ ms.
function comparisonCells(r) {
  const q = Number.isFinite(r.q_value) ? (r.q_value < 0.001 ? '<0.001' : fixed(r.q_value, 3)) : '–';
  return `<td class="q${r.discovery ? ' sig' : ''}">${q}${r.discovery ? ` ${DISCOVERY_MARK.mark}` : ''}</td>` +
    `<td class="cs${r.significant_cs ? ' sig' : ''}">${ci(r.cs_ms, 2)}${r.significant_cs ? ' *' : ''}</td>`;
}

function legend(report) {
  return `<p class="legend"><b>*</b> ${esc(MARKS.significant.what)}. No mark: ${esc(MARKS.includesZero.what)}.
<b>?</b> and <b>n/a</b>: ${esc(NA_TEXT.replace(/^n\/a: /, ''))}; the fewest runs per arm: ${esc(minRunsText(report.groups[0]?.analysis?.rows ?? []))}.
<b>${UNBOUNDED}</b>: ${esc(unboundedText(report.arms).slice(UNBOUNDED.length + 2))}.
${report.verdict?.comparable === false ? `<b>!</b>: ${esc(MARKS.notComparable.what)}.
` : ''}In the Δ charts: filled dot = Δ excludes 0, open dot = the interval includes 0, grey diamond = no interval, grey ring = not comparable.</p>`;
}

function summarySection(report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const L = armLabels(report.arms);
  const t = report.sampleSizeTarget;
  const by = BY_LABELS[report.by ?? 'region'];
  const head = [by, 'runs', 'requests', 'fallback rate', 'client/server mismatch', ...report.percentiles.map((p) => `${percentileLabel(p)} Δ% [${conf} CI]`),
    `runs needed per arm (${Math.round(t.mde * 100)}% at ${percentileLabel(t.p)})`, 'runs in the smaller arm', `${DISCOVERY_MARK.mark} survives BH`];
  const rows = report.groups.map((g) => {
    const byP = new Map((g.analysis?.rows ?? []).map((r) => [r.p, r]));
    return `<tr><td>${esc(g.name)}</td><td>${int(g.runs)}</td><td>${int(g.requests)}</td><td>${pct(g.fallback.rate)}</td>` +
      `<td>${int(g.excluded.protocol_mismatch ?? 0)}</td>${report.percentiles.map((p) => deltaCell(byP.get(p))).join('')}` +
      `<td>${g.sampleSize && Number.isFinite(g.sampleSize.runs_per_arm) ? int(Math.ceil(g.sampleSize.runs_per_arm)) : '–'}</td>` +
      `<td>${int(Math.min(g.arms.h2.runs, g.arms.h3.runs))}</td><td class="survivors">${esc(survivorsOf(g))}</td></tr>`;
  });
  return `<section id="summary"><h2>By ${esc(by)}</h2>
<div class="wide"><table class="summary"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>
${legend(report)}${pooledHtml(report)}
<div class="plots"><figure>${fallbackChart(report.groups, L)}<figcaption>Share of completed ${L.treatment} requests that went over another protocol
(UDP blocked, Alt-Svc not learned): counted in the ${L.treatment} arm as assigned.</figcaption></figure></div></section>`;
}

// pooledNote() of formatReport.mjs as a paragraph, DB-IP linked as its licence asks.
function pooledHtml(report) {
  const [pooled, credit] = pooledNote(report);
  if (!pooled) return '';
  return `\n<p class="meta">${esc(pooled)}. ${esc(credit)}: <a href="${NETWORK_DATA_CREDIT.link.href}">${esc(NETWORK_DATA_CREDIT.link.text)}</a>.</p>`;
}

function groupSection(g, report, index) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const L = armLabels(report.arms);
  const rows = g.analysis?.rows ?? [];
  const table = rows.length === 0 ? '<p class="meta">No table: an arm has no usable samples.</p>' : `<div class="wide"><table class="arms">
<thead><tr><th></th><th>${L.control} ms</th><th>${L.treatment} ms</th><th>Δ ms</th><th>${conf} CI Δ ms</th><th>Δ %</th><th>${conf} CI Δ %</th>
<th title="Δ ms's p-value adjusted by Benjamini–Hochberg over every group × percentile of this report">q (BH)</th><th title="valid however often it is looked at">${conf} anytime-valid Δ ms</th></tr></thead>
<tbody>${rows.map((r) => `<tr data-mark="${markOf(r)}"><td>${percentileLabel(r.p)}</td><td>${armMs(r, r.h2)}</td><td>${armMs(r, r.h3)}</td>
${markedCells(r, signed(r.diff_ms), ci(r.ci_ms, 2))}${markedCells(r, `${signed(r.diff_pct, 1)}%`, ciPct(r, 1, '%'))}${comparisonCells(r)}</tr>`).join('')}</tbody></table></div>
<p class="meta">q (BH): the p-value of Δ ms adjusted for every comparison in this report (Benjamini–Hochberg); <b>${DISCOVERY_MARK.mark}</b> ${esc(DISCOVERY_MARK.what)} at
${Math.round((1 - report.confidence) * 100)}%. Anytime-valid: a confidence sequence over runs in the order received, valid however often the report is read (<b>*</b> when it excludes 0).</p>`;
  const p = g.paired;
  const o = g.order;
  const s = g.sampleSize;
  const t = report.sampleSizeTarget;
  return `<section class="group" id="group-${index}" data-group="${esc(g.name)}">
<h2>${esc(g.name === 'overall' ? 'Overall' : `${BY_LABELS[report.by ?? 'region']} ${g.name}`)}</h2>
<p class="meta">${int(g.runs)} runs${g.name === 'overall' ? ' (every stored run read with a measured request)' : ''}, ${int(g.requests)} measured requests; used: ${L.control} ${int(g.arms.h2.n)} requests in ${int(g.arms.h2.runs)} runs,
${L.treatment} ${int(g.arms.h3.n)} in ${int(g.arms.h3.runs)} runs. Not as planned: ${esc(notAsPlannedLine(g, report))}.${g.failures ? ` ${esc(failureLine(g.failures, report))}.` : ''}
${L.treatment} fallback rate ${pct(g.fallback.rate)}.</p>
${table}
${rows.some((r) => markOf(r) === 'noInterval') ? `<p class="meta">${esc(NA_TEXT)}; the fewest runs per arm: ${esc(minRunsText(rows))}.</p>` : ''}
<details class="more"><summary>The distributions, the paired Δ, the order effect, the sample size</summary>
<div class="plots">
<figure>${ccdfChart(g.cdf ?? { h2: [], h3: [] }, report.metric, L)}<figcaption>The tail: share of requests slower than x (1 − F, log scale, to 1 in 1,000):
<span class="key" style="background:${COLORS.h2}"></span>${L.control} <span class="key" style="background:${COLORS.h3}"></span>${L.treatment}</figcaption></figure>
<figure>${cdfChart(g.cdf ?? { h2: [], h3: [] }, report.metric, L)}<figcaption>CDF of ${esc(report.metric)}, log scale:
<span class="key" style="background:${COLORS.h2}"></span>${L.control} <span class="key" style="background:${COLORS.h3}"></span>${L.treatment}</figcaption></figure>
</div>
<p class="meta">Paired within-run Δ (median ${L.treatment} − median ${L.control} of each run): ${p ? `${int(p.n)} runs, mean ${signed(p.mean)} ms ${ci(p.ci_mean, 2)},
median ${signed(p.median)} ms ${ci(p.ci_median, 2)}, p10 ${signed(p.p10)} ms, p90 ${signed(p.p90)} ms.` : 'fewer than 2 runs with both arms.'}</p>
<p class="meta">Order effect: ${o ? `mean paired Δ ${signed(o.mean_h2_first)} ms with ${L.control} first (${int(o.n_h2_first)} runs),
${signed(o.mean_h3_first)} ms with ${L.treatment} first (${int(o.n_h3_first)} runs); difference ${signed(o.diff)} ms ${ci(o.ci, 2)}, p = ${num(o.p_value, 3)}.`
    : 'not testable: it needs runs in both orders (<code>order: random</code>).'}</p>
<p class="meta">Sample size to detect a ${Math.round(t.mde * 100)}% change at ${percentileLabel(t.p)} (α ${t.alpha}, power ${t.power}):
${s && Number.isFinite(s.runs_per_arm) ? `${int(Math.ceil(s.runs_per_arm))} runs per arm (${esc(sampleSizeBasis(s))}, design effect ${num(s.design_effect)},
${num(s.requests_per_run, 1)} requests per run).` : 'not enough data.'}</p>
</details>
</section>`;
}

function cdfChart(cdf, metric, L) {
  const sy = (p) => H - M.bottom - p * (H - M.top - M.bottom);
  // 0.95 sits too close to 0.9 and 1 for a label of its own: its grid line is enough.
  const yGrid = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 1].map((p) => [p, p === 0.95 ? null : String(p)]);
  return armCurves(cdf, metric, L, { sy, yGrid, yLabel: 'cumulative share', cls: 'cdf', emptyCls: '' });
}

// One curve per arm ([[x, y], ...] each) against the metric on a log x axis: the CDF and the tail chart. sy: the y
// scale; yGrid: [value, label or null] per horizontal grid line; cls: the chart's and its paths' class.
function armCurves(arms, metric, L, { sy, yGrid, yLabel, cls, emptyCls = `${cls}-chart` }) {
  const all = [...arms.h2, ...arms.h3].map(([x]) => x).filter((x) => Number.isFinite(x));
  if (all.length === 0) return emptyChart('no data', emptyCls);
  // A log axis needs positive values; sub-0.1 ms network times are clamped to the axis' left edge.
  const lo = Math.max(0.1, Math.min(...all));
  const hi = Math.max(lo * 1.5, Math.max(...all));
  const x0 = Math.log10(lo) - 0.02;
  const x1 = Math.log10(hi) + 0.02;
  const sx = (v) => M.left + ((Math.log10(Math.max(v, lo)) - x0) / (x1 - x0)) * (W - M.left - M.right);
  const parts = [];
  // Every tick gets its grid line; a label only where it does not run into the last one labelled (over many decades the
  // 2s and 5s would overlap) nor past the chart's right edge.
  let lastRight = -Infinity;
  for (const t of logTicks(10 ** x0, 10 ** x1)) {
    const text = t >= 1 ? String(t) : t.toFixed(1);
    const half = (text.length * CHAR_W) / 2;
    parts.push(`<line class="grid" x1="${f1(sx(t))}" x2="${f1(sx(t))}" y1="${M.top}" y2="${H - M.bottom}"/>`);
    if (sx(t) - half < lastRight + CHAR_W || sx(t) + half > W) continue;
    lastRight = sx(t) + half;
    parts.push(`<text x="${f1(sx(t))}" y="${H - M.bottom + 14}" text-anchor="middle">${text}</text>`);
  }
  for (const [v, label] of yGrid) {
    parts.push(`<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${f1(sy(v))}" y2="${f1(sy(v))}"/>`);
    if (label !== null) parts.push(`<text x="${M.left - 6}" y="${f1(sy(v) + 4)}" text-anchor="end">${label}</text>`);
  }
  parts.push(axes(), `<text x="${(M.left + W - M.right) / 2}" y="${H - 6}" text-anchor="middle">${esc(metric)} (ms, log scale)</text>`,
    `<text transform="translate(13 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${yLabel}</text>`);
  for (const arm of ['h2', 'h3']) {
    const pts = arms[arm];
    if (pts.length === 0) continue;
    const d = pts.map(([x, y], i) => `${i ? 'L' : 'M'}${f1(sx(x))},${f1(sy(y))}`).join('');
    parts.push(`<path class="${cls} ${cls}-${arm}" data-arm="${arm}" data-points="${pts.length}" d="${d}" fill="none" stroke="${COLORS[arm]}" stroke-width="2">`
      + `<title>${arm === 'h2' ? L.control : L.treatment}</title></path>`);
  }
  return svg(parts, `${cls}-chart`);
}

// The answer in one figure (a forest plot): a column per percentile, a row for overall and each group, each cell Δ %
// with its interval on one x scale shared by every column, a dashed line at 0. Every dot is the cell's mark (markOf(),
// the tables' and the verdict's one decision): filled, Δ excludes 0; open, the interval includes 0; grey diamond, no
// interval; grey ring, the arms are not comparable. The axis stops at −100 % and +200 %: an interval cut there has no
// cap on that side.
const FOREST = { label: 116, right: 4, gap: 6, top: 20, rowH: 18, bottom: 34, lo: -100, hi: 200 };

function forestFigure(report, L) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  return `<figure class="forest-figure">${forestPlot(report)}<figcaption>Δ % (${L.treatment} − ${L.control}) per percentile with its
${conf} interval, overall and per ${esc(BY_LABELS[report.by ?? 'region'])}; negative: ${L.treatment} faster. Filled dot: Δ excludes 0; open: the interval
includes 0; grey diamond: no interval${report.verdict?.comparable === false ? '; grey ring: not comparable (see the verdict)' : ''}.</figcaption></figure>`;
}

function forestPlot(report) {
  const F = FOREST;
  const ps = report.percentiles;
  const groups = report.groups.filter((g) => g.analysis?.rows?.length);
  if (!groups.length || !ps.length) return emptyChart('no table: an arm has no usable samples', 'forest');
  const cell = (g, p) => g.analysis.rows.find((r) => r.p === p);
  const finite = (c) => Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1]);
  const vals = groups.flatMap((g) => ps.map((p) => cell(g, p)).filter(Boolean)
    .flatMap((r) => [r.diff_pct, ...(finite(r.ci_pct) ? r.ci_pct : [])])).filter(Number.isFinite);
  let lo = Math.max(F.lo, Math.min(0, ...vals));
  let hi = Math.min(F.hi, Math.max(0, ...vals));
  const step = niceStep(Math.max(hi - lo, 1) / 4);
  lo = Math.floor(lo / step - 1e-9) * step;
  hi = Math.ceil(hi / step + 1e-9) * step;
  const pw = (W - F.label - F.right - F.gap * (ps.length - 1)) / ps.length;
  const height = F.top + groups.length * F.rowH + F.bottom;
  const base = height - F.bottom;
  const x0 = (j) => F.label + j * (pw + F.gap);
  const sx = (j, v) => x0(j) + ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo)) * pw;
  const parts = [];
  groups.forEach((g, i) => {
    if (i % 2 === 0) parts.push(`<rect x="0" y="${F.top + i * F.rowH}" width="${W}" height="${F.rowH}" fill="#f8fafc"/>`);
    const room = Math.floor((F.label - 6) / CHAR_W);
    const name = g.name.length > room ? `${g.name.slice(0, room - 1)}…` : g.name;
    parts.push(`<text x="2" y="${F.top + i * F.rowH + 13}"${i === 0 ? ' font-weight="700"' : ''}><title>${esc(g.name)}</title>${esc(name)}</text>`);
  });
  // A tick label at each end of a column where both fit, else 0 alone.
  const tick = (v) => (v === 0 ? '0' : `${v > 0 ? '+' : '−'}${Number(Math.abs(v).toFixed(6))}`);
  const ends = [[lo, 'start'], [hi, 'end']];
  const fits = ends.reduce((w, [v]) => w + tick(v).length * CHAR_W, 0) + 2 * CHAR_W <= pw;
  ps.forEach((p, j) => {
    parts.push(`<text x="${f1(x0(j) + pw / 2)}" y="14" text-anchor="middle" font-weight="600">${percentileLabel(p)}</text>`);
    for (let v = lo; v <= hi + step / 2; v += step) parts.push(`<line class="grid" x1="${f1(sx(j, v))}" x2="${f1(sx(j, v))}" y1="${F.top}" y2="${base}"/>`);
    parts.push(`<line class="axis" x1="${f1(x0(j))}" x2="${f1(x0(j) + pw)}" y1="${base}" y2="${base}"/>`,
      `<line class="zero" x1="${f1(sx(j, 0))}" x2="${f1(sx(j, 0))}" y1="${F.top}" y2="${base}"/>`);
    if (fits) for (const [v, anchor] of ends) parts.push(`<text x="${f1(sx(j, v))}" y="${base + 13}" text-anchor="${anchor}">${tick(v)}</text>`);
    else parts.push(`<text x="${f1(sx(j, 0))}" y="${base + 13}" text-anchor="middle">0</text>`);
    groups.forEach((g, i) => {
      const r = cell(g, p);
      if (!r || !Number.isFinite(r.diff_pct)) return;
      const y = F.top + i * F.rowH + F.rowH / 2;
      const title = `${g.name} ${percentileLabel(p)}: ${signed(r.diff_ms)} ms, ${signed(r.diff_pct, 1)}%, ${Math.round(report.confidence * 100)}% CI ${ciPct(r, 1, '%')}`;
      const mark = markOf(r);
      const color = mark === 'notComparable' ? '#9ca3af' : COLORS.h3;
      if (finite(r.ci_pct) || r.ci_pct_unbounded) {
        const [a, b] = r.ci_pct_unbounded ? [lo, hi] : r.ci_pct;
        const caps = [a, b].filter((v) => !r.ci_pct_unbounded && v >= lo && v <= hi)
          .map((v) => `<line x1="${f1(sx(j, v))}" x2="${f1(sx(j, v))}" y1="${f1(y - 4)}" y2="${f1(y + 4)}"/>`).join('');
        parts.push(`<g class="ci-bar" data-group="${esc(g.name)}" data-key="${p}" stroke="${color}" stroke-width="1.5"${r.ci_pct_unbounded ? ' stroke-dasharray="2 2"' : ''}>`
          + `<title>${esc(title)}</title><line x1="${f1(sx(j, a))}" x2="${f1(sx(j, b))}" y1="${f1(y)}" y2="${f1(y)}"/>${caps}</g>`);
      }
      const x = f1(sx(j, r.diff_pct));
      parts.push(mark === 'noInterval'
        ? `<path class="delta-point no-interval" data-group="${esc(g.name)}" data-mark="${mark}" d="M${x},${f1(y - 5)}L${f1(x + 5)},${f1(y)}L${x},${f1(y + 5)}L${f1(x - 5)},${f1(y)}Z" `
          + `fill="#fff" stroke="#9ca3af" stroke-width="2"><title>${esc(title)} (no interval)</title></path>`
        : `<circle class="delta-point" data-group="${esc(g.name)}" data-mark="${mark}" cx="${x}" cy="${f1(y)}" r="3.5" stroke="${color}" stroke-width="2" `
          + `fill="${mark === 'significant' ? COLORS.h3 : '#fff'}"><title>${esc(title)}</title></circle>`);
    });
  });
  parts.push(`<text x="${f1(F.label + (W - F.label - F.right) / 2)}" y="${height - 4}" text-anchor="middle">Δ % in every column</text>`);
  return `<svg class="forest" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" role="img">${parts.join('')}</svg>`;
}

// The frame of a chart of n evenly spaced points (percentiles, days) against values: y spans the values and 0, padded
// and rounded to a nice step, with its grid (each tick followed by unit), the axes, a dashed line at 0 and the y label.
// every: label one point in every so many, so that the x labels keep LABEL_GAP apart.
function bandFrame(vals, n, yLabel, unit) {
  let lo = Math.min(0, ...vals);
  let hi = Math.max(0, ...vals);
  const pad = Math.max(1, (hi - lo) * 0.08);
  lo -= pad;
  hi += pad;
  const step = niceStep((hi - lo) / 6);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const right = W - M.right;
  const band = (right - M.left) / n;
  const every = Math.max(1, Math.ceil(LABEL_GAP / band));
  const sx = (i) => M.left + band * (i + 0.5);
  const sy = (v) => H - M.bottom - ((v - lo) / (hi - lo)) * (H - M.top - M.bottom);
  const parts = [];
  for (let v = lo; v <= hi + step / 2; v += step) {
    parts.push(`<line class="grid" x1="${M.left}" x2="${right}" y1="${f1(sy(v))}" y2="${f1(sy(v))}"/>`,
      `<text x="${M.left - 6}" y="${f1(sy(v) + 4)}" text-anchor="end">${Number(v.toFixed(6))}${unit}</text>`);
  }
  parts.push(axes(), `<line class="zero" x1="${M.left}" x2="${right}" y1="${f1(sy(0))}" y2="${f1(sy(0))}"/>`,
    `<text transform="translate(13 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  return { parts, sx, sy, band, every };
}

// Δ% points with their intervals along x (percentiles, or days), a dashed line at 0. Filled: the interval excludes 0;
// open: it includes 0; grey diamond: no interval.
function intervalChart(points, yLabel, cls) {
  const rows = points.map((x) => x.row);
  if (rows.length === 0) return emptyChart('no data');
  const vals = rows.flatMap((r) => [r.diff_pct, ...(Array.isArray(r.ci_pct) ? r.ci_pct : [])]).filter(Number.isFinite);
  const { parts, sx, sy, band, every } = bandFrame(vals, rows.length, yLabel, '%');
  // Points shrink when there are many (weeks of days), so that neighbours do not cover each other.
  const dot = Math.max(2, Math.min(5, band / 3));
  points.forEach(({ label, key, row: r, title }, i) => {
    const x = f1(sx(i));
    if (i % every === 0) parts.push(`<text x="${x}" y="${H - M.bottom + 14}" text-anchor="middle">${esc(label)}</text>`);
    const c = r.ci_pct;
    const half = Math.min(8, band / 3);
    if (Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1])) {
      const [a, b] = [f1(sy(c[0])), f1(sy(c[1]))];
      parts.push(`<g class="ci-bar" data-key="${esc(key)}"><title>${esc(title)}</title>`
        + `<line x1="${x}" x2="${x}" y1="${a}" y2="${b}" stroke="${COLORS.h3}" stroke-width="2"/>`
        + `<line x1="${f1(x - half)}" x2="${f1(x + half)}" y1="${a}" y2="${a}" stroke="${COLORS.h3}" stroke-width="2"/>`
        + `<line x1="${f1(x - half)}" x2="${f1(x + half)}" y1="${b}" y2="${b}" stroke="${COLORS.h3}" stroke-width="2"/></g>`);
    }
    if (!Number.isFinite(r.diff_pct)) return;
    const y = f1(sy(r.diff_pct));
    const mark = markOf(r);
    parts.push(mark === 'noInterval'
      ? `<path class="delta-point no-interval" data-mark="${mark}" d="M${x},${f1(y - dot - 1)}L${f1(x + dot + 1)},${y}L${x},${f1(y + dot + 1)}L${f1(x - dot - 1)},${y}Z" `
        + `fill="#fff" stroke="#9ca3af" stroke-width="2"><title>${esc(title)} (no interval)</title></path>`
      : `<circle class="delta-point" data-mark="${mark}" cx="${x}" cy="${y}" r="${f1(dot)}" stroke="${COLORS.h3}" stroke-width="2" `
        + `fill="${mark === 'significant' ? COLORS.h3 : '#fff'}"><title>${esc(title)}</title></circle>`);
  });
  return svg(parts, cls);
}

// The tail, where HTTP/3 is meant to act: the share of requests slower than x (1 − F) on a log axis from 10⁻³ to 1,
// against the metric on a log axis, from the same quantile points as the CDF.
function ccdfChart(cdf, metric, L) {
  const tail = (pts) => pts.filter(([x, p]) => Number.isFinite(x) && 1 - p >= 1e-3 - 1e-12 && p > 0).map(([x, p]) => [x, Math.max(1e-3, 1 - p)]);
  const sy = (q) => M.top + (-Math.log10(q) / 3) * (H - M.top - M.bottom);
  const yGrid = [[1, '1'], [0.1, '0.1'], [0.01, '0.01'], [0.001, '0.001']];
  return armCurves({ h2: tail(cdf.h2), h3: tail(cdf.h3) }, metric, L, { sy, yGrid, yLabel: 'share slower (1 − F, log)', cls: 'ccdf' });
}

// The daily series: one chart per percentile of Δ% per day with its interval, and the table under them.
function dailySection(report) {
  const { percentiles, days } = report.daily;
  const conf = `${Math.round(report.confidence * 100)}%`;
  const L = armLabels(report.arms);
  const charts = percentiles.map((p) => {
    const points = days.map((d) => {
      const r = d.rows.find((x) => x.p === p) ?? { p, diff_pct: NaN, ci_ms: null, ci_pct: null, significant: false };
      return { label: d.day.slice(5), key: d.day, row: r, title: `${d.day} ${percentileLabel(p)}: ${signed(r.diff_pct, 1)}% ${ciPct(r, 1, '%')}, ${int(d.runs)} runs` };
    });
    return `<figure>${intervalChart(points, `${percentileLabel(p)} Δ %`, `daily-chart daily-${percentileLabel(p)}`)}
<figcaption>${percentileLabel(p)}: Δ% per day received with its ${conf} interval.</figcaption></figure>`;
  });
  const head = ['day', 'runs', ...percentiles.map((p) => `${percentileLabel(p)} Δ% [${conf} CI]`)];
  const rows = days.map((d) => `<tr><td>${esc(d.day)}</td><td>${int(d.runs)}</td>${
    percentiles.map((p) => deltaCell(d.rows.find((x) => x.p === p))).join('')}</tr>`);
  return `<section id="daily"><h2>Day by day</h2>
<p class="meta">Is the effect stable from day to day? Each day (UTC, by the time the collector received the beacon) is a
group of its own, with its own intervals: ${L.treatment} − ${L.control}.</p>
<div class="plots">${charts.join('\n')}</div>
<details><summary>The daily table</summary><div class="wide"><table class="daily"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('')}</tbody></table></div></details>${cumulativeTable(report)}</section>`;
}

// The daily looks: Δ ms over every run received up to each day, the fixed-horizon interval beside the anytime-valid one.
function cumulativeTable(report) {
  const { percentiles, days } = report.daily;
  const looks = days.filter((d) => d.cumulative);
  if (!looks.length) return '';
  const conf = `${Math.round(report.confidence * 100)}%`;
  const cell = (interval, sig) => `<td${sig ? ' class="sig"' : ''}>${ci(interval, 2)}${sig ? ' *' : ''}</td>`;
  const head = ['up to day', 'runs', ...percentiles.flatMap((p) => [`${percentileLabel(p)} Δ ms`, `${conf} fixed-horizon`, `${conf} anytime-valid`])];
  const rows = looks.map((d) => `<tr><td>${esc(d.day)}</td><td>${int(d.cumulative.runs)}</td>${percentiles.map((p) => {
    const r = d.cumulative.rows.find((x) => x.p === p);
    return r ? `<td>${signed(r.diff_ms)}</td>${cell(r.ci_ms, markOf(r) === 'significant')}${cell(r.cs_ms, r.significant_cs)}` : '<td>–</td><td>–</td><td>–</td>';
  }).join('')}</tr>`);
  const charts = percentiles.map((p) => `<figure>${cumulativeChart(looks, p)}<figcaption>${percentileLabel(p)}: Δ ms up to each day; thin: ${conf} fixed-horizon, grey: anytime-valid.</figcaption></figure>`);
  return `<h3>Cumulative, as read each day</h3>
<div class="plots">${charts.join('\n')}</div>
<p class="meta">Every run received up to the end of each day. The fixed-horizon interval is valid for one look planned in
advance: read every day, it excludes 0 by chance far more often than ${Math.round((1 - report.confidence) * 100)}% of the time. The
anytime-valid interval (a confidence sequence over runs) stays valid however often it is read; <b>*</b>: the interval excludes 0.</p>
<div class="wide"><table class="cumulative"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

// One percentile's looks: per day Δ ms with the anytime-valid interval (a wide grey bar) behind the fixed-horizon one
// (a thin line), a dashed line at 0.
function cumulativeChart(looks, p) {
  const rows = looks.map((d) => d.cumulative.rows.find((x) => x.p === p) ?? { diff_ms: NaN, ci_ms: null, cs_ms: null });
  const finite = (c) => Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1]);
  const vals = rows.flatMap((r) => [r.diff_ms, ...(finite(r.cs_ms) ? r.cs_ms : []), ...(finite(r.ci_ms) ? r.ci_ms : [])]).filter(Number.isFinite);
  if (!vals.length) return emptyChart('no data');
  const { parts, sx, sy, band, every } = bandFrame(vals, rows.length, `${percentileLabel(p)} Δ ms`, '');
  rows.forEach((r, i) => {
    const x = f1(sx(i));
    if (i % every === 0) parts.push(`<text x="${x}" y="${H - M.bottom + 14}" text-anchor="middle">${esc(looks[i].day.slice(5))}</text>`);
    const w = Math.min(10, band / 2);
    if (finite(r.cs_ms)) {
      parts.push(`<rect class="cs-bar" data-day="${esc(looks[i].day)}" x="${f1(x - w / 2)}" y="${f1(sy(r.cs_ms[1]))}" width="${f1(w)}" `
        + `height="${f1(Math.max(0, sy(r.cs_ms[0]) - sy(r.cs_ms[1])))}" fill="#cbd5e1"><title>${esc(looks[i].day)} anytime-valid ${ci(r.cs_ms, 2)}</title></rect>`);
    }
    if (finite(r.ci_ms)) {
      parts.push(`<line class="ci-line" x1="${x}" x2="${x}" y1="${f1(sy(r.ci_ms[0]))}" y2="${f1(sy(r.ci_ms[1]))}" stroke="${COLORS.h3}" stroke-width="2">`
        + `<title>${esc(looks[i].day)} fixed-horizon ${ci(r.ci_ms, 2)}</title></line>`);
    }
    if (Number.isFinite(r.diff_ms)) parts.push(`<circle cx="${x}" cy="${f1(sy(r.diff_ms))}" r="${f1(Math.min(3.5, band / 3))}" fill="${COLORS.h3}"/>`);
  });
  return svg(parts, `cumulative-chart cumulative-${percentileLabel(p)}`);
}

// One bar per group, its name above it (names of networks run long; the few too long for the chart's width are cut,
// whole in the bar's tooltip and in the table above).
function fallbackChart(groups, L) {
  const rows = groups.filter((g) => g.fallback.completed > 0);
  if (rows.length === 0) return emptyChart(`no completed ${L.treatment} requests`);
  const rowH = 34;
  const left = 8;
  const room = Math.floor((W - left) / CHAR_W);
  const height = M.top + rows.length * rowH + 30;
  const maxRate = Math.max(0.01, ...rows.map((g) => g.fallback.rate));
  const step = niceStep(maxRate / 5);
  const top = Math.ceil(maxRate / step) * step;
  const sx = (v) => left + (v / top) * (W - left - 60);
  const parts = [];
  for (let v = 0; v <= top + step / 2; v += step) {
    parts.push(`<line class="grid" x1="${f1(sx(v))}" x2="${f1(sx(v))}" y1="${M.top}" y2="${height - 24}"/>`,
      `<text x="${f1(sx(v))}" y="${height - 10}" text-anchor="${v === 0 ? 'start' : 'middle'}">${Number((v * 100).toFixed(4))}%</text>`);
  }
  rows.forEach((g, i) => {
    const y = M.top + i * rowH;
    const name = g.name.length > room ? `${g.name.slice(0, room - 1)}…` : g.name;
    parts.push(`<text x="${left}" y="${y + 11}">${esc(name)}</text>`,
      `<rect class="fallback-bar" x="${left}" y="${y + 15}" width="${f1(Math.max(0, sx(g.fallback.rate) - left))}" height="${rowH - 20}" fill="${COLORS.h3}" opacity="0.8">`
      + `<title>${esc(g.name)}: ${int(g.fallback.fallbacks)} of ${int(g.fallback.completed)}</title></rect>`,
      `<text x="${f1(sx(g.fallback.rate) + 6)}" y="${y + 26}">${pct(g.fallback.rate)}</text>`);
  });
  return `<svg class="fallback-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" role="img">${parts.join('')}</svg>`;
}

function axes() {
  return `<line class="axis" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}"/>`
    + `<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}"/>`;
}

// No width or height: the viewBox gives the shape, and the CSS has the chart fill its column.
function svg(parts, cls) {
  return `<svg class="${cls}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img">${parts.join('')}</svg>`;
}

function emptyChart(text, cls = '') {
  return svg([axes(), `<text x="${W / 2}" y="${H / 2}" text-anchor="middle">${esc(text)}</text>`], `empty-chart ${cls}`.trim());
}

// 1, 2, 5 × 10^k between lo and hi.
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (t >= lo && t <= hi) ticks.push(Number(t.toPrecision(6)));
    }
  }
  return ticks;
}

function niceStep(raw) {
  const e = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * e >= raw) return m * e;
  return 10 * e;
}
