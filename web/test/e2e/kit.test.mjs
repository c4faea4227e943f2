// The production kit end to end, offline: one network namespace holds four addresses (page, HTTP/2 origin, HTTP/3
// origin, collector) whose real-looking names resolve through the namespace's own hosts file (`ip netns exec` mounts
// /etc/netns/NAME/hosts over /etc/hosts), so neither public DNS nor Chromium's --host-resolver-rules is involved.
// `h3probe origins` writes the Caddyfile (with --tls CERT,KEY from a local CA: ACME needs the public internet), the
// test adds a page site, `h3probe collector` stores the beacon, and headless Chromium in the namespace runs one search.
// The page site also serves a page bundled from the packed tarball installed in a fresh project; `h3probe doctor` of
// that install must pass against the deployment, and name each fault injected into it (FAULTS).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import Database from 'better-sqlite3';
import { spkiHash } from '../../cli/certificate.mjs';
import { chromiumArgs } from '../../stack/stack.mjs';
import { startCaddy as startStackCaddy } from '../../stack/caddy.mjs';
import { awaitListeners } from '../../../lab/awaitListeners.mjs';
import { CHROMIUM_PATH, launchChromium } from '../../cli/chromium.mjs';
import { ENGINES, engineMissing, openTab } from '../../cli/browsers.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { docRecipes, followRecipe, html, packAndInstall } from './tarball.mjs';
import { DOCTOR_ID } from '../../cli/doctor.mjs';
import { recordWorkerEntries, workerEntries } from './workerEntries.mjs';

const { serverProtocols: SERVER_PROTOCOLS, serverTimingProtocol } = (await loadH3probeNode()).schema();

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const BIN = path.join(ROOT, 'web/bin/h3probe.mjs');
const NS = 'h3kit-e2e'; // not the lab's h3lab-*: the two tests never touch each other's namespaces
const NETNS_ETC = `/etc/netns/${NS}`;
// 198.18.0.0/15 is set aside for benchmarks; these addresses exist only inside the test's namespace.
const SITES = Object.freeze({
  page: { host: 'app.h3kit.test', address: '198.18.9.1' },
  h2: { host: 'h2.h3kit.test', address: '198.18.9.2' },
  h3: { host: 'h3.h3kit.test', address: '198.18.9.3' },
  collector: { host: 'beacon.h3kit.test', address: '198.18.9.4' },
});
const COLLECTOR_PORT = 8787; // on the namespace's own loopback
// node -e HTTP2_HEAD ORIGIN PATH PAGE_ORIGIN CA_FILE: prints the response headers of one HTTP/2 GET as JSON.
const HTTP2_HEAD = `
const [origin, p, pageOrigin, caFile] = process.argv.slice(1);
const s = require('node:http2').connect(origin, { ca: require('node:fs').readFileSync(caFile) });
const r = s.request({ ':path': p, origin: pageOrigin });
r.on('response', (h) => { console.log(JSON.stringify(h)); r.close(); s.close(); });
r.on('error', (e) => { console.error(e.message); process.exit(1); });
r.end();`;

/**
 * The page's module, in one place: the page (web/page/search.js) imports /h3probe/h3probe.js. `routes`: the page site's
 * Caddyfile lines serving it (the package's built files, web/dist, at /h3probe/: the run finds the glue and .wasm next
 * to itself); `required`: a file that must exist before the test can run.
 */
function pageModule() {
  const dist = path.join(ROOT, 'web/dist');
  return {
    required: path.join(dist, 'h3probe_browser.wasm'),
    routes: [`handle_path /h3probe/* {\n\troot * "${dist}"\n\tfile_server\n}`],
  };
}

function unavailableReason() {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux (network namespaces)';
  for (const [what, cmd] of [['caddy', ['caddy', 'version']], ['ip', ['ip', '-V']], ['openssl', ['openssl', 'version']]]) {
    try { execFileSync(cmd[0], cmd.slice(1), { stdio: 'ignore' }); } catch { return `${what} not installed`; }
  }
  if (!fs.existsSync(CHROMIUM_PATH)) return `no Chromium at ${CHROMIUM_PATH}`;
  const { required } = pageModule();
  if (!fs.existsSync(required)) return `no built page module: ${required} is missing (npm run build)`;
  return null;
}

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** Synchronous, so it also runs in an 'exit' handler: kills what is left in the namespace, removes it and its /etc/netns folder. */
function removeKitNetwork() {
  let existing = [];
  try { existing = ip('netns', 'list').split('\n').map((l) => l.split(' ')[0]); } catch { /* no ip */ }
  if (existing.includes(NS)) {
    try {
      for (const pid of ip('netns', 'pids', NS).split('\n').map(Number).filter((p) => p > 1)) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
    } catch { /* no pids */ }
    try { ip('netns', 'del', NS); } catch { /* checked by the teardown test */ }
  }
  fs.rmSync(NETNS_ETC, { recursive: true, force: true });
}

