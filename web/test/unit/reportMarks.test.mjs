// One decision per cell: a row's `significant` (its Δ ms interval excludes 0, and so its Δ % interval, Fieller's, which
// is the same test inverted for the ratio) is what every mark reads. A report over synthetic runs: the JSON rows carry
// the one field and their intervals agree with it; then two rows set by hand, one decided and one whose Δ % set has no
// finite bounds: the text, the HTML table, the charts and the verdict follow the field and print "unbounded", never a
// number.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeSyntheticDb } from '../../synthetic/syntheticBeacons.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { formatReport } from '../../report/formatReport.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { renderReportHtml } from '../../report/renderReportHtml.mjs';
import { verdict } from '../../report/verdict.mjs';

const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-marks-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dbPath = path.join(tmp, 'runs.sqlite');
await writeSyntheticDb(dbPath, core, { runs: 300, seed: 3 });
const made = await makeReport(core, { dbPath, jsonPath: path.join(tmp, 'report.json') });
const excludes = (ci) => Array.isArray(ci) && ci.every(Number.isFinite) && (ci[0] > 0 || ci[1] < 0);

test('the JSON rows carry one decision, and both intervals exclude 0 exactly when it says so', () => {
  const json = JSON.parse(fs.readFileSync(path.join(tmp, 'report.json'), 'utf8'));
  const rows = json.groups.flatMap((g) => g.analysis.rows);
  assert.ok(rows.some((r) => r.significant) && rows.some((r) => excludes(r.ci_ms) === false), 'both kinds of cell');
  for (const r of rows) {
    assert.equal(r.significant, excludes(r.ci_ms), `p${r.p * 100}`);
    if (!r.ci_pct_unbounded && r.ci_pct.every(Number.isFinite)) assert.equal(excludes(r.ci_pct), r.significant, `p${r.p * 100} %`);
    for (const gone of ['significant_ms', 'significant_pct', 'significant_cs_ms', 'significant_cs_pct']) assert.equal(gone in r, false);
  }
});

test('marks, highlights, dots and the verdict read the one decision; an unbounded Δ % reads "unbounded"', () => {
  const report = structuredClone(made.report);
  const rows = report.groups[0].analysis.rows;
  const p75 = rows.find((r) => r.p === 0.75);
  const p90 = rows.find((r) => r.p === 0.9);
  // p75 decided: HTTP/3 slower. p90: decided, HTTP/3 faster, but the HTTP/2 quantile so uncertain that Δ % has no bounds.
  Object.assign(p75, { h2: 9.3, h3: 11.0, diff_ms: 1.7, diff_pct: 18.3, ci_ms: [0.01, 3.39], ci_pct: [0.1, 40.2],
    ci_pct_unbounded: false, significant: true });
  Object.assign(p90, { h2: 20, h3: 12, diff_ms: -8, diff_pct: -40, ci_ms: [-15.5, -0.5], ci_pct: [null, null],
    ci_pct_unbounded: true, significant: true });
  report.verdict = verdict(report);

  const text = formatReport(report);
  const line = (p) => text.split('\n').find((l) => l.startsWith(`${p} `)); // the overall table comes first
  assert.match(line('p75'), /\[\+0\.01, \+3\.39\]\s+\*\s+\+18\.3%\s+\[\+0\.1%, \+40\.2%\]\s+\*$/);
  assert.match(line('p90'), /\[-15\.50, -0\.50\]\s+\*\s+-40\.0%\s+unbounded\s+\*$/);
  assert.match(text, /^unbounded: the HTTP\/2 quantile's own interval reaches 0/m);

  assert.match(report.verdict.text, /by the 95% interval of Δ\)/);
  assert.match(report.verdict.text, /HTTP\/3 slower at [^;]*p75 \(\+1\.70 ms, \+18\.3%, 95% CI \[\+0\.01, \+3\.39\] ms, \[\+0\.1%, \+40\.2%\]\)/);
  assert.match(report.verdict.text, /HTTP\/3 faster at [^;]*p90 \(-8\.00 ms, -40\.0%, 95% CI \[-15\.50, -0\.50\] ms, unbounded in %\)/);
  assert.equal(report.verdict.percentiles.find((x) => x.p === 0.9).ci_pct_unbounded, true);

  const html = renderReportHtml(report);
  const overallHtml = html.slice(html.indexOf('id="group-0"'), html.indexOf('id="group-1"'));
  const tableRow = (p) => overallHtml.match(new RegExp(`<tr[^>]*><td>${p}</td>.*?</tr>`, 's'))[0];
  assert.match(tableRow('p75'), /<td class="sig">\+1\.70 \*<\/td><td class="sig">\[\+0\.01, \+3\.39\]<\/td><td class="sig">\+18\.3% \*<\/td><td class="sig">\[\+0\.1%, \+40\.2%\]<\/td>/);
  assert.match(tableRow('p90'), /<td class="sig">−40\.0% \*<\/td><td class="sig">unbounded<\/td>/);
  // The forest plot's dots: filled for both, as the decision is.
  const chart = html.match(/<svg class="forest"[\s\S]*?<\/svg>/)[0];
  for (const p of ['p75', 'p90']) {
    const dot = chart.match(new RegExp(`<circle class="delta-point" data-group="overall" data-mark="(\\w+)"[^>]*fill="([^"]+)"><title>overall ${p}:`));
    assert.ok(dot, `a ${p} dot in the forest plot`);
    assert.equal(dot[1], 'significant');
    assert.notEqual(dot[2], '#fff');
  }
  assert.match(chart, /<title>overall p90: −8\.00 ms, −40\.0%, 95% CI unbounded<\/title>/);
  // The summary table's Δ % cell: highlighted, its interval unbounded.
  const summary = html.slice(html.indexOf('id="summary"'), html.indexOf('</table>', html.indexOf('id="summary"')));
  assert.match(summary, /<td class="sig">−40\.0% \*<span class="ci">unbounded<\/span><\/td>/);
  assert.match(html, /<b>unbounded<\/b>: the HTTP\/2 quantile(&#39;|')s own interval reaches 0/);
});
