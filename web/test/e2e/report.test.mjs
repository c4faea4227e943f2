// The HTML report in real Chromium: written by the report command's code from a synthetic database (through the WASM
// statistics), opened from file://, it renders without errors or any network request, and its plots carry data.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import Database from 'better-sqlite3';
import { CHROMIUM_PATH, openPage } from '../../devstack/chromium.mjs';
import { stateDir } from '../../devstack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { writeSyntheticDb } from '../../devstack/syntheticBeacons.mjs';

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
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the HTML report renders from file:// with no console error and no request beyond the page itself', async () => {
  const url = pathToFileURL(htmlPath).href;
  const tab = await openPage(browser, null);
  const requests = [];
  tab.page.on('request', (r) => requests.push(r.url()));
  await tab.page.setViewportSize({ width: 1200, height: 900 });
  await tab.page.goto(url, { waitUntil: 'load' });
  assert.deepEqual(requests, [url]);
  assert.deepEqual(await tab.errors(), []);
  assert.equal(await tab.page.title(), 'h3probe report');

  // One section per group: overall plus the regions of the synthetic mix, each with both CDFs drawn from many points.
  const sections = await tab.page.$$eval('section.group', (els) => els.map((el) => ({
    name: el.dataset.group,
    cdf: Object.fromEntries([...el.querySelectorAll('svg.cdf-chart path.cdf')].map((p) => [p.dataset.arm,
      (p.getAttribute('d').match(/[ML]-?\d/g) ?? []).length])),
    ciBars: el.querySelectorAll('svg.delta-chart g.ci-bar line').length,
    points: el.querySelectorAll('svg.delta-chart circle.delta-point').length,
    tableRows: el.querySelectorAll('table.arms tbody tr').length,
  })));
  assert.equal(sections[0].name, 'overall');
  assert.deepEqual(sections.map((s) => s.name).slice(1, 4), ['North America', 'Europe', 'Asia']);
  for (const s of sections) {
    assert.ok(s.cdf.h2 >= 100 && s.cdf.h3 >= 100, `${s.name}: CDF paths with data points for both protocols (${JSON.stringify(s.cdf)})`);
    assert.equal(s.points, 5, `${s.name}: a Δ point per percentile`);
    assert.equal(s.tableRows, 5, `${s.name}: the table has p50..p99`);
  }
  // Intervals need enough runs: the overall group and the big regions have one bar (3 lines) per percentile.
  for (const s of sections.slice(0, 3)) assert.equal(s.ciBars, 15, `${s.name}: CI bars`);

  const fallbackBars = await tab.page.$$eval('svg.fallback-chart rect.fallback-bar', (els) => els.length);
  assert.equal(fallbackBars, sections.length);
  const summaryRows = await tab.page.$$eval('table.summary tbody tr', (els) => els.length);
  assert.equal(summaryRows, sections.length);

  fs.mkdirSync(stateDir, { recursive: true });
  // The top (regions side by side, fallback rates, the overall plots) at a readable size, and the whole page beside it.
  await tab.page.screenshot({ path: path.join(stateDir, 'report.png'), clip: { x: 0, y: 0, width: 1200, height: 1500 }, fullPage: true });
  await tab.page.screenshot({ path: path.join(stateDir, 'report-full.png'), fullPage: true });
  assert.deepEqual(await tab.errors(), []);
  await tab.context.close();
});

test('the text table printed with it has every group and marks significant differences', () => {
  assert.match(made.text, /^== overall: 3,000 runs/m);
  assert.match(made.text, /^== North America:/m);
  assert.match(made.text, /^p95 .*\*$/m);
  assert.match(made.text, /^by region/m);
});