function createKitNetwork() {
  removeKitNetwork();
  // The hosts file must exist before the first `ip netns exec`: that is when it is mounted over /etc/hosts.
  fs.mkdirSync(NETNS_ETC, { recursive: true });
  const lines = ['127.0.0.1 localhost', ...Object.values(SITES).map((s) => `${s.address} ${s.host}`)];
  fs.writeFileSync(path.join(NETNS_ETC, 'hosts'), `${lines.join('\n')}\n`);
  ip('netns', 'add', NS);
  ip('-n', NS, 'link', 'set', 'lo', 'up');
  for (const s of Object.values(SITES)) ip('-n', NS, 'addr', 'add', `${s.address}/32`, 'dev', 'lo');
}

/** A local CA and one server certificate for the four names, signed by it (ACME cannot run offline). */
function makeCertificates(dir) {
  const f = (name) => path.join(dir, name);
  const ossl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=h3kit test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  ossl('req', ...ec, '-keyout', f('key.pem'), '-out', f('server.csr'), '-subj', '/CN=h3kit.test');
  const sans = Object.values(SITES).map((s) => `DNS:${s.host}`).join(',');
  fs.writeFileSync(f('ext.cnf'), `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\n`);
  ossl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-out', f('cert.pem'), '-days', '2', '-extfile', f('ext.cnf'));
  return { caPath: f('ca.pem'), certPath: f('cert.pem'), keyPath: f('key.pem'),
    spki: spkiHash(new X509Certificate(fs.readFileSync(f('cert.pem')))) };
}

