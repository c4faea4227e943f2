// The HTML report fits any screen, in real Chromium: the widest realistic reports (wideReports.mjs: long network names,
// six weeks of days, an A/A test, written through the collector's store and the report command's code) at a phone's
// 390 px and a laptop's 1,280 px. The page never scrolls sideways; a table may scroll only inside its own box, and at
// 1,280 px none does; every chart lies inside the viewport, fills its column and keeps its text legible and inside it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, openPage } from '../../cli/chromium.mjs';
import { repoRoot } from '../../devstack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { WIDE_DAYS, WIDE_NETWORKS, WIDE_REPORTS, writeWideReports } from '../../devstack/wideReports.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-report-layout-'));
// The smallest rendered size of a chart's text, in CSS px, that still reads on a phone.
const MIN_CHART_TEXT_PX = 10;
let browser;
let reports;

before(async () => {
  reports = await writeWideReports(tmp, await loadH3probeNode());
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// What the page shows at its viewport: widths of the page, of each table's scroll box and of each chart and its text.
function measure() {
  const vw = document.documentElement.clientWidth;
  const round = (v) => Math.round(v * 10) / 10;
  const tables = [...document.querySelectorAll('table')].map((t) => {
    const box = t.closest('.wide');
    const r = box?.getBoundingClientRect();
    return { cls: t.className, boxed: Boolean(box), overflowX: box ? getComputedStyle(box).overflowX : null,
      left: round(r?.left ?? 0), right: round(r?.right ?? 0), scrollWidth: box?.scrollWidth ?? 0, clientWidth: box?.clientWidth ?? 0,
      rows: t.querySelectorAll('tbody tr').length };
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

for (const width of [390, 1280]) {
  for (const { name } of WIDE_REPORTS) {
    test(`the ${name} report at ${width} px: no sideways page scroll, tables in their own boxes${width === 1280 ? ' that fit' : ''}, charts inside and legible`, async () => {
      const { htmlPath, report } = reports.find((r) => r.name === name);
      const tab = await openPage(browser, null);
      await tab.page.setViewportSize({ width, height: 900 });
      await tab.page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
      const m = await tab.page.evaluate(measure);
      assert.deepEqual(await tab.errors(), []);
      await tab.context.close();

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
        assert.ok(t.boxed && t.overflowX === 'auto', `table.${t.cls} sits in a box of its own that scrolls (${JSON.stringify(t)})`);
        assert.ok(t.left >= 0 && t.right <= width, `table.${t.cls}'s box lies within the viewport (${JSON.stringify(t)})`);
        if (width === 1280) assert.ok(t.scrollWidth <= t.clientWidth, `table.${t.cls} fits its box at 1,280 px (${JSON.stringify(t)})`);
      }
      // At 390 px the wide tables do scroll in their boxes: the test measures boxes that overflow, not empty ones.
      if (width === 390) assert.ok(m.tables.some((t) => t.cls === 'summary' && t.scrollWidth > t.clientWidth));

      // Charts: the fallback rates, per group tail, CDF and Δ %, three daily series and three cumulative looks.
      assert.equal(m.charts.length, 1 + 3 * groups + 3 + 3);
      assert.deepEqual(m.charts.filter((c) => c.cls.startsWith('daily-chart')).map((c) => c.points), Array(3).fill(WIDE_DAYS));
      for (const c of m.charts) {
        const what = `svg.${c.cls.split(' ')[0]} ${JSON.stringify(c)}`;
        assert.ok(c.left >= 0 && c.right <= width, `${what} lies within the viewport`);
        assert.ok(Math.abs(c.width - c.column) <= 1, `${what} fills its column`);
        assert.ok(c.texts > 0 && c.smallestText >= MIN_CHART_TEXT_PX, `${what}: text at least ${MIN_CHART_TEXT_PX} px`);
        assert.deepEqual(c.outside, [], `${what}: every label inside the chart`);
      }
      // Three charts a row on a laptop; one, the phone's whole width, on a phone.
      const plotWidths = m.charts.filter((c) => !c.cls.startsWith('fallback')).map((c) => c.width);
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
