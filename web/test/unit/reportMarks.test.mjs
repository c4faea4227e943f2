// Significance by one rule: each interval carries its own mark. A report over synthetic runs, its overall p75 row set to
// the case a user met: Δ ms [+0.01, +3.39] excludes 0 while Δ % [−3.5 %, +49.4 %] includes it. The text marks the
// first and not the second, the HTML likewise, the Δ % chart draws an open dot, the verdict names the interval it reads,
// and the JSON rows carry both marks as the core computed them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeSyntheticDb } from '../../devstack/syntheticBeacons.mjs';
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

test('the JSON rows carry a mark per interval, each as its interval says', () => {
  const json = JSON.parse(fs.readFileSync(path.join(tmp, 'report.json'), 'utf8'));
  const excludes = (ci) => Array.isArray(ci) && ci.every(Number.isFinite) && (ci[0] > 0 || ci[1] < 0);
  const rows = json.groups.flatMap((g) => g.analysis.rows);
  assert.ok(rows.length > 0);
  for (const r of rows) {
    assert.equal(r.significant_ms, excludes(r.ci_ms), `p${r.p * 100} ms`);
    assert.equal(r.significant_pct, excludes(r.ci_pct), `p${r.p * 100} pct`);
    assert.equal('significant' in r, false);
  }
});

test('p75 Δ ms [+0.01, +3.39] excludes 0 and Δ % [−3.5 %, +49.4 %] includes it: each interval gets its own mark', () => {
  const report = structuredClone(made.report);
  const overall = report.groups[0];
  const row = overall.analysis.rows.find((r) => r.p === 0.75);
  Object.assign(row, { h2: 9.3, h3: 11.0, diff_ms: 1.7, diff_pct: 18.3, ci_ms: [0.01, 3.39], ci_pct: [-3.5, 49.4],
    significant_ms: true, significant_pct: false });
  report.verdict = verdict(report);

  const text = formatReport(report);
  const line = text.split('\n').find((l) => l.startsWith('p75 ')); // the overall table comes first
  assert.match(line, /\[\+0\.01, \+3\.39\]\s+\*\s+\+18\.3%\s+\[-3\.5%, \+49\.4%\]\s*$/);

  assert.equal(report.verdict.interval, 'ms');
  assert.match(report.verdict.text, /by the 95% interval of Δ ms\)/);
  assert.match(report.verdict.text, /HTTP\/3 slower at [^;]*p75 \(\+1\.70 ms, \+18\.3%, 95% CI \[\+0\.01, \+3\.39\] ms\)/);

  const html = renderReportHtml(report);
  const overallHtml = html.slice(html.indexOf('id="group-0"'), html.indexOf('id="group-1"'));
  const tableRow = overallHtml.match(/<tr><td>p75<\/td>.*?<\/tr>/s)[0];
  assert.match(tableRow, /<td class="sig">\+1\.70 \*<\/td><td class="sig">\[\+0\.01, \+3\.39\]<\/td>/);
  assert.match(tableRow, /<td>\+18\.3%<\/td><td>\[−3\.5%, \+49\.4%\]<\/td>/); // the HTML writes a true minus
  // The Δ % chart draws Δ %'s interval: its dot is open, as that interval includes 0.
  const chart = overallHtml.slice(overallHtml.indexOf('class="delta-chart'));
  const dot = chart.match(/<circle class="delta-point" data-mark="(\w+)"[^>]*fill="([^"]+)"><title>p75:/);
  assert.ok(dot, 'a p75 dot in the Δ chart');
  assert.equal(dot[1], 'includesZero');
  assert.equal(dot[2], '#fff');
});
