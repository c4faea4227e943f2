// One decision per cell, end to end, where the old Δ % interval (the delta method's, at the estimate) disagreed with
// Δ ms's: small experiments (40 to 100 runs, split by region, so most groups hold a handful of runs) stored through the
// core's decoder into SQLite and a real ClickHouse, reported from each store as text, HTML and JSON with the daily
// series. In every report, every cell (group × percentile, each day, each cumulative look) shows one decision: the JSON
// row's `significant` is its Δ ms interval excluding 0, and its Δ % interval excludes 0 exactly then (or is
// "unbounded"); the text's marks after both intervals, the HTML table's highlights, the summary and daily tables, every
// chart's dot and the verdict all say the same.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { clickhouseLane } from '../chdb/lane.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { percentileLabel } from '../../report/formatReport.mjs';
import { makeReport } from '../../report/makeReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-onedecision-');
after(scratch.cleanup);
const EXPERIMENTS = [[40, 31], [60, 32], [80, 33], [100, 34], [100, 35]];  // [runs, seed]
const reports = [];  // {where, text, html, json}

before(async () => {
  const server = await scratch.fresh('onedecision');
  for (const [runs, seed] of EXPERIMENTS) {
    const name = `small_${runs}_${seed}`;
    const sqlitePath = path.join(scratch.tmp, `${name}.sqlite`);
    const chSpec = `clickhouse://127.0.0.1:${server.httpPort}/${name}`;
    const sqlite = openStore(sqlitePath, core);
    const ch = await openClickHouseStore(chSpec, core, { log: path.join(scratch.tmp, `${name}.ndjson`) });
    const queued = [];
    for (const { beacon, meta } of syntheticBeacons({ runs, seed, days: 3 })) {
      const text = JSON.stringify(beacon);
      sqlite.insertBeacon(core.decodeBeacon(text), meta);
      queued.push(ch.queueBeacon(core.decodeBeacon(text), meta));
    }
    sqlite.close();
    await Promise.all(queued);
    await ch.flushed();
    await ch.close();
    for (const [store, source] of [['sqlite', { dbPath: sqlitePath }], ['clickhouse', { store: chSpec }]]) {
      const made = await makeReport(core, { ...source, htmlPath: path.join(scratch.tmp, `${name}-${store}.html`),
        jsonPath: path.join(scratch.tmp, `${name}-${store}.json`) });
      reports.push({ where: `${runs} runs, seed ${seed}, ${store}`, text: made.text, html: fs.readFileSync(made.htmlPath, 'utf8'),
        json: JSON.parse(fs.readFileSync(made.jsonPath, 'utf8')) });
    }
  }
});

const finite = (ci) => Array.isArray(ci) && ci.length === 2 && ci.every(Number.isFinite);
const excludes = (ci) => finite(ci) && (ci[0] > 0 || ci[1] < 0);
// A printed interval ("[-5.36, +4.36]", "[−49.5%, −0.0%]", "unbounded", "n/a"): excludes 0, includes it, or null.
function printedExcludes(text) {
  const m = text.replaceAll('−', '-').replaceAll('%', '').match(/^\[([-+]?[\d.]+), ([-+]?[\d.]+)\]$/);
  if (!m) return null;
  return Number(m[1]) > 0 || Number(m[2]) < 0;
}
// A look's rows the tables show: the daily series' percentiles (the looks hold every percentile, for the verdict).
const shownLooks = (json, d) => json.daily.percentiles.map((p) => d.cumulative.rows.find((r) => r.p === p));
const markWord = (r) => (r.unfinished ? 'unfinished' : !finite(r.ci_ms) ? 'noInterval' : r.significant ? 'significant' : 'includesZero');

// A row's Δ % interval agrees with its decision, and so does its sequence's.
function checkRow(r, where) {
  assert.equal(r.significant, excludes(r.ci_ms), `${where}: significant is the Δ ms interval's`);
  if (finite(r.ci_pct)) assert.equal(excludes(r.ci_pct), r.significant, `${where}: Δ % ${JSON.stringify(r.ci_pct)}`);
  else assert.ok(!finite(r.ci_ms) || r.ci_pct_unbounded, `${where}: a Δ ms interval without a Δ % one is unbounded`);
  if ('significant_cs' in r) {
    assert.equal(r.significant_cs, excludes(r.cs_ms), `${where}: significant_cs`);
    if (finite(r.cs_pct)) assert.equal(excludes(r.cs_pct), r.significant_cs, `${where}: sequence Δ %`);
  }
}

