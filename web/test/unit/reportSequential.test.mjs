// The anytime-valid interval and the multiplicity-aware verdict, as the report shows them: the core computes both
// (confidence_sequence.hpp, multiplicity.hpp; their statistics are tested in host_tests/sequential_test.cpp), and
// these tests check that the text, the HTML and the JSON carry what the core computed, that the daily series' looks
// are cumulative (every run up to that day), that the verdict counts and names the cells that survive, and that its
// stopping line says since which look the sequence decided, or how many more runs and days it needs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeSyntheticDb } from '../../synthetic/syntheticBeacons.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';

const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-sequential-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dbPath = path.join(tmp, 'runs.sqlite');
await writeSyntheticDb(dbPath, core, { runs: 1200, days: 6, seed: 1 });
const jsonPath = path.join(tmp, 'report.json');
const htmlPath = path.join(tmp, 'report.html');
const made = await makeReport(core, { dbPath, jsonPath, htmlPath, daily: true });
const json = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const finite = (ci) => Array.isArray(ci) && ci.every(Number.isFinite);
const excludes = (ci) => finite(ci) && (ci[0] > 0 || ci[1] < 0);

test('every row with an interval has an anytime-valid one around the same estimate, wider, with its one decision', () => {
  const rows = json.groups.flatMap((g) => g.analysis.rows).filter((r) => finite(r.ci_ms));
  assert.ok(rows.length > 10);
  for (const r of rows) {
    assert.ok(finite(r.cs_ms) && (finite(r.cs_pct) !== r.cs_pct_unbounded), `p${r.p * 100}`);
    assert.ok(r.cs_ms[0] < r.ci_ms[0] && r.cs_ms[1] > r.ci_ms[1], 'wider than the fixed-horizon interval');
    assert.ok(Math.abs((r.cs_ms[0] + r.cs_ms[1]) / 2 - r.diff_ms) < 1e-9 * Math.max(1, Math.abs(r.diff_ms)));
    assert.equal(r.significant_cs, excludes(r.cs_ms));
    assert.equal(r.significant_cs, r.cs_pct_unbounded ? r.significant_cs : excludes(r.cs_pct), 'the sequence of Δ % decides with Δ ms\'s');
    if (r.significant_cs) assert.ok(r.significant, 'a sequence that excludes 0 implies the interval does');
  }
});

