// The screenshots in docs/report.md: the first screen of the widest realistic report (wideReports.mjs, by region) in
// headless Chromium at a phone's 390 × 844 px and a laptop's 1,280 × 800 px (the verdict, its cautions and the forest
// plot), as docs/report-390.png and docs/report-1280.png, each cut to a 256-colour palette by pngquant (a third of the
// bytes, the text as sharp).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from '../cli/chromium.mjs';
import { repoRoot, stateDir } from '../stack/paths.mjs';
import { writeWideReports } from '../synthetic/wideReports.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

// The viewports the layout test holds the answer to (web/test/e2e/reportLayout.test.mjs).
const SHOTS = [{ width: 390, height: 844 }, { width: 1280, height: 800 }];

const dir = path.join(stateDir, 'wide-reports');
fs.mkdirSync(dir, { recursive: true });
const reports = await writeWideReports(dir, await loadH3probeNode());
const { htmlPath } = reports.find((r) => r.name === 'region');
const browser = await launchChromium(['--headless=new', '--no-sandbox', '--disable-gpu']);
try {
  for (const { width, height } of SHOTS) {
    const page = await browser.newPage();
    await page.setViewport({ width, height });
    await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
    const out = path.join(repoRoot, 'docs', `report-${width}.png`);
    await page.screenshot({ path: out }); // the viewport: the first screen
    execFileSync('pngquant', ['--quality', '60-85', '--speed', '1', '--force', '--output', out, out]);
    console.log(`${path.relative(repoRoot, out)}: ${width} × ${height} px, ${Math.round(fs.statSync(out).size / 1024)} KB`);
    await page.close();
  }
} finally {
  await browser.close();
}
