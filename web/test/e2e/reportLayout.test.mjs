// The HTML report fits any screen, in real Chromium: the widest realistic reports (wideReports.mjs: long network names,
// six weeks of days, an A/A test, written through the collector's store and the report command's code) at a phone's
// 390 × 844 px and a laptop's 1,280 × 800 px. The answer is on the first screen: the verdict, its cautions and the forest
// plot lie within the first viewport. The page never scrolls sideways; at 1,280 px every table fits its box, at 390 px
// each row is a stack of label-value lines and no cell lies outside the viewport's width; every chart (the folded ones
// opened) lies inside the viewport, fills its column and keeps its text legible and inside it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { openTab } from '../../cli/browsers.mjs';
import { launchChromium } from '../../cli/chromium.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { WIDE_DAYS, WIDE_NETWORKS, WIDE_REPORTS, writeWideReports } from '../../synthetic/wideReports.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-report-layout-'));
// The smallest rendered size of a chart's text, in CSS px, that still reads on a phone.
const MIN_CHART_TEXT_PX = 10;
let browser;
let reports;

before(async () => {
  reports = await writeWideReports(tmp, await loadH3probeNode());
  browser = await launchChromium(['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']);
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Where the answer lies when the page opens (before any scroll): the verdict, the cautions and the forest plot.
function firstScreen() {
  const box = (el) => { const r = el.getBoundingClientRect(); return { top: Math.round(r.top), bottom: Math.round(r.bottom), cls: el.className?.baseVal ?? el.className }; };
  return { vh: window.innerHeight, parts: [...document.querySelectorAll('p.verdict, p.caution, svg.forest')].map(box),
    tablesBelow: [...document.querySelectorAll('table')].every((t) => t.getBoundingClientRect().top > document.querySelector('svg.forest').getBoundingClientRect().bottom) };
}

// What the page shows at its viewport, every fold opened: widths of the page, of each table's box and its cells, and of
// each chart and its text.
function measure() {
  for (const d of document.querySelectorAll('details')) d.open = true;
  const vw = document.documentElement.clientWidth;
  const round = (v) => Math.round(v * 10) / 10;
  const tables = [...document.querySelectorAll('table')].map((t) => {
    const box = t.closest('.wide');
    const r = box?.getBoundingClientRect();
    return { cls: t.className, boxed: Boolean(box), overflowX: box ? getComputedStyle(box).overflowX : null,
      left: round(r?.left ?? 0), right: round(r?.right ?? 0), scrollWidth: box?.scrollWidth ?? 0, clientWidth: box?.clientWidth ?? 0,
      rows: t.querySelectorAll('tbody tr').length,
      // Cells laid out outside the viewport's width (a hidden heading row has no box).
      cellsOutside: [...t.querySelectorAll('td, th')].filter((c) => c.getClientRects().length)
        .map((c) => c.getBoundingClientRect()).filter((b) => b.left < -0.5 || b.right > vw + 0.5).length };
  });
  const charts = [...document.querySelectorAll('svg')].map((svg) => {
    const r = svg.getBoundingClientRect();
    const scale = svg.getScreenCTM().a;
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim());
    // A text's box in the page's px, rotated ones too (the y-axis labels).
    const outside = texts.filter((t) => {
      const b = t.getBoundingClientRect();
      return b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1;
    }).map((t) => t.textContent);
    return { cls: svg.getAttribute('class'), left: round(r.left), right: round(r.right), width: round(r.width),
      column: round(svg.parentElement.getBoundingClientRect().width), texts: texts.length, outside,
      smallestText: round(Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale))),
      points: svg.querySelectorAll('.delta-point').length };
  });
  const style = (el) => getComputedStyle(el).overflowX;
  return { vw, scrollWidth: document.documentElement.scrollWidth, overflow: [style(document.documentElement), style(document.body)],
    tables, charts };
}

