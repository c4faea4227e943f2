// `h3probe doctor --browser chromium|firefox`: one page load as a user's browser makes it. The browser opens the page
// itself (the real URL, the page's own scripts and config), does --search, and the page's own module runs as it would
// for a sampled user; the beacon that load sends is caught on its way out (the browser's request interception answers
// it 204, so it never reaches the collector and no report counts it) and read: a load_error names the reason and the
// module's own error text, a complete run the protocol of every request. The module files the page requested are
// handed back, for the module checks to check those rather than a guess.
import * as browsers from './browsers.mjs';
import * as chromium from './chromium.mjs';
import * as firefox from './firefox.mjs';
import { LOAD_ERROR_FIXES, troubleshootingLink } from './loadErrorFixes.mjs';
import { doSearch, searchText } from './search.mjs';

// How long the load may take from the search to its beacon: the remote config, the module's download and the run
// (3 pre-warm and 10 requests, each with its own timeout) fit well within it on any network a doctor runs from.
const BEACON_WAIT_MS = 30_000;

// Which of the page's requests are the probe's module files. A served one is told by what it holds: a string only the
// worker has (its load error tag) or only the Emscripten glue has, whatever name a bundler gave it (webpack names the
// worker js/347.js and the glue js/HASH.mjs; Turbopack starts a worker of its own that imports the real one). One that
// failed has no body to read: then by name (a bundler may add a hash to each).
const FILE_MARKERS = Object.freeze({ worker: 'glue_import', module: '_embind_register' });
const FILE_PATTERNS = Object.freeze({
  module: /h3probe_browser[^/]*\.m?js$/,
  wasm: /\.wasm$/,
  worker: /worker[^/]*\.js$/,
});

/**
 * The run. o: the doctor's options with spkis (the servers' key hashes, from the TLS checks); add(status, check,
 * detail, fix); get(url), the doctor's own request (for a script whose body the browser does not hand over). Resolves to { worker, module, wasm }: each the URL of that module file as the page requested it, or
 * undefined (no run, or the page never requested it).
 */
export async function browserRun(o, add, spkis, get) {
  const label = `${o.browser} run`;
  let drivers;
  try {
    drivers = { ...browsers, ...chromium, ...firefox };
    await drivers.loadDriver();
  } catch (err) {
    add('SKIP', label, `the browser drivers cannot load (${err.code ?? err.message})`,
      'npm install puppeteer-core beside h3probe (or run doctor from a checkout after npm run deps), with Chromium or Firefox ESR installed');
    return {};
  }
  const missing = drivers.engineMissing(o.browser);
  if (missing) {
    add('SKIP', label, missing, 'install the browser, or leave out --browser');
    return {};
  }
  let launched;
  try {
    launched = await launch(o, drivers, spkis);
  } catch (err) {
    add('FAIL', label, `the browser did not start: ${err.message.split('\n')[0]}`, 'check the browser installation');
    return {};
  }
  try {
    const load = await loadPage(o, launched, drivers, get);
    judge(o, load, add, label);
    return load.files;
  } catch (err) {
    add('FAIL', label, err.message.split('\n')[0], `check that ${o.page.href} loads in ${o.browser}`);
    return {};
  } finally {
    await launched.close().catch(() => {});
  }
}

// A private CA (--ca): Chromium accepts the servers' keys by hash and must be told to use QUIC (it follows Alt-Svc only
// for public roots); Firefox accepts any certificate under automation and maps the h3 origin to h3 itself.
// --resolve and --connect-to: Chromium maps each host and port to its address (and port); Firefox takes one address
// for every name (doctorOptions() refuses the rest).
async function launch(o, drivers, spkis) {
  const h3Port = Number(o.h3.port || 443);
  const privateCa = Boolean(o.ca);
  const rules = [...(o.resolve ?? new Map())].map(([hostPort, { address, port }]) => (port
    ? `MAP ${hostPort} ${address.includes(':') ? `[${address}]` : address}:${port}` : `MAP ${hostPort.split(':')[0]} ${address}`));
  const stackLike = {
    hosts: { h3: o.h3.hostname }, ports: { h3: h3Port },
    chromiumArgs: ({ forceQuic, extra = [] }) => drivers.chromiumArgs({ spki: spkis.join(','),
      quicOrigins: [`${o.h3.hostname}:${h3Port}`], forceQuic, extra, hostResolverRules: rules.length ? rules.join(', ') : null }),
  };
  if (o.browser === 'chromium') return drivers.launchEngine('chromium', stackLike, { forceQuic: privateCa });
  const browser = await drivers.launchFirefox(stackLike, { extraPrefs: {
    'network.dns.forceResolve': o.resolve?.size ? [...o.resolve.values()][0].address : '',
    ...(privateCa ? {} : { 'network.http.http3.alt-svc-mapping-for-testing': '' }) } });
  return { engine: 'firefox', browser, close: () => browser.close() };
}

