// Unit tests of `h3probe doctor` (web/cli/doctor.mjs): its options, its test beacon against the core's decoder, its fixes, and its
// table, the module checks against a fake server (which files, and a file found nowhere not failed), and how the browser run
// tells the module files among a load's requests. The checks themselves run against a real deployment in
// web/test/e2e/kit.test.mjs (each fault injected there) and on each bundler's page in web/test/e2e/package.test.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { CHECKS, DOCTOR_ID, doctorBeacon, doctorOptions, formatChecks, NO_PAGE_LOAD } from '../../cli/doctor.mjs';
import { requestedFiles } from '../../cli/doctorBrowser.mjs';
import { LOAD_ERROR_FIXES } from '../../cli/loadErrorFixes.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { MODULE_FILES } from '../../server/originRules.mjs';

const BIN = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bin/h3probe.mjs');
const good = { page: 'https://app.example.com/search/', h2: 'https://h2.example.com', h3: 'https://h3.example.com', collector: 'https://beacon.example.com/beacon' };

test('the test beacon is one the collector accepts: a run of no request, outcome error, under the doctor\'s own ids', async () => {
  const core = await loadH3probeNode();
  const decoded = core.decodeBeacon(JSON.stringify(doctorBeacon(core.version)));
  assert.equal(decoded.ok, true, decoded.error);
  assert.equal(decoded.run.run_id, DOCTOR_ID);
  assert.equal(decoded.run.config_id, DOCTOR_ID);
  assert.equal(decoded.run.outcome, 'error');
  assert.deepEqual(decoded.requests, []);
});

test('options: defaults next to the page and the beacon URL, and every problem at once', () => {
  const { options, problems } = doctorOptions(good);
  assert.deepEqual(problems, []);
  assert.equal(options.module.href, 'https://app.example.com/search/h3probe_browser.mjs');
  assert.equal(options.wasm.href, 'https://app.example.com/search/h3probe_browser.wasm');
  assert.equal(options.worker.href, 'https://app.example.com/search/worker.js');
  assert.equal(doctorOptions({ ...good, worker: 'https://app.example.com/assets/worker-a1b2.js' }).options.worker.href,
    'https://app.example.com/assets/worker-a1b2.js');
  assert.equal(doctorOptions({ ...good, module: 'https://app.example.com/x/glue.mjs' }).options.worker.href, 'https://app.example.com/x/worker.js');
  assert.equal(options.healthz.href, 'https://beacon.example.com/healthz');
  assert.equal(doctorOptions({ ...good, module: 'https://cdn.example.com/x/glue.mjs' }).options.wasm.href, 'https://cdn.example.com/x/h3probe_browser.wasm');
  const bad = doctorOptions({ h2: 'https://h2.example.com/noop', h3: 'http://h3.example.com', browser: 'safari', timeout: 'soon' }).problems.join('\n');
  for (const p of [/--page is required/, /--collector is required/, /--h2: .* must be an origin/, /--h3: .* must be https/, /--browser must be chromium or firefox/, /--timeout/]) {
    assert.match(bad, p);
  }
  assert.match(doctorOptions({ ...good, h3: good.h2 }).problems.join('\n'), /different origins/);
  assert.match(doctorOptions({ ...good, ca: '/nonexistent/ca.pem' }).problems.join('\n'), /--ca: ENOENT/);
  assert.equal(options.payloadBytes, 0);
  assert.equal(doctorOptions({ ...good, 'payload-bytes': '131072' }).options.payloadBytes, 131072);
  for (const bad of ['128k', '-1', '1048577']) {
    assert.match(doctorOptions({ ...good, 'payload-bytes': bad }).problems.join('\n'), /--payload-bytes: .* is not a number of bytes from 0 to 1048576/);
  }
  // --resolve HOST:PORT:ADDRESS, curl's form: by host (any case) and port, IPv4 or bracketed IPv6.
  const resolved = doctorOptions({ ...good, resolve: ['H2.example.com:443:203.0.113.2', 'h3.example.com:8443:[2001:db8::3]'] });
  assert.deepEqual(resolved.problems, []);
  assert.deepEqual([...resolved.options.resolve], [['h2.example.com:443', { address: '203.0.113.2' }], ['h3.example.com:8443', { address: '2001:db8::3' }]]);
  // --connect-to HOST:PORT:ADDRESS:PORT2, curl's form: another port too (a trial's loopback listeners); Chromium only.
  const moved = doctorOptions({ ...good, 'connect-to': ['h2.example.com:8443:127.0.0.1:40123', 'h3.example.com:443:[::1]:40124'] });
  assert.deepEqual(moved.problems, []);
  assert.deepEqual([...moved.options.resolve], [['h2.example.com:8443', { address: '127.0.0.1', port: 40123 }], ['h3.example.com:443', { address: '::1', port: 40124 }]]);
  for (const wrong of ['h2.example.com:443:127.0.0.1', 'h2.example.com:443:127.0.0.1:0', 'h2.example.com:443:localhost:80']) {
    assert.match(doctorOptions({ ...good, 'connect-to': [wrong] }).problems.join('\n'), /--connect-to: .* is not HOST:PORT:ADDRESS:PORT/, wrong);
  }
  assert.match(doctorOptions({ ...good, browser: 'firefox', 'connect-to': ['a.example:443:127.0.0.1:4000'] }).problems.join('\n'), /--connect-to with --browser firefox/);
  // --search is the browser run's: as h3probe trial reads it, and only with --browser.
  assert.deepEqual(doctorOptions({ ...good, browser: 'chromium', search: 'submit #q quarterly report' }).options.search,
    { verb: 'submit', selector: '#q', text: 'quarterly report' });
  assert.match(doctorOptions({ ...good, search: 'click #go' }).problems.join('\n'), /--search is for the page load of --browser/);
  assert.match(doctorOptions({ ...good, browser: 'chromium', search: 'tap #go' }).problems.join('\n'), /--search must be "click SELECTOR"/);
  for (const wrong of ['h2.example.com:443', 'h2.example.com:443:not-an-ip', 'h2.example.com:99999:203.0.113.2']) {
    assert.match(doctorOptions({ ...good, resolve: [wrong] }).problems.join('\n'), /--resolve: .* is not HOST:PORT:ADDRESS/, wrong);
  }
  assert.match(doctorOptions({ ...good, browser: 'firefox', resolve: ['a.example:443:203.0.113.2', 'b.example:443:203.0.113.3'] }).problems.join('\n'),
    /Firefox maps every host name to one address/);
});

