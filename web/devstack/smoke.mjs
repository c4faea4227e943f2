// Throwaway smoke run of the local stack in real Chromium: protocols per origin with/without forced QUIC, h3 off, TAO off, beacon storage.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startStack } from './stack.mjs';
import { launchBrowser, openPage } from '../cli/chromium.mjs';

const pageRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-smoke-page-'));
fs.writeFileSync(path.join(pageRoot, 'index.html'), '<!doctype html><link rel=icon href="data:,"><title>smoke</title><p>smoke</p>\n');

// Runs in the page: the probe's request pattern, then the Resource Timing entries of exactly those URLs.
async function probeInPage({ h2, h3 }) {
  const tag = Math.random().toString(36).slice(2, 8);
  const urls = [];
  const statuses = {};
  const get = async (base, label) => {
    const url = `${base}/noop?u=${label}-${tag}`;
    urls.push(url);
    const t0 = performance.now();
    try {
      const res = await fetch(url, { cache: 'no-store', credentials: 'omit' });
      await res.arrayBuffer();
      statuses[url] = `${res.status} in ${(performance.now() - t0).toFixed(1)} ms`;
    } catch (err) {
      statuses[url] = `fetch failed: ${err.message}`;
    }
  };
  await get(h3, 'prewarm0');
  await get(h3, 'prewarm1');
  await get(h2, 'prewarm2');
  await Promise.all([0, 1, 2, 3, 4].map((i) => get(h2, `control${i}`)));
  await Promise.all([0, 1, 2, 3, 4].map((i) => get(h3, `treatment${i}`)));
  const deadline = performance.now() + 2000;
  let entries = [];
  while (performance.now() < deadline) {
    entries = performance.getEntriesByType('resource').filter((e) => urls.includes(e.name));
    if (entries.length === urls.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return urls.map((url) => {
    const e = entries.find((x) => x.name === url);
    const f = (v) => (e ? +v.toFixed(1) : null);
    return {
      url, status: statuses[url], entry: Boolean(e), proto: e?.nextHopProtocol,
      total: e && f(e.responseEnd - e.fetchStart), connect: e && f(e.connectEnd - e.connectStart),
      tls: e && f(e.secureConnectionStart ? e.connectEnd - e.secureConnectionStart : 0),
      reqStart: e && f(e.requestStart), respStart: e && f(e.responseStart),
    };
  });
}

function headerOf(url, host, name, ca) {
  const u = new URL(url);
  return new Promise((resolve) => {
    https.get({ host: '127.0.0.1', port: u.port, path: '/noop', servername: host, ca, headers: { host: u.host } }, (res) => {
      res.resume();
      resolve(`${res.statusCode} ${name}=${res.headers[name] ?? '(none)'}`);
    }).on('error', (e) => resolve(`error ${e.message}`));
  });
}

async function scenario(title, stackOpts, { forceQuic = true, beacon = false, headers = false } = {}) {
  console.log(`\n=== ${title} (forceQuic=${forceQuic}) ===`);
  const stack = await startStack({ pageRoot, ...stackOpts });
  let browser;
  try {
    if (headers) {
      const ca = fs.readFileSync(stack.certPath);
      console.log('h2 origin', await headerOf(stack.urls.h2Origin, stack.hosts.h2, 'alt-svc', ca));
      console.log('h3 origin', await headerOf(stack.urls.h3Origin, stack.hosts.h3, 'alt-svc', ca));
    }
    browser = await launchBrowser(stack, { forceQuic });
    const { page, errors } = await openPage(browser, stack.urls.page);
    const rows = await page.evaluate(probeInPage, { h2: stack.urls.h2Origin, h3: stack.urls.h3Origin });
    for (const r of rows) {
      const origin = r.url.startsWith(stack.urls.h2Origin) ? 'h2-origin' : 'h3-origin';
      const label = new URL(r.url).searchParams.get('u').split('-')[0];
      const timing = r.entry ? `proto=${JSON.stringify(r.proto)} total=${r.total} connect=${r.connect} tls=${r.tls} requestStart=${r.reqStart} responseStart=${r.respStart}` : 'NO ENTRY';
      console.log(`${origin.padEnd(9)} ${label.padEnd(10)} ${r.status.padEnd(18)} ${timing}`);
    }
    if (beacon) {
      const runId = `smoke-${Date.now()}`;
      const body = JSON.stringify({ schema: 'h3probe/1', run_id: runId, page_load_id: 'p', config_id: 'default', module_version: '0.0.0',
        order: 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '', summary: { diff_median_ms: 0 },
        samples: rows.map((r, idx) => ({ phase: 'control', idx, origin: 'h2', result: 'ok', http_status: 204, protocol: r.proto ?? '', reused: null, network_ms: r.total })) });
      const queued = await page.evaluate((b) => navigator.sendBeacon('/beacon', b), body);
      await stack.collector.waitForRuns(1, 5000);
      const run = stack.store.runsSince()[0];
      console.log(`sendBeacon queued=${queued}; stored run ${run.run_id === runId ? 'matches' : 'DIFFERS'}: region=${run.region}, ` +
        `${stack.store.requestsFor(runId).length} request rows; collector metrics ${JSON.stringify(stack.collector.metrics)}`);
    }
    console.log('page errors:', JSON.stringify(await errors()));
  } finally {
    await browser?.close();
    await stack.stop();
  }
}

await scenario('default stack', {}, { beacon: true, headers: true });
await scenario('default stack', {}, { forceQuic: false });
await scenario('h3:false (no UDP listener, no Alt-Svc)', { h3: false }, { headers: true });
await scenario('h3:false (no UDP listener, no Alt-Svc)', { h3: false }, { forceQuic: false });
await scenario('tao:false', { tao: false });
await scenario('noopStatus:500, noopDelayMs:200', { noopStatus: 500, noopDelayMs: 200 });
await scenario('h2Down:true', { h2Down: true });

fs.rmSync(pageRoot, { recursive: true, force: true });
let left = '';
try {
  left = execFileSync('pgrep', ['-a', 'caddy'], { encoding: 'utf8' }).trim();
} catch {
  // pgrep exits 1 when nothing matches
}
console.log(`\ncaddy processes left: ${left || 'none'}`);
