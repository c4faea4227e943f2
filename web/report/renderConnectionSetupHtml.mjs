// The connection-setup view (connectionSetup.mjs) as a section of the HTML report: the same figures as the text
// (formatReport.mjs, formatConnectionSetup()), as tables.
import { BY_LABELS, firstH3Text, outcomeText, percentileLabel, SETUP_WHAT, TLS_NOTE } from './formatReport.mjs';
import { fixed, snap } from './numberText.mjs';

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const num = (v, d = 2) => (Number.isFinite(v) ? fixed(v, d) : '–');
const signed = (v, d = 2) => (Number.isFinite(v) ? `${snap(v, d) > 0 ? '+' : snap(v, d) < 0 ? '−' : ''}${fixed(Math.abs(v), d)}` : '–');
const ci = (c, d = 2, f = signed) => (Array.isArray(c) && Number.isFinite(c[0]) && Number.isFinite(c[1]) ? `[${f(c[0], d)}, ${f(c[1], d)}]` : 'n/a');
const METRIC = Object.freeze({ connect_ms: 'connect (handshake)', network_ms: 'network time', tls_ms: 'TLS' });

/** view: report.connectionSetup; report: for the confidence and the grouping. Returns the section's HTML. */
export function renderConnectionSetupHtml(view, report) {
  const conf = `${Math.round(report.confidence * 100)}%`;
  const [overall, ...groups] = view.groups;
  const rows = view.metrics.flatMap((m) => overall[m.name].rows.map((r) => `<tr><td>${esc(METRIC[m.name] ?? m.name)} ${percentileLabel(r.p)}</td>
<td>${num(r.h2)}<span class="ci">${ci(r.ci_h2, 2, num)}</span></td>` + (m.paired
    ? `<td>${num(r.h3)}<span class="ci">${ci(r.ci_h3, 2, num)}</span></td><td${r.significant ? ' class="sig"' : ''}>${signed(r.diff_ms)}${r.significant ? ' *' : ''}<span class="ci">${ci(r.ci_ms)}</span></td>`
    : '<td class="muted">–</td><td class="muted">–</td>') + '</tr>'));
  const paired = view.metrics.filter((m) => m.paired).map((m) => {
    const p = overall[m.name].paired;
    return `<li>${esc(METRIC[m.name] ?? m.name)}: ${p ? `${p.n} runs, median ${signed(p.median)} ms ${ci(p.ci_median)}, mean ${signed(p.mean)} ms ${ci(p.ci_mean)}, `
      + `p10 ${signed(p.p10)}, p90 ${signed(p.p90)} ms` : 'fewer than 2 runs with both cold samples'}</li>`;
  });
  const byGroup = groups.length ? `<div class="wide"><table class="setup-groups"><thead><tr><th>${esc(BY_LABELS[report.by ?? 'region'])}</th><th>runs</th><th>both cold</th>
<th>paired Δ connect, median [${conf} CI]</th><th>first request over HTTP/3</th></tr></thead><tbody>${groups.map((g) => {
    const p = g.connect_ms.paired;
    return `<tr><td>${esc(g.name)}</td><td>${g.runs}</td><td>${g.paired}</td><td>${p ? `${signed(p.median)} ${ci(p.ci_median)}` : '–'}</td>`
      + `<td>${Number.isFinite(g.firstH3.share) ? `${fixed(100 * g.firstH3.share, 1)}%` : '–'}</td></tr>`;
  }).join('')}</tbody></table></div>` : '';
  return `<section id="connection-setup"><h2>Connection setup</h2>
<p class="meta">The cold connections the pre-warm requests opened, ${overall.runs} runs of arms <code>${esc(view.arms)}</code> (never in the arms' figures).
Cold ${esc(SETUP_WHAT.h2)}: ${esc(outcomeText(overall, 'h2'))}. Cold ${esc(SETUP_WHAT.h3)}: ${esc(outcomeText(overall, 'h3'))}. Both in ${overall.paired} runs.</p>
<p class="meta">${esc(firstH3Text(overall))}.</p>
${rows.length ? `<div class="wide"><table class="setup"><thead><tr><th></th><th>HTTP/2 ms [${conf} CI]</th><th>HTTP/3 ms [${conf} CI]</th><th>Δ ms (HTTP/3 − HTTP/2) [${conf} CI]</th></tr></thead>
<tbody>${rows.join('')}</tbody></table></div><p class="meta">${esc(TLS_NOTE)}.</p>` : ''}
${view.metrics.some((m) => m.paired && overall[m.name].rows.length === 0) ? '<p class="meta">No connect or network rows: they need runs with a cold sample of each protocol.</p>' : ''}
<p class="meta">Paired within-run Δ (cold HTTP/3 − cold HTTP/2 of each run):</p><ul class="meta">${paired.join('')}</ul>
${byGroup}
</section>`;
}