test('the JSON: every cell, day and look has one decision, and its Δ % interval agrees with it', () => {
  let decided = 0;
  let undecided = 0;
  for (const { where, json } of reports) {
    assert.equal(json.format, 'h3probe-report/3');
    for (const g of json.groups) {
      for (const r of g.analysis.rows) {
        checkRow(r, `${where}, ${g.name} ${percentileLabel(r.p)}`);
        if (finite(r.ci_ms)) (r.significant ? decided++ : undecided++);
      }
    }
    for (const d of json.daily.days) {
      for (const r of d.rows) checkRow(r, `${where}, day ${d.day} ${percentileLabel(r.p)}`);
      for (const r of d.cumulative.rows) checkRow(r, `${where}, up to ${d.day} ${percentileLabel(r.p)}`);
    }
    const overall = json.groups[0].analysis.rows;
    for (const [i, x] of json.verdict.percentiles.entries()) {
      const expected = markWord(overall[i]) === 'noInterval' ? 'no interval' : !overall[i].significant ? 'no difference shown'
        : overall[i].diff_ms < 0 ? 'faster' : 'slower';
      assert.equal(x.verdict, expected, `${where}: verdict at ${percentileLabel(x.p)}`);
    }
  }
  // Both kinds of cell occur, so the checks above had something to tell apart.
  assert.ok(decided >= 5 && undecided >= 20, `${decided} decided cells, ${undecided} undecided`);
});

test('the text: the marks after Δ ms and after Δ % are the one decision, in every table', () => {
  for (const { where, text, json } of reports) {
    const byName = new Map(json.groups.map((g) => [g.name, g]));
    let group = null;
    let checked = 0;
    for (const line of text.split('\n')) {
      const head = line.match(/^== (?:overall|region (.+?)): /);
      if (head) group = byName.get(head[1] ?? 'overall') ?? null;
      if (/^== region .*same as overall/.test(line)) group = null;
      const m = line.match(/^(p[\d.]+)\s+\S+\s+\S+\s+\S+\s+(\[[^\]]*\]|n\/a)\s*(\*?)\s+\S+%\s+(\[[^\]]*\]|n\/a|unbounded)\s*(\*?)$/);
      if (!m || !group) continue;
      const r = group.analysis.rows.find((x) => percentileLabel(x.p) === m[1]);
      const star = r.significant ? '*' : '';
      assert.equal(m[3], star, `${where}, ${group.name} ${m[1]}: Δ ms mark`);
      assert.equal(m[5], star, `${where}, ${group.name} ${m[1]}: Δ % mark`);
      const pct = printedExcludes(m[4]);
      if (pct !== null) assert.equal(pct, r.significant, `${where}, ${group.name} ${m[1]}: printed Δ % ${m[4]}`);
      checked++;
    }
    assert.ok(checked >= 10, `${where}: ${checked} table rows checked`);
    // The summary by region: Δ% with the cell's mark (* decided, ? no interval).
    const summary = text.slice(text.indexOf('\nby region'), text.indexOf('\n', text.indexOf('survives BH: the percentiles')));
    for (const g of json.groups) {
      const line = summary.split('\n').find((l) => l.startsWith(`${g.name}  `));
      if (!line) continue;
      const marks = [...line.matchAll(/ ([-+]\d+\.\d)([*?]?)(?= |$)/g)].map((x) => x[2]);
      // A row that reaches requests that did not finish has no Δ to print (its mark stands alone).
      assert.deepEqual(marks, g.analysis.rows.filter((r) => !r.unfinished).map((r) => ({ significant: '*', noInterval: '?', includesZero: '' })[markWord(r)]),
        `${where}: summary marks of ${g.name}`);
    }
    // The daily series and its looks.
    const days = new Map(json.daily.days.map((d) => [d.day, d]));
    const dailyAt = text.indexOf('by day received');
    const lookAt = text.indexOf('cumulative by day');
    for (const line of text.slice(dailyAt, lookAt).split('\n')) {
      const d = days.get(line.slice(0, 10));
      if (!d) continue;
      const cells = [...line.matchAll(/([-+]\d+\.\d)([*? ]) (\[[^\]]*\]|n\/a|unbounded)/g)];
      const rows = d.rows.filter((r) => !r.unfinished);
      assert.equal(cells.length, rows.length, `${where}: day ${d.day}`);
      cells.forEach((c, i) => {
        assert.equal(c[2].trim(), ({ significant: '*', noInterval: '?', includesZero: '' })[markWord(rows[i])], `${where}: day ${d.day}`);
        const pct = printedExcludes(c[3]);
        if (pct !== null) assert.equal(pct, rows[i].significant, `${where}: day ${d.day} ${c[3]}`);
      });
    }
    for (const line of text.slice(lookAt).split('\n')) {
      const d = days.get(line.slice(0, 10));
      if (!d) continue;
      const fixed = [...line.matchAll(/(\[[^\]]*\]|n\/a)(\*| ) +(\[[^\]]*\]|n\/a)(\*| |$)/g)];
      const shown = shownLooks(json, d);
      assert.equal(fixed.length, shown.length, `${where}: look ${d.day}`);
      fixed.forEach((c, i) => {
        assert.equal(c[2] === '*', shown[i].significant, `${where}: look ${d.day} fixed`);
        assert.equal(c[4] === '*', shown[i].significant_cs, `${where}: look ${d.day} anytime`);
      });
    }
  }
});

