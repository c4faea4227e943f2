// The collector's live report (--report-token-file) over real HTTP, a real SQLite store and the WASM core: no routes
// without a token file; 401 for a missing or wrong token, the same body whatever the store holds; with the token the
// text, JSON and HTML of `h3probe report --html --json` on the same store; no CORS allowance for another origin; the
// token form's cookie; the cache and its window (a test clock, no sleeping); the rate limit apart from the beacons';
// bad queries 400; a failing report 500 while beacons are still taken; the service's flags. (The limits
// docs/collector.md states, without the build: collectorReportLimits.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { REPORT_HEADERS, REPORT_ROUTES, parseReportQuery } from '../../server/collectorReport.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { syntheticBeacons, writeSyntheticDb } from '../../synthetic/syntheticBeacons.mjs';
import { assertSameReport } from './sameReport.mjs';
import { httpRequest } from './httpRequest.mjs';

const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-livereport-'));
const TOKEN = 'a3f9c2e17b5d48e09c6f1a2b3c4d5e6f';
const tokenFile = path.join(tmp, 'report-token');
fs.writeFileSync(tokenFile, `${TOKEN}\n`);
const dbPath = path.join(tmp, 'synthetic.sqlite');
const cli = path.join(repoRoot, 'web/bin/h3probe.mjs');
const running = [];
after(async () => {
  for (const c of running) await c.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

before(async () => {
  await writeSyntheticDb(dbPath, core, { runs: 600, seed: 11, days: 3 });
});

const request = (port, path, options = {}) => httpRequest(port, { path, ...options });
const bearer = (token = TOKEN) => ({ Authorization: `Bearer ${token}` });
/** n beacons' texts with run ids of their own (the synthetic store's are bench-…). */
const newBeacons = (n, prefix) => [...syntheticBeacons({ runs: n, seed: 99 })]
  .map(({ beacon }, i) => JSON.stringify({ ...beacon, run_id: `${prefix}-${i}`, page_load_id: `${prefix}-pl-${i}` }));

/** A collector on a copy of a store (or the store itself), with the live report unless report is null. */
async function collectorOn(file, report = {}, extra = {}) {
  const store = openStore(file, core);
  const c = await startCollector({ store, core, ...extra,
    report: report && { token: TOKEN, store: `sqlite:${file}`, maxAge: 300, ...report } });
  const closeAll = c.close;
  c.close = async () => { await closeAll(); store.close(); };
  running.push(c);
  return c;
}
function copyOf(file, name) {
  const to = path.join(tmp, name);
  fs.copyFileSync(file, to);
  return to;
}

/** `h3probe report --html --json` on a store with flags: {text, html, json} as the CLI wrote them. */
function cliReport(file, flags = [], tag = 'cli') {
  const html = path.join(tmp, `${tag}.html`);
  const json = path.join(tmp, `${tag}.json`);
  const out = execFileSync(process.execPath, [cli, 'report', '--db', file, '--html', html, '--json', json, ...flags], { encoding: 'utf8' });
  // stdout: the text (console.log's newline ends it), an empty line, the files' lines.
  return { text: out.slice(0, out.lastIndexOf('\nHTML report: ')), html: fs.readFileSync(html, 'utf8'), json: JSON.parse(fs.readFileSync(json, 'utf8')) };
}
async function served(port, query = '', headers = bearer()) {
  const q = query ? `?${query}` : '';
  const [text, html, json] = await Promise.all(['/report.txt', '/report', '/report.json'].map((r) => request(port, `${r}${q}`, { headers })));
  for (const r of [text, html, json]) assert.equal(r.status, 200, r.body);
  return { text: text.body, html: html.body, json: JSON.parse(json.body), headers: { text: text.headers, html: html.headers, json: json.headers } };
}

describe('the live report on SQLite', () => {
  test('without a token file the report routes do not exist', { timeout: 60_000 }, async () => {
    const c = await collectorOn(dbPath, null);
    for (const route of Object.keys(REPORT_ROUTES)) {
      assert.equal((await request(c.port, route, { headers: bearer() })).status, 404, route);
    }
  });

  test('with the token: the text, JSON and HTML equal `h3probe report --html --json` on the same store; the headers', { timeout: 120_000 }, async () => {
    const c = await collectorOn(dbPath);
    const got = await served(c.port);
    assert.match(got.text, /^h3probe report: network_ms, 600 stored runs/);
    assert.match(got.text, /^verdict /m);
    assertSameReport({ sqlite: cliReport(dbPath), clickhouse: got });
    assert.equal(got.headers.html['content-type'], 'text/html; charset=utf-8');
    assert.equal(got.headers.json['content-type'], 'application/json; charset=utf-8');
    for (const h of Object.values(got.headers)) {
      for (const [name, value] of Object.entries(REPORT_HEADERS)) assert.equal(h[name.toLowerCase()], value, name);
      assert.ok(!Object.keys(h).some((k) => k.startsWith('access-control-')), 'no CORS header');
    }
    assert.match(got.headers.html['content-security-policy'], /frame-ancestors 'none'/);
    // A query: the same as the same flags.
    const query = await served(c.port, 'by=browser&since=2022-12-16&payload-bytes=0');
    assert.match(query.text, /^== browser chromium: \d+ runs/m);
    assertSameReport({ sqlite: cliReport(dbPath, ['--by', 'browser', '--since', '2022-12-16', '--payload-bytes', '0'], 'cli-q'), clickhouse: query });
  });

  test('a missing or wrong token: 401 with one body, the same whatever the store holds', { timeout: 60_000 }, async () => {
    const full = await collectorOn(dbPath, { rateLimit: 0 });
    const emptyFile = path.join(tmp, 'empty.sqlite');
    openStore(emptyFile, core).close();
    const empty = await collectorOn(emptyFile, { rateLimit: 0 });
    const refusals = [{}, bearer('wrong'), bearer(`${TOKEN.slice(0, -1)}0`), bearer(`${TOKEN}0`), { Authorization: TOKEN },
      { Cookie: 'h3probe_report=guess' }];
    for (const route of Object.keys(REPORT_ROUTES)) {
      const bodies = new Set();
      for (const c of [full, empty]) {
        for (const headers of refusals) {
          const r = await request(c.port, route, { headers });
          assert.equal(r.status, 401, `${route} ${JSON.stringify(headers)}`);
          assert.equal(r.headers['www-authenticate'], 'Bearer realm="h3probe report"');
          assert.equal(r.headers['cache-control'], 'no-store');
          assert.equal(r.headers['referrer-policy'], 'no-referrer');
          bodies.add(r.body);
        }
      }
      assert.equal(bodies.size, 1, `${route}: one 401 body`);
      assert.doesNotMatch([...bodies][0], /runs|North America|Europe|verdict|network_ms/);
    }
    // With the token, the empty store's report is the CLI's: no runs, not an error.
    const none = await request(empty.port, '/report.txt', { headers: bearer() });
    assert.equal(none.status, 200);
    assert.match(none.body, /^h3probe report: network_ms, 0 stored runs/);
  });

  test('from another origin: no CORS allowance, even where beacons are allowed from anywhere; no preflight', { timeout: 60_000 }, async () => {
    const c = await collectorOn(dbPath, {}, { allowedOrigins: ['*'] });
    const evil = { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'cors' };
    for (const route of Object.keys(REPORT_ROUTES)) {
      const r = await request(c.port, route, { headers: { ...bearer(), ...evil } });
      assert.ok(!Object.keys(r.headers).some((k) => k.startsWith('access-control-')), `${route}: ${JSON.stringify(r.headers)}`);
      assert.equal(r.headers['cross-origin-resource-policy'], 'same-origin');
      const pre = await request(c.port, route, { method: 'OPTIONS', headers: { ...evil, 'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization' } });
      assert.equal(pre.status, 405);
      assert.ok(!Object.keys(pre.headers).some((k) => k.startsWith('access-control-')), JSON.stringify(pre.headers));
    }
    // The beacon path keeps its own CORS.
    const beacon = await request(c.port, '/beacon', { method: 'OPTIONS', headers: evil });
    assert.equal(beacon.headers['access-control-allow-origin'], '*');
  });

  test('the token form: the right token sets a cookie that opens /report and /report.json; another site cannot post it', { timeout: 60_000 }, async () => {
    const c = await collectorOn(dbPath);
    const form = (token, headers = {}) => request(c.port, '/report?by=region', { method: 'POST', body: `token=${encodeURIComponent(token)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers } });
    const refused = await request(c.port, '/report');
    const wrong = await form('wrong-token-but-long-enough');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body, refused.body, 'the same page as a GET without the token');
    assert.equal(wrong.headers['set-cookie'], undefined);
    assert.match(refused.body, /<form method="post">/);
    const foreign = await form(TOKEN, { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers['set-cookie'], undefined);
    const noFetchMetadata = await form(TOKEN, { Origin: 'https://evil.example' });
    assert.equal(noFetchMetadata.status, 403);
    const ok = await form(TOKEN, { 'Sec-Fetch-Site': 'same-origin', Origin: `http://127.0.0.1:${c.port}` });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.location, 'report?by=region');
    assert.equal(ok.headers['set-cookie'].length, 2);
    for (const [i, p] of ['/report', '/report.json'].entries()) {
      assert.match(ok.headers['set-cookie'][i], new RegExp(`^h3probe_report=[\\w-]+; Path=${p.replace('.', '\\.')}; Max-Age=\\d+; HttpOnly; Secure; SameSite=Strict$`));
    }
    assert.ok(!ok.headers['set-cookie'][0].includes(TOKEN), 'the cookie is not the token itself');
    const cookie = ok.headers['set-cookie'][0].split(';')[0];
    const page = await request(c.port, '/report?by=region', { headers: { Cookie: cookie } });
    assert.equal(page.status, 200);
    assert.match(page.body, /<html/);
    assert.equal((await request(c.port, '/report.json', { headers: { Cookie: `other=1; ${cookie}` } })).status, 200);
  });

  test('bad queries: 400 with what was wrong', { timeout: 60_000 }, async () => {
    const c = await collectorOn(dbPath);
    const cases = [
      ['by=nothing', /^by must be one of region, browser.*got "nothing"$/],
      ['since=yesterday', /^since wants a date like \d{4}-\d\d-\d\d, got "yesterday"$/],
      ['payload-bytes=12x', /^payload-bytes must be a whole number from 0 \(the no-op\) to \d+, got "12x"$/],
      ['payload-bytes=99999999999', /^payload-bytes must be a whole number/],
      ['metric=tls_ms', /^unknown parameter "metric": the report takes by, since, payload-bytes$/],
      ['by=region&by=browser', /^parameter "by" given twice$/],
      [`token=${TOKEN}`, /^the token is never read from the URL/],
    ];
    for (const [query, message] of cases) {
      const r = await request(c.port, `/report.json?${query}`, { headers: bearer() });
      assert.equal(r.status, 400, query);
      assert.match(r.body.trim(), message);
      assert.equal(r.body.trim().split('\n').length, 1);
    }
    // Without the token a bad query is a 401 like any other.
    assert.equal((await request(c.port, '/report.json?by=nothing')).status, 401);
    // The ClickHouse store's groupings are its own.
    assert.match(parseReportQuery('by=browser', { kind: 'clickhouse', schema: core.schema() }).error, /^by must be one of region, day, network,/);
  });

  test('the cache: within reportMaxAge the same report even after new beacons; after it, recomputed; each query apart', { timeout: 120_000 }, async () => {
    let clock = 1_000_000;
    const file = copyOf(dbPath, 'cache.sqlite');
    const c = await collectorOn(file, { maxAge: 60, now: () => clock });
    const first = JSON.parse((await request(c.port, '/report.json', { headers: bearer() })).body);
    const byBrowser = JSON.parse((await request(c.port, '/report.json?by=browser', { headers: bearer() })).body);
    const runs = (j) => j.groups[0].runs;
    assert.equal(runs(first), 600);
    for (const body of newBeacons(5, 'late')) assert.equal((await request(c.port, '/beacon', { method: 'POST', body })).status, 204);
    await c.waitForRuns(605);
    clock += 59_000;
    const cached = JSON.parse((await request(c.port, '/report.json', { headers: bearer() })).body);
    assert.equal(cached.generatedAt, first.generatedAt, 'served from the cache');
    assert.equal(runs(cached), 600);
    const text = await request(c.port, '/report.txt', { headers: bearer() });
    assert.match(text.body, /^h3probe report: network_ms, 600 stored runs/, 'the text of the same computation');
    clock += 1_000;
    const fresh = JSON.parse((await request(c.port, '/report.json', { headers: bearer() })).body);
    assert.notEqual(fresh.generatedAt, first.generatedAt);
    assert.equal(runs(fresh), 605, 'recomputed: the new beacons are in');
    // The other query was cached on its own, at its own time: recomputed too now.
    const again = JSON.parse((await request(c.port, '/report.json?by=browser', { headers: bearer() })).body);
    assert.notEqual(again.generatedAt, byBrowser.generatedAt);
    assert.equal(runs(again), 605);
  });

  test('the report rate limit: per client network, loopback included, apart from the beacons\'', { timeout: 60_000 }, async () => {
    const file = copyOf(dbPath, 'rate.sqlite');
    const c = await collectorOn(file, { rateLimit: 0.001, rateBurst: 3 }, { rateLimit: 60, rateBurst: 2 });
    const from = (net) => ({ 'X-Forwarded-For': net });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await request(c.port, '/report.txt', { headers: { ...bearer(), ...from('203.0.113.7') } })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    const limited = await request(c.port, '/report.txt', { headers: from('203.0.113.8') });
    assert.equal(limited.status, 429, 'the same /24, and before the token is checked');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal((await request(c.port, '/report.txt', { headers: { ...bearer(), ...from('198.51.100.1') } })).status, 200, 'another network');
    // Loopback has its own bucket: its three, then refused.
    const local = [];
    for (let i = 0; i < 4; i++) local.push((await request(c.port, '/report.txt', { headers: bearer() })).status);
    assert.deepEqual(local, [200, 200, 200, 429]);
    // That network's beacons are still taken: their limit is another.
    const [body] = newBeacons(1, 'rl');
    assert.equal((await request(c.port, '/beacon', { method: 'POST', body, headers: from('203.0.113.7') })).status, 204);
  });

  test('a failing report answers 500 with its reason on one line; beacons are still taken', { timeout: 60_000 }, async () => {
    const bad = path.join(tmp, 'not-a-store.sqlite');
    fs.writeFileSync(bad, 'this is not a SQLite database, and not a store of this layout either'.repeat(100));
    const file = copyOf(dbPath, 'failing.sqlite');
    const c = await collectorOn(file, { store: `sqlite:${bad}` });
    for (const route of Object.keys(REPORT_ROUTES)) {
      const r = await request(c.port, route, { headers: bearer() });
      assert.equal(r.status, 500, route);
      assert.match(r.body, /^the report failed: .*not a database\n$/);
    }
    const [body] = newBeacons(1, 'fail');
    assert.equal((await request(c.port, '/beacon', { method: 'POST', body })).status, 204);
    assert.equal((await request(c.port, '/healthz')).status, 200);
  });
});

/** `h3probe collector` with args until its {listening} line: {port, lines, child, stop()}. */
async function service(args) {
  const child = spawn(process.execPath, [cli, 'collector', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const listening = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`collector exited ${code}: ${err}`)));
  });
  return { port: listening.port, listening, child, output: () => out + err,
    stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); }) };
}

