// The collector's live report in real Chromium: /report without the token shows the token form and nothing of the
// data; the token entered there opens the report, whose verdict is the JSON report's; a page of another origin can read
// neither /report.json with the token in a header nor with the browser's cookie, nor frame /report.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openTab } from '../../cli/browsers.mjs';
import { launchChromium } from '../../cli/chromium.mjs';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { writeSyntheticDb } from '../../synthetic/syntheticBeacons.mjs';

const TOKEN = 'e2e-live-report-token-5f0c9a7d31b2';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-livereport-e2e-'));
let browser;
let store;
let collector;
let other;
let base;

before(async () => {
  const core = await loadH3probeNode();
  const file = path.join(tmp, 'synthetic.sqlite');
  await writeSyntheticDb(file, core, { runs: 800, seed: 21, days: 2 });
  store = openStore(file, core);
  collector = await startCollector({ store, core, report: { token: TOKEN, store: `sqlite:${file}`, maxAge: 300, rateLimit: 0 } });
  base = `http://127.0.0.1:${collector.port}`;
  // Another origin (another port): a page that tries to read the report, and one that frames it.
  other = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(req.url === '/frame' ? `<!doctype html><iframe id="f" src="${base}/report"></iframe>` : '<!doctype html><p>elsewhere</p>');
  });
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  browser = await launchChromium(['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']);
});

after(async () => {
  await browser?.close();
  await collector?.close();
  store?.close();
  await new Promise((resolve) => (other ? other.close(resolve) : resolve()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

// A GET of url with the tab's browser context's cookies (as the browser holds them; the page itself may fetch nothing:
// its Content-Security-Policy).
async function getWithCookies(tab, url) {
  const cookies = await tab.context.cookies();
  return fetch(url, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
}

test('without the token /report is refused and shows nothing of the data; with it, the report and its verdict', { timeout: 120_000 }, async () => {
  const tab = await openTab(browser);
  const page = tab.page.puppeteer;
  try {
    const refused = await tab.page.goto(`${base}/report`);
    assert.equal(refused.status(), 401);
    const shown = await tab.page.evaluate(() => document.body.innerText);
    assert.match(shown, /This report needs its token/);
    assert.doesNotMatch(shown, /runs|verdict|North America|HTTP\/3 (faster|slower)/i);
    assert.equal(await tab.page.locator('p.verdict').count(), 0);

    await tab.page.fill('input[name=token]', TOKEN);
    const [opened] = await Promise.all([page.waitForNavigation(), tab.page.click('button[type=submit]')]);
    assert.equal(opened.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/report');
    assert.equal(await page.title(), 'h3probe report');
    // The verdict on the page is the JSON report's, fetched with the browser context's cookies.
    const answer = await getWithCookies(tab, `${base}/report.json`);
    assert.equal(answer.status, 200);
    const json = await answer.json();
    assert.match(json.verdict.text, /^verdict \(800 runs/);
    const firstLine = json.verdict.text.split('\n')[0];
    assert.ok((await tab.page.evaluate(() => document.body.innerText)).includes(firstLine), firstLine);
    assert.deepEqual(await tab.uncaught(), []);
  } finally {
    await tab.context.close();
  }
  // A fresh browser context has no cookie: refused again.
  const fresh = await openTab(browser);
  try {
    assert.equal((await fresh.page.goto(`${base}/report.json`)).status(), 401);
  } finally {
    await fresh.context.close();
  }
});

test('a page of another origin cannot read the report, with the token or with the cookie, nor frame it', { timeout: 120_000 }, async () => {
  const tab = await openTab(browser);
  const page = tab.page.puppeteer;
  try {
    // The browser holds the cookie for the collector (the form, as a person would).
    await tab.page.goto(`${base}/report`);
    await tab.page.fill('input[name=token]', TOKEN);
    await Promise.all([page.waitForNavigation(), tab.page.click('button[type=submit]')]);
    assert.equal((await getWithCookies(tab, `${base}/report.json`)).status, 200);

    const elsewhere = `http://127.0.0.1:${other.address().port}`;
    await tab.page.goto(`${elsewhere}/`);
    const tries = await tab.page.evaluate(async ({ url, token }) => {
      const attempt = (init) => fetch(url, init).then(async (r) => `read ${r.status}: ${(await r.text()).slice(0, 40)}`, (e) => `refused: ${e.name}`);
      return {
        header: await attempt({ headers: { Authorization: `Bearer ${token}` } }),
        cookie: await attempt({ credentials: 'include' }),
        plain: await attempt({}),
      };
    }, { url: `${base}/report.json`, token: TOKEN });
    assert.deepEqual(tries, { header: 'refused: TypeError', cookie: 'refused: TypeError', plain: 'refused: TypeError' });

    // Framed by another origin: the browser refuses to show any page of these routes there (frame-ancestors 'none'), not
    // even the token form (the cookie, SameSite=Strict, is not sent to a frame of another site).
    await tab.page.goto(`${elsewhere}/frame`);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame, 'the frame is there');
    const framed = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    assert.doesNotMatch(framed, /needs its token|verdict|runs/);
  } finally {
    await tab.context.close();
  }
});
