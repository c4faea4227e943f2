// The screenshots in docs/report.md: the top of the widest realistic report (wideReports.mjs, by region) in headless
// Chromium at a phone's 390 px and a laptop's 1,280 px, as docs/report-390.png and docs/report-1280.png.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH } from '../cli/chromium.mjs';
import { repoRoot, stateDir } from '../devstack/paths.mjs';
import { writeWideReports } from '../devstack/wideReports.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

// Width, and how much of the page's top: the verdict, the table by region, the fallback rates and the daily charts.
const SHOTS = [{ width: 390, height: 2400 }, { width: 1280, height: 1900 }];

const dir = path.join(stateDir, 'wide-reports');
fs.mkdirSync(dir, { recursive: true });
const reports = await writeWideReports(dir, await loadH3probeNode());
const { htmlPath } = reports.find((r) => r.name === 'region');
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
try {
  for (const { width, height } of SHOTS) {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
    const out = path.join(repoRoot, 'docs', `report-${width}.png`);
    await page.screenshot({ path: out, fullPage: true, clip: { x: 0, y: 0, width, height } });
    console.log(`${path.relative(repoRoot, out)}: ${width} × ${height} px, ${Math.round(fs.statSync(out).size / 1024)} KB`);
    await page.close();
  }
} finally {
  await browser.close();
}