/**
 * Opens the page in a fresh context, searches, and waits for the load's beacon. Resolves to { beacons: [text],
 * requests: [{url, status, failure}], errors: [text], files }.
 */
async function loadPage(o, launched, drivers, get) {
  const beacons = [];
  const requests = [];
  const workers = [];
  const isBeacon = (url) => { try { return new URL(url).href === o.collector.href; } catch { return false; } };
  const caught = (body) => beacons.push(String(body ?? ''));
  // The beacon is held and answered 204 in the browser, from the page and from its dedicated Worker alike (the worker
  // sends it with a keepalive fetch; the page, a run on the main thread or a load_error, with sendBeacon).
  const tab = await drivers.openTab(launched);
  const { page } = tab;
  const raw = page.puppeteer;
  if (launched.engine === 'chromium') {
    // Only the beacon's URL, by the whole browser's Fetch domain: puppeteer's request interception holds each request
    // of the page's Worker until it has paired it with its network event, and the run's own requests then time out
    // (tried: 3 of 10 in a load, the load 14 s instead of 2).
    const cdp = await launched.browser.target().createCDPSession();
    cdp.on('Fetch.requestPaused', ({ requestId, request }) => {
      if (request.method === 'POST') {
        caught(request.postDataEntries?.map((e) => Buffer.from(e.bytes ?? '', 'base64').toString()).join('') ?? request.postData);
      }
      void cdp.send('Fetch.fulfillRequest', { requestId, responseCode: 204,
        responseHeaders: [{ name: 'access-control-allow-origin', value: '*' }] }).catch(() => {});
    });
    await cdp.send('Fetch.enable', { patterns: [{ urlPattern: o.collector.href.replace(/[*?\\]/g, '\\$&') }] });
  } else {
    // Over WebDriver BiDi, puppeteer's request interception (its requests are the Worker's too); the body is fetched
    // on demand.
    await raw.setRequestInterception(true);
    raw.on('request', (req) => {
      if (!isBeacon(req.url())) return void req.continue().catch(() => {});
      void (async () => {
        if (req.method() === 'POST') caught(await req.fetchPostData().catch(() => ''));
        await req.respond({ status: 204, headers: { 'access-control-allow-origin': '*' }, body: '' });
      })().catch(() => {});
    });
  }
  raw.on('response', (r) => requests.push({ url: r.url(), status: r.status(), text: () => r.text() }));
  raw.on('requestfailed', (r) => requests.push({ url: r.url(), status: 0, failure: r.failure()?.errorText ?? 'failed' }));
  raw.on('workercreated', (w) => workers.push(w.url()));
  // A page sampled at 1 % would run the probe in one doctor run of a hundred: the gate's sampling draw (its one
  // crypto.getRandomValues of a single Uint32, before anything is downloaded) reads 0 here, so that this load is
  // sampled unless the rate is 0 or the kill switch is on, as for the users the rate lets in. Nothing else changes.
  await page.addInitScript(() => {
    const draw = crypto.getRandomValues.bind(crypto);
    crypto.getRandomValues = (array) => (array instanceof Uint32Array && array.length === 1 ? (array[0] = 0, array) : draw(array));
  });
  await page.goto(o.page.href);
  await doSearch(page, o.search);
  for (const deadline = Date.now() + BEACON_WAIT_MS; beacons.length === 0 && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pageErrors = (await tab.errors().catch(() => [])).map((e) => e.text ?? String(e));
  return { beacons, requests, errors: pageErrors, files: await requestedFiles(workers, requests, get) };
}

/**
 * The module files among a load's requests: { worker, module, wasm }, each a URL or undefined. Each is, in this order:
 * a script served whole that holds the file's marker; a request named like the file that failed (the file the page
 * could not get, rather than a bundler's loader of it that was served); the Worker the page started (the worker
 * only); any request named like the file. A body the browser does not hand over (Chromium keeps a worker's
 * responses from its page's context) is fetched again by get(url) (→ { status, body }), when given.
 */
export async function requestedFiles(workers, requests, get) {
  const script = (r) => r.status === 200 && r.text && /\.m?js$/.test(new URL(r.url).pathname);
  const bodies = new Map();
  const refetch = (url) => (get ? get(new URL(url)).then((res) => (res.status === 200 ? res.body : ''), () => '') : '');
  for (const r of requests.filter(script)) if (!bodies.has(r.url)) bodies.set(r.url, await r.text().catch(() => refetch(r.url)));
  const named = (kind, urls) => urls.find((u) => FILE_PATTERNS[kind].test(new URL(u).pathname));
  const failed = requests.filter((r) => r.status === 0 || r.status >= 400).map((r) => r.url);
  const find = (kind) => [...bodies].find(([, body]) => FILE_MARKERS[kind] && body.includes(FILE_MARKERS[kind]))?.[0]
    ?? named(kind, failed) ?? (kind === 'worker' ? workers[0] : undefined) ?? named(kind, requests.map((r) => r.url));
  return Object.fromEntries(['worker', 'module', 'wasm'].map((k) => [k, find(k) ? new URL(find(k)) : undefined]));
}

// The run's check line from what the load sent: a load_error FAILs with its reason, the module's error text and the
// requests that failed; a run over the wrong protocols FAILs or WARNs as before.
function judge(o, { beacons, requests, errors, files }, add, label) {
  const origins = [o.h2.origin, o.h3.origin];
  // Each URL once, by its HTTP status where it had one (a 404 is also reported as a failed load, net::ERR_FAILED).
  const failed = new Map();
  for (const r of requests.filter((x) => (x.status === 0 || x.status >= 400) && !origins.includes(new URL(x.url).origin))) {
    if (!failed.has(r.url) || r.status) failed.set(r.url, `${r.url} ${r.status || r.failure}`);
  }
  const failedText = failed.size ? `; requests that failed: ${[...failed.values()].slice(0, 4).join(', ')}` : '';
  if (beacons.length === 0) {
    const loaded = Object.values(files).some(Boolean);
    const errorsText = errors.length ? `; page errors: ${errors.slice(0, 3).join(' | ')}` : '';
    add('FAIL', label, loaded
      ? `the page loaded the probe${searchText(o.search)}, but no beacon to ${o.collector.href} came in ${BEACON_WAIT_MS / 1000} s${failedText}${errorsText}`
      : `the page never loaded the probe${searchText(o.search)}: no beacon in ${BEACON_WAIT_MS / 1000} s${failedText}${errorsText}`,
    loaded ? 'check that --collector is the beaconUrl the page\'s configure() names, and the page\'s Content-Security-Policy (connect-src)'
      : 'give --search as a user searches (the page must call searchCompleted()), and check that its config leaves sampling on (sampleRate above 0, enabled)');
    return;
  }
  let beacon;
  try {
    beacon = JSON.parse(beacons[0]);
  } catch {
    add('FAIL', label, `the beacon is not JSON: ${beacons[0].slice(0, 120)}`, 'the page\'s module is not h3probe\'s, or a proxy rewrote it');
    return;
  }
  if (beacon.outcome === 'load_error') {
    const fix = LOAD_ERROR_FIXES[beacon.reason] ?? 'see the error';
    add('FAIL', label, `load_error ${beacon.reason}: ${beacon.error || '(no error text)'}${failedText}`,
      `${fix} (${troubleshootingLink(beacon.reason)})`);
    return;
  }
  const samples = beacon.samples ?? [];
  const seen = (phase) => samples.filter((x) => x.phase === phase).map((x) => `${x.result}/${x.protocol || '-'}`);
  const tally = (list) => Object.entries(list.reduce((acc, k) => ({ ...acc, [k]: (acc[k] ?? 0) + 1 }), {})).map(([k, n]) => `${k}×${n}`).join(' ');
  const control = seen('control');
  const treatment = seen('treatment');
  const context = beacon.context ?? {};
  const where = context.run_context === 'main' ? `; on the main thread (worker_fallback ${context.worker_fallback})` : '';
  const runErrors = [beacon.error, ...(beacon.errors ?? [])].filter(Boolean);
  const detail = `control ${tally(control) || 'none'}; treatment ${tally(treatment) || 'none'}${where}` +
    `${runErrors.length ? `; errors: ${runErrors.join('; ')}` : ''}`;
  if (beacon.outcome !== 'complete') {
    add('FAIL', label, `outcome ${beacon.outcome}; ${detail}`, 'read the errors: the origins\' CORS, the page\'s CSP (connect-src for both origins)');
  } else if (!control.length || !control.every((x) => x === 'ok/h2') || !treatment.length) {
    add('FAIL', label, detail, 'the control arm must be ok/h2 and the treatment arm ok/h3: see the failing checks above');
  } else if (treatment.every((x) => x === 'ok/h3')) {
    if (where && !['disabled', 'no_worker'].includes(context.worker_fallback)) {
      add('WARN', label, detail, 'the run left its Worker: docs/beacon.md, "Where the core ran", names the fix for each worker_fallback');
    } else {
      add('PASS', label, detail);
    }
  } else if (treatment.some((x) => x === 'ok/h2')) {
    add('WARN', label, detail, 'the treatment arm fell back to HTTP/2: UDP 443 blocked on this network, or the browser has not learned Alt-Svc (a private CA without --ca)');
  } else {
    add('FAIL', label, detail, 'the control arm must be ok/h2 and the treatment arm ok/h3: see the failing checks above');
  }
}