test('the table: one line per check, the fix under failing and skipped lines only, and a count', () => {
  const text = formatChecks([
    { status: 'PASS', check: 'a', detail: 'fine', fix: 'never shown' },
    { status: 'FAIL', check: 'bb', detail: 'broken', fix: 'mend it' },
    { status: 'SKIP', check: 'c', detail: 'not here', fix: 'look elsewhere' },
  ]);
  assert.match(text, /^PASS  a   fine\nFAIL  bb  broken\n {6}fix: mend it\nSKIP  c   not here\n {6}fix: look elsewhere\n/);
  assert.doesNotMatch(text, /never shown/);
  assert.match(text, /1 passed, 1 failed, 0 warnings, 1 skipped$/);
});

test('h3probe doctor: bad options exit 2 with every problem; --help exits 0', () => {
  const bad = spawnSync(process.execPath, [BIN, 'doctor', '--page', 'app.example.com']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr.toString(), /^h3probe doctor: --page: "app.example.com" is not a URL\nh3probe doctor: --h2 is required/);
  const help = spawnSync(process.execPath, [BIN, 'doctor', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout.toString(), /--collector URL/);
  assert.match(spawnSync(process.execPath, [BIN, '--help']).stdout.toString(), /doctor +checks a deployment/);
});

test("the fix for a glue or .wasm served with the wrong type names the load_error beacon the page sends, by the core's reason", async () => {
  const core = await loadH3probeNode();
  const reasons = core.schema().loadErrorReasons.map((r) => r.name);
  for (const rule of [MODULE_FILES.glue, MODULE_FILES.wasm]) {
    assert.ok(reasons.includes(rule.loadError), `${rule.file}: ${rule.loadError} is one of ${reasons.join(', ')}`);
    assert.match(rule.why, new RegExp(`load_error beacon, reason ${rule.loadError}$`), rule.file);
    assert.doesNotMatch(rule.why, /no beacon/, rule.file);
  }
});

test('the browser run\'s fix for a load_error: one for each reason of the core\'s list, and no other', async () => {
  const core = await loadH3probeNode();
  assert.deepEqual(Object.keys(LOAD_ERROR_FIXES).sort(), core.schema().loadErrorReasons.map((r) => r.name).sort());
  for (const [reason, fix] of Object.entries(LOAD_ERROR_FIXES)) assert.ok(fix.length > 20, reason);
});

test('the checks are a table of small functions, run in its order', () => {
  assert.ok(CHECKS.length >= 6);
  for (const [name, check] of CHECKS) {
    assert.equal(typeof name, 'string');
    assert.equal(typeof check, 'function', name);
    assert.ok(check.toString().split('\n').length <= 60, `${name}: a check of at most 60 lines`);
  }
});

test('without --browser the table ends saying that no page load was checked, and what loads one', () => {
  // Names that resolve nowhere here: every check fails fast, and the table is printed all the same.
  const r = spawnSync(process.execPath, [BIN, 'doctor', '--page', good.page, '--h2', good.h2, '--h3', good.h3, '--collector', good.collector]);
  assert.equal(r.status, 1);
  assert.ok(r.stdout.toString().trimEnd().endsWith(NO_PAGE_LOAD), r.stdout.toString());
  assert.match(NO_PAGE_LOAD, /--browser chromium/);
});

// A fake server for the module checks: path → { status, type, body }; every other path 404.
const served = (files) => async (u) => {
  const f = files[new URL(u).pathname];
  return f ? { status: f.status ?? 200, headers: { 'content-type': f.type ?? 'text/javascript' }, body: f.body ?? '', size: (f.body ?? '').length }
    : { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found', size: 9 };
};
const moduleCheck = CHECKS.find(([name]) => name === 'the module files')[1];
async function moduleLines(files, { requested = {} } = {}) {
  const { options } = doctorOptions(good);
  const lines = [];
  await moduleCheck({ o: options, add: (status, check, detail, fix) => lines.push({ status, check, detail, fix }),
    get: served(files), pageOrigin: options.page.origin, requested });
  return lines;
}

// What webpack 5 leaves of the gate in a bundle: the worker under a bare chunk number, and of the package's names only
// the gate's `new URL("worker.js", moduleUrl)`, relative to the config key, not to the bundle.
const WEBPACK_MAIN = 'o=n?new Worker(new URL("worker.js",n),{type:"module"}):new Worker(new URL(r.p+r.u(347),r.b),{type:"module"})';

test('without --browser, a module file the page does not lead to and that is not beside it is not checked (SKIP), never a FAIL', async () => {
  const lines = await moduleLines({ '/search/': { type: 'text/html', body: '<script src="/js/main.js"></script>' }, '/js/main.js': { body: WEBPACK_MAIN } });
  assert.deepEqual(lines.map((l) => l.status), ['SKIP', 'SKIP', 'SKIP'], JSON.stringify(lines, null, 1));
  assert.match(lines[1].detail, /^not checked: the page does not say where its worker is, and https:\/\/app\.example\.com\/search\/worker\.js answered 404$/);
  assert.match(lines[1].fix, /--browser chromium/);
  // The bare name was not taken for a file beside the bundle (js/worker.js), where no bundler put it.
  assert.ok(!lines.some((l) => l.detail.includes('/js/worker.js')), JSON.stringify(lines));
});

test('without --browser, a worker the page\'s scripts name by ./ that answers 404 still FAILs (esbuild\'s bundle without its copy)', async () => {
  const lines = await moduleLines({ '/search/': { type: 'text/html', body: '<script type="module" src="/js/app.js"></script>' },
    '/js/app.js': { body: 'new Worker(new URL("./worker.js",import.meta.url),{type:"module"});new URL("worker.js",n)' } });
  const worker = lines.find((l) => l.check === 'module worker worker.js');
  assert.equal(worker.status, 'FAIL', JSON.stringify(lines, null, 1));
  assert.match(worker.detail, /^GET https:\/\/app\.example\.com\/js\/worker\.js: 404 \(as the page's scripts name it\)$/);
  assert.match(worker.fix, /no run starts .* load_error, worker_import/);
});

test('the browser run\'s module files: told by what a served script holds, a failed request by its name first, else the Worker', async () => {
  const base = 'https://app.example.com/';
  const ok = (url, body) => ({ url: base + url, status: 200, text: async () => body });
  // webpack: the worker js/347.js and the glue js/HASH.mjs, told by their contents (the glue's read again by get:
  // Chromium does not hand over the body of a worker's request).
  const webpack = await requestedFiles([`${base}js/347.js`], [ok('js/main.js', WEBPACK_MAIN), ok('js/347.js', 'x.catch(failed("glue_import"))'),
    { url: `${base}js/942e.mjs`, status: 200, text: () => Promise.reject(new Error('No resource with given identifier found')) },
    { url: `${base}js/b96a.wasm`, status: 200 }], async (u) => ({ status: 200, body: u.pathname === '/js/942e.mjs' ? 'function _embind_register_class(){}' : '' }));
  assert.deepEqual(Object.fromEntries(Object.entries(webpack).map(([k, u]) => [k, u?.pathname])),
    { worker: '/js/347.js', module: '/js/942e.mjs', wasm: '/js/b96a.wasm' });
  // Turbopack, its module files removed: its own worker loader is served, the real worker 404s; that one is checked.
  const turbopack = await requestedFiles([`${base}_next/static/chunks/turbopack-worker-1h.js`], [ok('_next/static/chunks/turbopack-worker-1h.js', 'importScripts()'),
    { url: `${base}_next/static/media/worker.15q.js`, status: 404, text: async () => 'not found' }]);
  assert.equal(turbopack.worker.pathname, '/_next/static/media/worker.15q.js');
  assert.equal(turbopack.module, undefined);
  // A worker under a name that says nothing, which failed to load: the Worker the page started.
  assert.equal((await requestedFiles([`${base}js/347.js`], [{ url: `${base}js/347.js`, status: 404 }])).worker.pathname, '/js/347.js');
});