test('the HTML: table highlights, summary and daily cells, every chart\'s dots and the cumulative table follow it', () => {
  for (const { where, html, json } of reports) {
    const forest = html.match(/<svg class="forest"[\s\S]*?<\/svg>/)[0];
    for (const [index, g] of json.groups.entries()) {
      const start = html.indexOf(`id="group-${index}"`);
      if (start < 0) continue;  // a region that holds every run is shown once, as overall
      const section = html.slice(start, html.indexOf('</section>', start));
      for (const r of g.analysis.rows) {
        const label = percentileLabel(r.p);
        const row = section.match(new RegExp(`<tr[^>]*><td>${label}</td><td>[^<]*</td><td>[^<]*</td>\\n((?:<td[^>]*>[^<]*</td>){4})`));
        assert.ok(row, `${where}, ${g.name} ${label}: a table row`);
        const cells = [...row[1].matchAll(/<td( class="sig")?>([^<]*)<\/td>/g)];
        for (const c of cells) assert.equal(Boolean(c[1]), r.significant, `${where}, ${g.name} ${label}: highlight of ${c[2]}`);
        const pct = printedExcludes(cells[3][2]);
        if (pct !== null) assert.equal(pct, r.significant, `${where}, ${g.name} ${label}: Δ % ${cells[3][2]}`);
        const name = g.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const dot = forest.match(new RegExp(`class="delta-point[^"]*" data-group="${name}" data-mark="(\\w+)"[^>]*><title>${name} ${label}:`));
        // No Δ where the row reaches requests that did not finish: no dot either.
        assert.equal(dot?.[1], r.unfinished ? undefined : markWord(r), `${where}, ${g.name} ${label}: the forest plot's dot`);
      }
    }
    const summary = html.slice(html.indexOf('<table class="summary">'), html.indexOf('</table>', html.indexOf('<table class="summary">')));
    for (const g of json.groups) {
      const tr = summary.match(new RegExp(`<tr><td>${g.name}</td>(.*?)</tr>`))?.[1];
      assert.ok(tr, `${where}: summary row of ${g.name}`);
      const classes = [...tr.matchAll(/<td class="(sig|noci|)">[^<]*<span class="ci">/g)].map((c) => c[1]);
      assert.deepEqual(classes, g.analysis.rows.map((r) => ({ significant: 'sig', noInterval: 'noci', unfinished: 'noci', includesZero: '' })[markWord(r)]),
        `${where}: summary highlights of ${g.name}`);
    }
    for (const p of json.daily.percentiles) {
      const chart = html.match(new RegExp(`<svg class="daily-chart daily-${percentileLabel(p)}"[\\s\\S]*?</svg>`))[0];
      const dots = [...chart.matchAll(/data-mark="(\w+)"/g)].map((d) => d[1]);
      assert.deepEqual(dots, json.daily.days.map((d) => markWord(d.rows.find((r) => r.p === p))), `${where}: daily ${percentileLabel(p)} dots`);
    }
    const looks = html.match(/<table class="cumulative">[\s\S]*?<\/table>/)[0];
    for (const d of json.daily.days) {
      const tr = looks.match(new RegExp(`<tr><td>${d.day}</td><td>[^<]*</td>(.*?)</tr>`))[1];
      const cells = [...tr.matchAll(/<td( class="sig")?>[^<]*<\/td>/g)].map((c) => Boolean(c[1]));
      assert.deepEqual(cells, shownLooks(json, d).flatMap((r) => [false, r.significant, r.significant_cs]), `${where}: look ${d.day}`);
    }
  }
});