for (const [width, height] of [[390, 844], [1280, 800]]) {
  for (const { name } of WIDE_REPORTS) {
    test(`the ${name} report at ${width} × ${height} px: the answer on the first screen, no sideways scroll, ${width === 390 ? 'stacked tables' : 'tables that fit'}, charts inside and legible`, async () => {
      const { htmlPath, report } = reports.find((r) => r.name === name);
      const tab = await openTab(browser);
      await tab.page.puppeteer.setViewport({ width, height });
      await tab.page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
      const first = await tab.page.evaluate(firstScreen);
      const m = await tab.page.evaluate(measure);
      assert.deepEqual(await tab.errors(), []);
      await tab.context.close();

      // The verdict, every caution and the one forest plot, all within the first viewport, before any table.
      assert.equal(first.vh, height);
      assert.deepEqual(first.parts.filter((x) => x.cls === 'verdict').length, 1);
      assert.deepEqual(first.parts.filter((x) => x.cls === 'forest').length, 1);
      for (const x of first.parts) assert.ok(x.top >= 0 && x.bottom <= height, `${x.cls} within the first ${width} × ${height} screen (${JSON.stringify(first.parts)})`);
      assert.ok(first.tablesBelow, 'every table below the forest plot');

      assert.equal(m.vw, width);
      // Nothing hidden to pass: the page and body clip nothing, so scrollWidth is all that is laid out.
      assert.deepEqual(m.overflow, ['visible', 'visible']);
      assert.ok(m.scrollWidth <= width, `the page is ${m.scrollWidth} px wide at a ${width} px viewport`);

      // The report is as wide as meant: every group in the summary, weeks of days, the connection-setup view.
      const groups = report.groups.length;
      assert.equal(m.tables.find((t) => t.cls === 'summary').rows, groups);
      assert.equal(m.tables.filter((t) => t.cls === 'arms').length, report.groups.filter((g) => g.analysis?.rows?.length).length);
      assert.equal(m.tables.find((t) => t.cls === 'cumulative').rows, WIDE_DAYS);
      assert.equal(m.tables.some((t) => t.cls === 'setup'), report.arms === 'h2-h3');
      for (const t of m.tables) {
        assert.ok(t.boxed && t.left >= 0 && t.right <= width, `table.${t.cls}'s box lies within the viewport (${JSON.stringify(t)})`);
        assert.ok(t.scrollWidth <= t.clientWidth, `table.${t.cls} fits its box: nothing to scroll sideways (${JSON.stringify(t)})`);
        assert.equal(t.cellsOutside, 0, `table.${t.cls}: every cell within the ${width} px viewport (${JSON.stringify(t)})`);
      }

      // Charts: the forest plot, the fallback rates, per group the tail and the CDF, three daily series and three
      // cumulative looks.
      assert.equal(m.charts.length, 1 + 1 + 2 * groups + 3 + 3);
      assert.deepEqual(m.charts.filter((c) => c.cls.startsWith('daily-chart')).map((c) => c.points), Array(3).fill(WIDE_DAYS));
      // A dot per group and percentile with a Δ (none where the percentile reaches requests that did not finish).
      const dots = report.groups.reduce((n, g) => n + (g.analysis?.rows ?? []).filter((r) => !r.unfinished).length, 0);
      assert.equal(m.charts.find((c) => c.cls === 'forest').points, dots, 'a dot per group with a table and percentile');
      for (const c of m.charts) {
        const what = `svg.${c.cls.split(' ')[0]} ${JSON.stringify(c)}`;
        assert.ok(c.left >= 0 && c.right <= width, `${what} lies within the viewport`);
        assert.ok(Math.abs(c.width - c.column) <= 1, `${what} fills its column`);
        assert.ok(c.texts > 0 && c.smallestText >= MIN_CHART_TEXT_PX, `${what}: text at least ${MIN_CHART_TEXT_PX} px`);
        assert.deepEqual(c.outside, [], `${what}: every label inside the chart`);
      }
      // Three charts a row on a laptop; one, the phone's whole width, on a phone.
      const plotWidths = m.charts.filter((c) => !c.cls.startsWith('fallback') && c.cls !== 'forest').map((c) => c.width);
      if (width === 390) assert.ok(Math.min(...plotWidths) >= 330, `phone charts ${Math.min(...plotWidths)} px wide`);
      else assert.ok(Math.max(...plotWidths) <= 1200 / 3, `laptop charts at most a third of the page (${Math.max(...plotWidths)} px)`);
    });
  }
}

test('the network report names every network, the longest in full in its table', () => {
  const { report } = reports.find((r) => r.name === 'network');
  const longest = WIDE_NETWORKS.reduce((a, n) => (`${n.org}`.length > `${a.org}`.length ? n : a));
  assert.ok(report.groups.some((g) => g.name === `AS${longest.asn} ${longest.org}`));
  assert.ok(fs.readFileSync(reports[0].htmlPath, 'utf8').includes(`<td>AS${longest.asn} ${longest.org}</td>`));
});

// The screenshots are in the repository, not the package: report.md shows them by their repository URL.
test('docs/report.md shows both screenshots, and names the script that makes them', () => {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs/report.md'), 'utf8');
  const scripts = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts;
  assert.match(scripts['report:screenshots'], /web\/scripts\/report_screenshots\.mjs/);
  assert.match(doc, /npm run report:screenshots/);
  for (const width of [390, 1280]) {
    assert.match(doc, new RegExp(`!\\[[^\\]]+\\]\\(https://github\\.com/h3probe/h3probe/raw/main/docs/report-${width}\\.png\\)`));
    const png = path.join(repoRoot, 'docs', `report-${width}.png`);
    assert.ok(fs.statSync(png).size < 150_000, `${png} stays small`);
  }
});