/** Starts a process inside the namespace; resolves once `ready(stdoutSoFar)` is true. */
function startInNamespace(argv, { env = {}, logPath, ready = () => true, timeoutMs = 15000 } = {}) {
  const log = fs.openSync(logPath, 'a');
  const child = spawn('ip', ['netns', 'exec', NS, ...argv], { stdio: ['ignore', 'pipe', log], env: { ...process.env, ...env } });
  fs.closeSync(log);
  let out = '';
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv[0]} not ready in ${timeoutMs} ms: ${out}`)), timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      fs.appendFileSync(logPath, d);
      if (ready(out)) { clearTimeout(timer); resolve(); }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${argv[0]} exited (${code ?? signal}): ${out}\n${tail(path.dirname(logPath), path.basename(logPath))}`));
    });
    if (ready(out)) { clearTimeout(timer); resolve(); }
  });
  started.catch(() => {});
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child, started, output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The tarball installed into a fresh project under dir and a page bundled by docs/embedding.md's esbuild recipe (ESM):
 * { project, out (the bundle's folder, with an index.html beside it that loads it) }.
 */
function buildTarballApp(dir) {
  const { project } = packAndInstall(dir);
  const app = followRecipe(project, docRecipes()['esbuild-esm'], fs.mkdtempSync(path.join(dir, 'app-')));
  const out = path.join(app, 'public', 'js');
  fs.writeFileSync(path.join(out, 'index.html'), html('app.js'));
  return { project, out };
}

/** text with the site block of `address` (as the generator writes it: `ADDRESS {` ... `}`) passed through edit. */
function editSite(text, address, edit) {
  const start = text.indexOf(`\n${address} {\n`) + 1;
  const end = text.indexOf('\n}\n', start) + 3;
  assert.ok(start > 0 && end > start, `site ${address} in the Caddyfile`);
  const edited = edit(text.slice(start, end));
  assert.notEqual(edited, text.slice(start, end), `the fault changed the site ${address}`);
  return text.slice(0, start) + edited + text.slice(end);
}

// Each fault a deployment can have, injected into the kit: `caddy` edits the deployed Caddyfile, `collector` restarts the
// collector with these options (null: not at all); `names`: the doctor checks that must FAIL, `detail`: what one says,
// `fix` (optional): what its fix must say.
const FAULTS = Object.freeze([
  { fault: 'the .wasm served as application/octet-stream', names: [/^module wasm /], detail: /application\/octet-stream/,
    caddy: (t) => t.replace('handle_path /app/* {\n', 'handle_path /app/* {\n\t\theader /h3probe_browser.wasm Content-Type application/octet-stream\n') },
  { fault: 'the glue served as text/plain', names: [/^module glue /], detail: /text\/plain/,
    caddy: (t) => t.replace('handle_path /app/* {\n', 'handle_path /app/* {\n\t\theader /h3probe_browser.mjs Content-Type text/plain\n') },
  { fault: 'worker.js missing next to the bundle (every run would fall back to the main thread)', names: [/^module worker /], detail: /404/,
    fix: /docs\/embedding\.md/, caddy: (t) => t.replace('handle_path /app/* {\n', 'handle_path /app/* {\n\t\trespond /worker.js 404\n') },
  { fault: 'worker.js served as text/plain', names: [/^module worker /], detail: /text\/plain/, fix: /main thread/,
    caddy: (t) => t.replace('handle_path /app/* {\n', 'handle_path /app/* {\n\t\theader /worker.js Content-Type text/plain\n') },
  { fault: 'no Timing-Allow-Origin on the HTTP/3 origin', names: [/^HTTP\/3 origin \/noop Timing-Allow-Origin$/], detail: /missing/,
    caddy: (t) => editSite(t, `https://${SITES.h3.host}`, (b) => b.replace(/\n\t\theader Timing-Allow-Origin [^\n]+/, '')) },
  { fault: 'no Cache-Control: no-store on the HTTP/2 origin', names: [/^HTTP\/2 origin \/noop Cache-Control$/], detail: /missing/,
    caddy: (t) => editSite(t, `https://${SITES.h2.host}`, (b) => b.replace(/\n\t\theader Cache-Control [^\n]+/, '')) },
  { fault: 'Alt-Svc: h3 on the HTTP/2 origin', names: [/^HTTP\/2 origin offers no HTTP\/3$/], detail: /h3=/,
    caddy: (t) => editSite(t, `https://${SITES.h2.host}`, (b) => b.replace('\thandle @noop {\n', '\thandle @noop {\n\t\theader Alt-Svc `h3=":443"; ma=86400`\n')) },
  { fault: 'the collector down', names: [/^collector \/healthz$/, /^collector CORS preflight$/, /^collector test beacon$/], detail: /502|ECONNREFUSED/,
    collector: null },
  { fault: 'the collector without CORS for the page', names: [/^collector CORS preflight$/, /^collector test beacon$/], detail: /403|none/,
    collector: ['--allowed-origins', 'https://elsewhere.h3kit.test'] },
]);

const unavailable = unavailableReason();

describe('production kit (h3probe origins + collector, Caddy and Chromium in a network namespace)',
  { skip: unavailable ? `kit e2e unavailable: ${unavailable}` : false }, () => {
    let runDir;
    let certs;
    let caddy;
    let collector;
    let browser;
    let caddyPid;
    let appDir;
    let projectDir; // the app's project, with the package installed from the tarball
    let deployed; // the Caddyfile text as deployed: generated, plus the page site
    const onExit = () => removeKitNetwork();
    const dbPath = () => path.join(runDir, 'beacons.sqlite');
    const caddyfilePath = () => path.join(runDir, 'Caddyfile');
    // Runs stored besides doctor's own test beacon.
    const countRuns = () => {
      const db = new Database(dbPath(), { readonly: true, fileMustExist: true });
      try { return db.prepare('SELECT count(*) FROM runs WHERE run_id != ?').pluck().get(DOCTOR_ID); } finally { db.close(); }
    };

    function startCollector(extra = []) {
      return startInNamespace([process.execPath, BIN, 'collector', '--port', String(COLLECTOR_PORT), '--host', '127.0.0.1',
        '--db', dbPath(), ...extra], { logPath: path.join(runDir, 'collector.log'), ready: (out) => out.includes('"listening"') });
    }

    /** (Re)starts Caddy with this Caddyfile text; resolves once every site answers over TLS and the h3 origin holds UDP 443. */
    async function startCaddy(text, alsoReady = Promise.resolve()) {
      await caddy?.stop();
      await alsoReady;
      // The stack's startCaddy, inside the namespace; each site on its own address, checked from inside it.
      caddy = await startStackCaddy({
        text, runDir, commandPrefix: ['ip', 'netns', 'exec', NS], certPath: certs.caPath, ready: {},
        waitReady: () => Promise.all(Object.entries(SITES).map(([key, s]) => awaitListeners({ ns: NS, address: s.address, timeoutMs: 15000,
          ready: { certPath: certs.caPath, udpPorts: key === 'h3' ? [443] : [],
            sites: [{ host: s.host, port: 443, path: key === 'collector' ? '/beacon' : key === 'page' ? '/' : '/noop' }] } })
          .catch((err) => { throw new Error(`${s.host} (${s.address}) not ready: ${err.message}\n${tail(runDir, 'caddy.log')}`); }))),
      });
      caddyPid = caddy.pid;
    }

    /**
     * `h3probe doctor` of the installed package (or of this checkout: bin), run inside the namespace against the
     * deployment: { status, checks, failed }.
     */
    function doctor(extra = [], bin = path.join(projectDir, 'node_modules', 'h3probe', 'web', 'bin', 'h3probe.mjs')) {
      const { page, h2, h3, collector: beacon } = SITES;
      const r = spawnSync('ip', ['netns', 'exec', NS, process.execPath, bin,
        'doctor', '--page', `https://${page.host}/app/`, '--h2', `https://${h2.host}`, '--h3', `https://${h3.host}`,
        '--collector', `https://${beacon.host}/beacon`, '--ca', certs.caPath, '--json', ...extra], { encoding: 'utf8', timeout: 60000 });
      let checks;
      try { checks = JSON.parse(r.stdout); } catch { throw new Error(`doctor printed no JSON (status ${r.status}):\n${r.stdout}\n${r.stderr}`); }
      return { status: r.status, checks, failed: checks.filter((c) => c.status === 'FAIL') };
    }

    before(async () => {
      process.on('exit', onExit);
      runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-kit-'));
      createKitNetwork();
      certs = makeCertificates(runDir);

      // The user's app: the package installed from its tarball into a fresh project, a page bundled by the esbuild
      // recipe of docs/embedding.md (the worker, glue and .wasm copied next to the bundle). Served at
      // https://app.h3kit.test/app/.
      ({ project: projectDir, out: appDir } = buildTarballApp(runDir));

      // The production Caddyfile, as a user would generate it, plus a page site (the user's app in production).
      const { h2, h3, collector: beacon, page } = SITES;
      execFileSync(process.execPath, [BIN, 'origins', '--h2', h2.host, '--h3', h3.host,
        '--h2-bind', h2.address, '--h3-bind', h3.address, '--page-origin', `https://${page.host}`,
        '--collector', beacon.host, '--collector-upstream', `127.0.0.1:${COLLECTOR_PORT}`, '--collector-bind', beacon.address,
        '--tls', `${certs.certPath},${certs.keyPath}`, '--out', caddyfilePath()]);
      const indent = (block) => block.split('\n').map((l) => `\t${l}`).join('\n');
      fs.appendFileSync(caddyfilePath(), [
        '', `https://${page.host} {`, `\tbind ${page.address}`, `\ttls "${certs.certPath}" "${certs.keyPath}"`,
        ...pageModule().routes.map(indent),
        indent(`handle_path /app/* {\n\troot * "${appDir}"\n\tfile_server\n}`),
        indent(`handle {\n\troot * "${path.join(ROOT, 'web/page')}"\n\tfile_server\n}`), '}', '',
      ].join('\n'));
      deployed = fs.readFileSync(caddyfilePath(), 'utf8');

      collector = startCollector();
      await startCaddy(deployed, collector.started);

      // puppeteer talks to Chromium over fds 3 and 4, which `ip netns exec` passes through to the browser.
      const wrapper = path.join(runDir, 'chromium-in-netns.sh');
      fs.writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${NS} ${CHROMIUM_PATH} "$@"\n`, { mode: 0o755 });
      // No host mapping: the names resolve through the namespace's hosts file. The SPKI pin accepts the local CA's
      // server certificate; QUIC is forced for the HTTP/3 origin because Chromium follows Alt-Svc only for
      // certificates chaining to a public root.
      browser = await launchChromium(chromiumArgs({ spki: certs.spki, address: null, quicOrigins: [`${h3.host}:443`] }),
        { executablePath: wrapper });
    });

    after(async () => {
      process.off('exit', onExit);
      await browser?.close().catch(() => {});
      await caddy?.stop().catch(() => {});
      await collector?.stop().catch(() => {});
      removeKitNetwork();
      if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
    });

    test('the origins answer /noop by the rules; the h2 origin offers no HTTP/3, the h3 origin announces it', () => {
      // An HTTP/2 request from inside the namespace (the name resolves through its hosts file), as the page's origin.
      const head = (site) => JSON.parse(ip('netns', 'exec', NS, process.execPath, '-e', HTTP2_HEAD, `https://${site.host}`,
        '/noop?x=1', `https://${SITES.page.host}`, certs.caPath));
      const h2 = head(SITES.h2);
      const h3 = head(SITES.h3);
      for (const h of [h2, h3]) {
        assert.equal(h[':status'], 204);
        assert.equal(h['access-control-allow-origin'], `https://${SITES.page.host}`);
        assert.equal(h['timing-allow-origin'], `https://${SITES.page.host}`);
        assert.equal(h['cache-control'], 'no-store');
        assert.equal(h['server-timing'], 'proto;desc="HTTP/2.0"');
      }
      assert.equal(h2['alt-svc'], undefined, 'the HTTP/2 origin announces no HTTP/3');
      assert.match(h3['alt-svc'], /^h3=":443"/);
      const udp = ip('netns', 'exec', NS, 'ss', '-Hlnu');
      assert.match(udp, /198\.18\.9\.3:443/);
      assert.doesNotMatch(udp, /198\.18\.9\.2:443/, 'no UDP socket on the HTTP/2 origin\'s address');
    });

    test('one search: one stored run, control over h2, treatment over h3, Server-Timing matching nextHopProtocol', async () => {
      const params = new URLSearchParams({
        h2Origin: `https://${SITES.h2.host}`, h3Origin: `https://${SITES.h3.host}`,
        beaconUrl: `https://${SITES.collector.host}/beacon`, configId: 'kit-e2e',
      });
      const { page, context } = await openTab(browser);
      await page.addInitScript(recordWorkerEntries); // the probe's requests are its Worker's, in the worker's timeline
      await page.goto(`https://${SITES.page.host}/?${params}`);
      await page.fill('#query', 'quarterly report');
      await page.press('#query', 'Enter');
      await page.waitForFunction(() => window.h3probeStatus().beacon, null, { timeout: 20000 });
      const { pageLoadId, beacon } = await page.evaluate(() => window.h3probeStatus());
      const entries = (await workerEntries(page)).filter((e) => new URL(e.name).pathname === '/noop')
        .map((e) => ({ host: new URL(e.name).host, protocol: e.nextHopProtocol, serverTiming: e.serverTiming }));
      await context.close();

      // The collector (behind Caddy at beacon.h3kit.test) stored exactly this run.
      const db = new Database(dbPath(), { readonly: true, fileMustExist: true });
      let run;
      try {
        const deadline = Date.now() + 10000;
        while (!(run = db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(pageLoadId)) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(run, `the collector stored the run (collector log: ${tail(runDir, 'collector.log')})`);
        assert.equal(db.prepare('SELECT count(*) FROM runs').pluck().get(), 1);
        assert.equal(run.config_id, 'kit-e2e');
        const measured = db.prepare("SELECT phase, protocol, result, count(*) AS n FROM requests WHERE run_id = ? AND phase != 'prewarm' " +
          'GROUP BY phase, protocol, result ORDER BY phase').all(run.run_id);
        assert.deepEqual(measured.map((r) => [r.phase, r.protocol, r.result, r.n]), [['control', 'h2', 'ok', 5], ['treatment', 'h3', 'ok', 5]]);
      } finally {
        db.close();
      }
      assert.equal(JSON.parse(beacon).outcome, 'complete');

      // Resource Timing: every /noop entry (pre-warm included) carries the server's view of the protocol, and it is
      // the protocol the browser reports.
      const byHost = {};
      for (const e of entries) (byHost[e.host] ??= []).push(e);
      assert.ok(byHost[SITES.h2.host]?.length >= 6 && byHost[SITES.h3.host]?.length >= 7, JSON.stringify(entries.map((e) => e.host)));
      for (const e of entries) {
        const proto = e.serverTiming.find((s) => s.name === serverTimingProtocol);
        assert.ok(proto, `${e.host}: serverTiming visible (Timing-Allow-Origin)`);
        assert.equal(SERVER_PROTOCOLS[proto.description], e.protocol, `${e.host}: server saw ${proto.description}, browser used ${e.protocol}`);
      }
      const seen = (host) => [...new Set(byHost[host].map((e) => `${e.serverTiming[0].description} ${e.protocol}`))];
      assert.deepEqual(seen(SITES.h2.host), ['HTTP/2.0 h2']);
      assert.deepEqual(seen(SITES.h3.host), ['HTTP/3.0 h3']);
    });

    test('the page bundled from the installed tarball: one complete run over h2 and h3, and h3probe doctor passes', async () => {
      const { page, h2, h3, collector: beacon } = SITES;
      const params = new URLSearchParams({ h2Origin: `https://${h2.host}`, h3Origin: `https://${h3.host}`,
        beaconUrl: `https://${beacon.host}/beacon`, configId: 'kit-tarball' });
      // The tab stays open until the collector has stored the run: sendBeacon only queues the request, and closing the
      // context at once can drop it before it leaves (seen once in CI).
      const { page: tab, context } = await openTab(browser);
      const stored = new Database(dbPath(), { readonly: true, fileMustExist: true });
      try {
        await tab.goto(`https://${page.host}/app/?${params}`);
        const { outcome, result } = await tab.evaluate(() => window.runOnce());
        assert.equal(outcome, 'started', JSON.stringify(result));
        assert.equal(result.run, 'done');
        assert.equal(result.beaconQueued, true);
        assert.deepEqual(result.errors, []);
        let rows = [];
        for (const deadline = Date.now() + 10000; rows.length === 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
          rows = stored.prepare("SELECT q.phase, q.protocol, q.result, count(*) AS n FROM requests q JOIN runs r USING (run_id) " +
            "WHERE r.page_load_id = ? AND q.phase != 'prewarm' GROUP BY 1, 2, 3 ORDER BY 1").all(result.pageLoadId);
        }
        assert.deepEqual(rows.map((r) => [r.phase, r.protocol, r.result, r.n]), [['control', 'h2', 'ok', 5], ['treatment', 'h3', 'ok', 5]],
          `collector log: ${tail(runDir, 'collector.log')}`);
      } finally {
        stored.close();
        await context.close();
      }
      const r = doctor(['--healthz', `http://127.0.0.1:${COLLECTOR_PORT}/healthz`]);
      console.log(r.checks.map((c) => `# ${c.status} ${c.check}: ${c.detail}`).join('\n'));
      assert.deepEqual(r.failed, [], JSON.stringify(r.checks, null, 1));
      assert.equal(r.status, 0);
      const statuses = Object.fromEntries(r.checks.map((c) => [c.check, c.status]));
      for (const check of ['HTTP/2 origin offers no HTTP/3', 'HTTP/3 origin announces HTTP/3', 'collector /healthz', 'collector CORS preflight',
        'collector test beacon', 'module wasm h3probe_browser.wasm', 'module glue h3probe_browser.mjs', 'module worker worker.js',
        'HTTP/3 origin /noop Server-Timing']) {
        assert.equal(statuses[check], 'PASS', check);
      }
      assert.equal(r.checks.filter((c) => c.check.startsWith('TLS ')).length, 4, 'TLS of the four hosts');
      // Without --healthz: the generated collector site forwards /beacon only, so /healthz is skipped, not failed.
      const outside = doctor();
      assert.equal(outside.status, 0);
      assert.equal(outside.checks.find((c) => c.check === 'collector /healthz').status, 'SKIP');
      // The test beacon is stored once, however often doctor runs: same run_id, later ones duplicates.
      const db = new Database(dbPath(), { readonly: true, fileMustExist: true });
      try {
        assert.equal(db.prepare('SELECT count(*) FROM runs WHERE config_id = ?').pluck().get(DOCTOR_ID), 1);
        assert.equal(db.prepare('SELECT count(*) FROM requests WHERE run_id = ?').pluck().get(DOCTOR_ID), 0);
      } finally {
        db.close();
      }
    });

    for (const engine of ENGINES) {
      test(`h3probe doctor --browser ${engine}: one real run from the page's origin, control over h2 and treatment over h3`,
        { skip: engineMissing(engine) ?? false }, () => {
          const runsBefore = countRuns();
          // The browser loads the page as a user does: the bundled page with its config in the query string, and the
          // search it offers (window.runOnce() calls searchCompleted()), as a --search script.
          const { page, h2, h3, collector: beacon } = SITES;
          const params = new URLSearchParams({ h2Origin: `https://${h2.host}`, h3Origin: `https://${h3.host}`, beaconUrl: `https://${beacon.host}/beacon` });
          const search = path.join(runDir, 'doctor-search.mjs');
          fs.writeFileSync(search, 'export default (page) => page.evaluate(() => window.runOnce());\n');
          const browserArgs = ['--page', `https://${page.host}/app/?${params}`, '--search', `script ${search}`];
          const r = doctor(['--browser', engine, ...browserArgs, '--healthz', `http://127.0.0.1:${COLLECTOR_PORT}/healthz`], BIN);
          const run = r.checks.find((c) => c.check === `${engine} run`);
          console.log(`# ${run?.status} ${run?.check}: ${run?.detail}`);
          assert.deepEqual(r.failed, [], JSON.stringify(r.checks, null, 1));
          assert.equal(run.status, 'PASS', JSON.stringify(run));
          assert.match(run.detail, /^control ok\/h2×5; treatment ok\/h3×5$/);
          assert.equal(countRuns(), runsBefore, 'the browser run\'s beacon stays in the tab: nothing stored');
          // The installed package ships the drivers but not puppeteer-core (none of its dependencies): the same
          // option says what to install and fails nothing.
          const packaged = doctor(['--browser', engine, ...browserArgs, '--healthz', `http://127.0.0.1:${COLLECTOR_PORT}/healthz`]);
          assert.equal(packaged.status, 0);
          const skipped = packaged.checks.find((c) => c.check === `${engine} run`);
          assert.equal(skipped.status, 'SKIP');
          assert.match(skipped.fix, /npm install puppeteer-core /);
        });
    }

    for (const f of FAULTS) {
      test(`h3probe doctor names the fault: ${f.fault}`, async () => {
        if (f.caddy) await startCaddy(f.caddy(deployed));
        if ('collector' in f) {
          await collector.stop();
          if (f.collector) {
            collector = startCollector(f.collector);
            await collector.started;
          }
        }
        try {
          const r = doctor(['--healthz', `http://127.0.0.1:${COLLECTOR_PORT}/healthz`]);
          assert.equal(r.status, 1, JSON.stringify(r.checks, null, 1));
          const failed = r.failed.map((c) => c.check);
          for (const name of f.names) assert.ok(failed.some((c) => name.test(c)), `${name} among the failures: ${failed.join('; ')}`);
          assert.equal(failed.length, f.names.length, `only this fault fails: ${failed.join('; ')}`);
          assert.ok(r.failed.some((c) => f.detail.test(c.detail)), r.failed.map((c) => c.detail).join('; '));
          assert.ok(r.failed.every((c) => c.fix.length > 0), 'every failing line has a fix');
          if (f.fix) assert.ok(r.failed.some((c) => f.fix.test(c.fix)), r.failed.map((c) => c.fix).join('; '));
        } finally {
          if (f.caddy) await startCaddy(deployed);
          if ('collector' in f) {
            await collector.stop();
            collector = startCollector();
            await collector.started;
          }
        }
      });
    }

    test('teardown removes the namespace, its /etc/netns folder and every process', async () => {
      await browser.close();
      await caddy.stop();
      await collector.stop();
      removeKitNetwork();
      assert.ok(!ip('netns', 'list').split('\n').some((l) => l.split(' ')[0] === NS), 'no namespace left');
      assert.ok(!fs.existsSync(NETNS_ETC), 'no /etc/netns folder left');
      assert.throws(() => process.kill(caddyPid, 0), /ESRCH/, 'caddy is gone');
      assert.throws(() => process.kill(collector.child.pid, 0), /ESRCH/, 'the collector is gone');
    });
  });

function tail(dir, name) {
  try {
    return fs.readFileSync(path.join(dir, name), 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}