describe('h3probe collector --report-token-file', () => {
  test('an unfit token file stops the service at start with exit code 2, never printing the token', { timeout: 60_000 }, () => {
    const short = path.join(tmp, 'short-token');
    fs.writeFileSync(short, 'shorty-secret\n');
    for (const [file, message] of [[short, /the token must be at least 16 printable ASCII characters/], [path.join(tmp, 'nope'), /no such file/]]) {
      let failed;
      try {
        execFileSync(process.execPath, [cli, 'collector', '--port', '0', '--db', path.join(tmp, 'unfit.sqlite'), '--report-token-file', file],
          { encoding: 'utf8', stdio: 'pipe' });
      } catch (e) {
        failed = e;
      }
      assert.equal(failed?.status, 2);
      assert.match(failed.stderr, message);
      assert.doesNotMatch(failed.stderr + failed.stdout, /shorty-secret/);
    }
  });

  test('the service: the report behind the token, cached, never the token in the log', { timeout: 120_000 }, async () => {
    const file = copyOf(dbPath, 'service.sqlite');
    const s = await service(['--db', file, '--report-token-file', tokenFile, '--report-max-age', '600']);
    try {
      assert.equal(s.listening.report, '/report (token required)');
      assert.equal((await request(s.port, '/report.txt')).status, 401);
      const a = await request(s.port, '/report.json', { headers: bearer() });
      const b = await request(s.port, '/report.json', { headers: bearer() });
      assert.equal(a.status, 200, a.body);
      assert.equal(JSON.parse(b.body).generatedAt, JSON.parse(a.body).generatedAt, 'served again from the cache');
      const text = await request(s.port, '/report.txt', { headers: bearer() });
      assert.match(text.body, /^h3probe report: network_ms, 600 stored runs/);
      assert.equal((await request(s.port, '/report.txt?by=x', { headers: bearer() })).status, 400);
    } finally {
      await s.stop();
    }
    assert.doesNotMatch(s.output(), new RegExp(TOKEN));
  });
});
