// The HTML report in real Chromium: written by the report command's code from a synthetic database (through the WASM
// statistics), opened from file://, it renders without errors or any network request, and its plots carry data.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { openTab } from '../../cli/browsers.mjs';
import { launchChromium } from '../../cli/chromium.mjs';
import { stateDir } from '../../stack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { writeSyntheticDb } from '../../synthetic/syntheticBeacons.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-report-e2e-'));
const htmlPath = path.join(tmp, 'report.html');
let browser;
let made;

before(async () => {
  const core = await loadH3probeNode();
  const { path: dbPath } = await writeSyntheticDb(path.join(tmp, 'synthetic.sqlite'), core, { runs: 3000, seed: 7 });
  const db = new Database(dbPath, { readonly: true });
  made = await makeReport(core, { db, htmlPath });
  db.close();
  browser = await launchChromium(['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']);
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the HTML report renders from file:// with no console error and no request beyond the page itself', async () => {
  const url = pathToFileURL(htmlPath).href;
  const tab = await openTab(browser);
  const page = tab.page.puppeteer;
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.setViewport({ width: 1200, height: 900 });
  await page.goto(url, { waitUntil: 'load' });
  assert.deepEqual(requests, [url]);
  assert.deepEqual(await tab.errors(), []);
  assert.equal(await page.title(), 'h3probe report');

  // One section per group: overall plus the regions of the synthetic mix, each with both CDFs drawn from many points.
  const sections = await page.$$eval('section.group', (els) => els.map((el) => ({
    name: el.dataset.group,
    cdf: Object.fromEntries([...el.querySelectorAll('svg.cdf-chart path.cdf')].map((p) => [p.dataset.arm,
      (p.getAttribute('d').match(/[ML]-?\d/g) ?? []).length])),
    ccdf: Object.fromEntries([...el.querySelectorAll('svg.ccdf-chart path.ccdf')].map((p) => [p.dataset.arm, Number(p.dataset.points)])),
    tableRows: el.querySelectorAll('table.arms tbody tr').length,
    // Rows that reach requests that did not finish have no Δ, so no point or bar in the forest plot.
    estimable: el.querySelectorAll('table.arms tbody tr:not([data-mark="unfinished"])').length,
  })));
  // The forest plot: per group a point per percentile, with its interval bar (a line and its two caps) where it has one.
  const forest = await page.$$eval('svg.forest .delta-point', (els) => els.map((el) => el.dataset.group));
  const bars = await page.$$eval('svg.forest g.ci-bar', (els) => els.map((el) => [el.dataset.group, el.querySelectorAll('line').length]));
  for (const s of sections) {
    s.points = forest.filter((g) => g === s.name).length;
    s.ciBars = bars.filter(([g]) => g === s.name).reduce((n, [, lines]) => n + lines, 0);
  }
  assert.equal(sections[0].name, 'overall');
  assert.deepEqual(sections.map((s) => s.name).slice(1, 4), ['North America', 'Europe', 'Asia']);
  for (const s of sections) {
    assert.ok(s.cdf.h2 >= 100 && s.cdf.h3 >= 100, `${s.name}: CDF paths with data points for both protocols (${JSON.stringify(s.cdf)})`);
    assert.equal(s.points, s.estimable, `${s.name}: a Δ point per percentile that has a Δ`);
    assert.ok(s.estimable >= 4, `${s.name}: ${s.estimable} percentiles with a Δ`);
    assert.equal(s.tableRows, 5, `${s.name}: the table has p50..p99`);
  }
  // The tail view: both arms down to 1 − F = 10⁻³ in the groups big enough to have the points.
  assert.ok(sections[0].ccdf.h2 >= 100 && sections[0].ccdf.h3 >= 100, JSON.stringify(sections[0].ccdf));
  // Intervals need enough runs: the overall group and the big regions have one bar (3 lines) per percentile.
  for (const s of sections.slice(0, 3)) assert.equal(s.ciBars, 3 * s.estimable, `${s.name}: CI bars`);

  // What a reader meets first: the verdict, its cautions (what could bias it first), the forest plot, before any table.
  const first = await page.$eval('body', (b) => [...b.children].map((el) => `${el.tagName}.${el.className}`));
  const figure = first.indexOf('FIGURE.forest-figure');
  assert.deepEqual(first.slice(0, 2), ['H1.', 'P.verdict']);
  assert.ok(figure >= 2 && first.slice(2, figure).every((x) => x === 'P.caution'), first.slice(0, figure + 1).join(' '));
  assert.match(await page.$eval('p.verdict', (el) => el.textContent), /^verdict \(3,000 runs, received 2022-12-15 to 2022-12-28; by the 95% interval of Δ\): HTTP\/3 faster at /);
  // The daily series: a chart per percentile (p50, p90, p95) with a point per day of the 14, and the table.
  const daily = await page.$$eval('#daily svg.daily-chart', (els) => els.map((el) => el.querySelectorAll('.delta-point').length));
  assert.deepEqual(daily, [14, 14, 14]);
  assert.equal(await page.$$eval('#daily table.daily tbody tr', (els) => els.length), 14);
  // The legend explains every mark, and "no interval" has a mark of its own (the small regions have some).
  assert.match(await page.$eval('#summary p.legend', (el) => el.textContent), /no interval/);
  assert.ok(await page.$$eval('.delta-point[data-mark="noInterval"]', (els) => els.length) > 0);
  assert.ok(await page.$$eval('.delta-point[data-mark="includesZero"]', (els) => els.length) > 0);

  const fallbackBars = await page.$$eval('svg.fallback-chart rect.fallback-bar', (els) => els.length);
  assert.equal(fallbackBars, sections.length);
  const summaryRows = await page.$$eval('table.summary tbody tr', (els) => els.length);
  assert.equal(summaryRows, sections.length);

  fs.mkdirSync(stateDir, { recursive: true });
  // The top (regions side by side, fallback rates, the overall plots) at a readable size, and the whole page beside it.
  await page.screenshot({ path: path.join(stateDir, 'report.png'), clip: { x: 0, y: 0, width: 1200, height: 1500 } });
  await page.screenshot({ path: path.join(stateDir, 'report-full.png'), fullPage: true });
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('the text table printed with it has every group and marks significant differences', () => {
  assert.match(made.text, /^== overall: 3,000 runs/m);
  assert.match(made.text, /^== region North America:/m);
  assert.match(made.text, /^p95 .*\*$/m);
  assert.match(made.text, /^by region/m);
});