test('the daily looks hold every run up to their day, the fixed-horizon interval beside the anytime-valid one', () => {
  const { days } = json.daily;
  assert.equal(days.length, 6);
  let sum = 0;
  for (const d of days) {
    sum += d.runs;
    assert.equal(d.cumulative.runs, sum, d.day);
    assert.deepEqual(d.cumulative.rows.map((r) => r.p), json.percentiles);  // every percentile: the stopping line reads them
    for (const r of d.cumulative.rows.filter((x) => json.daily.percentiles.includes(x.p))) assert.ok(finite(r.ci_ms) && finite(r.cs_ms) && r.cs_ms[0] < r.ci_ms[0], `${d.day} p${r.p * 100}`);
  }
  // The last look is every run: its Δ is the overall group's.
  const overall = json.groups[0].analysis.rows;
  for (const r of days.at(-1).cumulative.rows) assert.equal(r.diff_ms, overall.find((x) => x.p === r.p).diff_ms);
  const text = made.text.slice(made.text.indexOf('cumulative by day'));
  assert.match(text, /^cumulative by day/);
  assert.equal(text.split('\n').filter((l) => /^\d{4}-\d\d-\d\d /.test(l)).length, 6);
  const html = fs.readFileSync(htmlPath, 'utf8');
  assert.equal((html.match(/<table class="cumulative">[\s\S]*?<\/table>/)[0].match(/<tr><td>\d{4}-/g) ?? []).length, 6);
  // A chart per percentile: per day the anytime-valid bar behind the fixed-horizon line.
  const charts = html.match(/<svg class="cumulative-chart[\s\S]*?<\/svg>/g) ?? [];
  assert.equal(charts.length, 3);
  for (const c of charts) assert.equal((c.match(/class="cs-bar"/g) ?? []).length, 6);
});

test('the verdict counts every comparison: the cells that survive Benjamini–Hochberg, as the core marked them', () => {
  const cells = json.groups.flatMap((g) => g.analysis.rows.map((r) => ({ group: g.name, ...r })))
    .filter((r) => Number.isFinite(r.p_value));
  const { fdr } = json.verdict;
  assert.equal(fdr.cells, cells.length);
  assert.equal(fdr.level, 1 - json.confidence);
  assert.deepEqual(fdr.survivors.map((s) => `${s.group} ${s.p}`), cells.filter((r) => r.discovery).map((r) => `${r.group} ${r.p}`));
  for (const r of cells) {
    assert.ok(r.q_value >= r.p_value - 1e-15);
    assert.equal(r.discovery, r.q_value <= fdr.level + 1e-12);
  }
  // This data has a real tail effect: some cells survive, and the verdict names them.
  assert.ok(fdr.survivors.length > 0);
  const line = made.report.verdict.text.split('\n').find((l) => l.startsWith('counting every comparison'));
  assert.match(line, new RegExp(`: ${fdr.survivors.length} of ${fdr.cells} region × percentile cells survive: overall p\\d`));
  assert.match(made.report.verdict.text, /\nmay we stop\? \(the 95% confidence sequence, valid however often this is read\): p50: /);
  // Per cell, beside the table: the adjusted value and the survivor mark in text; a q column in HTML.
  assert.match(made.text, /Δ ms adjusted for every comparison in this report \(Benjamini–Hochberg; † survives at 5%\): p50 q /);
  const html = fs.readFileSync(htmlPath, 'utf8');
  assert.equal((html.match(/<td class="q sig">/g) ?? []).length, fdr.survivors.length);
});

test('the stopping line: decided since the first look whose sequence excluded 0, else the runs and days still needed', async () => {
  const looks = json.daily.days.map((d) => d.cumulative);
  const stops = json.verdict.percentiles.map((x) => x.stop);
  assert.deepEqual(stops.map((x) => x.p), json.percentiles);
  const line = made.report.verdict.text.split('\n').find((l) => l.startsWith('may we stop?'));
  for (const x of stops) {
    const rows = looks.map((l) => l.rows.find((r) => r.p === x.p));
    const first = rows.findIndex((r) => r.significant_cs);
    assert.equal(x.looks, looks.length);
    if (first >= 0) {
      assert.equal(x.since_look, first + 1, `p${x.p * 100}`);
      assert.equal(x.since_day, json.daily.days[first].day);
      assert.equal(x.decided, rows[first].diff_ms < 0 ? 'faster' : 'slower');
      assert.match(line, new RegExp(`p${x.p * 100}: yes, HTTP/3 ${x.decided} since ${x.since_day} \\(look ${first + 1} of ${looks.length}\\)`));
    } else {
      assert.equal(x.decided, null);
      const last = rows.at(-1);
      assert.equal(x.runs_needed, last.cs_runs_needed);
      // Days at the looks' rate: the runs of the last look (in either arm) over the number of looks.
      assert.ok(Math.abs(x.days_needed - x.runs_needed / (last.cs_runs_needed / last.cs_days_needed)) < 1e-9);
      assert.match(line, new RegExp(`p${x.p * 100}: not yet; about [\\d,]+ more runs at this Δ and spread \\(about`));
    }
  }
  // This data (1,200 runs over 6 days, a real tail effect; a seed whose draw leaves one percentile undecided, so that
  // both branches above run) decides some percentiles and not others.
  assert.ok(stops.some((x) => x.decided) && stops.some((x) => !x.decided), JSON.stringify(stops));
  // From the first look that decided, every later look carries that look and side.
  for (const x of stops.filter((s) => s.decided)) {
    for (const [j, l] of looks.entries()) {
      const r = l.rows.find((y) => y.p === x.p);
      assert.equal(r.cs_decided_look, j >= x.since_look - 1 ? x.since_look - 1 : null);
    }
  }
  // Without the daily series the line still says decided or not and the runs, and names no look.
  const bare = await makeReport(core, { dbPath, daily: false });
  const bareLine = bare.report.verdict.text.split('\n').find((l) => l.startsWith('may we stop?'));
  assert.doesNotMatch(bareLine, /look \d+ of/);
  assert.deepEqual(bare.report.verdict.percentiles.map((x) => Boolean(x.stop.decided)),
    json.groups[0].analysis.rows.map((r) => r.significant_cs));
});
