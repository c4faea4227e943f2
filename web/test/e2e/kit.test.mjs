// The production kit end to end, offline: one network namespace holds four addresses (page, HTTP/2 origin, HTTP/3
// origin, collector) whose real-looking names resolve through the namespace's own hosts file (`ip netns exec` mounts
// /etc/netns/NAME/hosts over /etc/hosts), so neither public DNS nor Chromium's --host-resolver-rules is involved.
// `h3probe origins` writes the Caddyfile (with --tls CERT,KEY from a local CA: ACME needs the public internet), the
// test adds a page site, `h3probe collector` stores the beacon, and headless Chromium in the namespace runs one search.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { spkiHash } from '../../devstack/certs.mjs';
import { chromiumArgs } from '../../devstack/stack.mjs';
import { CHROMIUM_PATH } from '../../devstack/chromium.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { recordWorkerEntries, workerEntries } from './workerEntries.mjs';

const { serverProtocols: SERVER_PROTOCOLS, serverTimingProtocol } = (await loadH3probeNode()).schema();

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const BIN = path.join(ROOT, 'web/bin/h3probe.mjs');
const AWAIT_LISTENERS = path.join(ROOT, 'web/lab/awaitListeners.mjs');
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

const unavailable = unavailableReason();

describe('production kit (h3probe origins + collector, Caddy and Chromium in a network namespace)',
  { skip: unavailable ? `kit e2e unavailable: ${unavailable}` : false }, () => {
    let runDir;
    let certs;
    let caddy;
    let collector;
    let browser;
    let caddyPid;
    const onExit = () => removeKitNetwork();
    const dbPath = () => path.join(runDir, 'beacons.sqlite');

    before(async () => {
      process.on('exit', onExit);
      runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-kit-'));
      createKitNetwork();
      certs = makeCertificates(runDir);

      // The production Caddyfile, as a user would generate it, plus a page site (the user's app in production).
      const caddyfile = path.join(runDir, 'Caddyfile');
      const { h2, h3, collector: beacon, page } = SITES;
      execFileSync(process.execPath, [BIN, 'origins', '--h2', h2.host, '--h3', h3.host,
        '--h2-bind', h2.address, '--h3-bind', h3.address, '--page-origin', `https://${page.host}`,
        '--collector', beacon.host, '--collector-upstream', `127.0.0.1:${COLLECTOR_PORT}`, '--collector-bind', beacon.address,
        '--tls', `${certs.certPath},${certs.keyPath}`, '--out', caddyfile]);
      const indent = (block) => block.split('\n').map((l) => `\t${l}`).join('\n');
      fs.appendFileSync(caddyfile, [
        '', `https://${page.host} {`, `\tbind ${page.address}`, `\ttls "${certs.certPath}" "${certs.keyPath}"`,
        ...pageModule().routes.map(indent),
        indent(`handle {\n\troot * "${path.join(ROOT, 'web/page')}"\n\tfile_server\n}`), '}', '',
      ].join('\n'));

      collector = startInNamespace([process.execPath, BIN, 'collector', '--port', String(COLLECTOR_PORT), '--host', '127.0.0.1',
        '--db', dbPath()], { logPath: path.join(runDir, 'collector.log'), ready: (out) => out.includes('"listening"') });
      caddy = startInNamespace(['caddy', 'run', '--config', caddyfile, '--adapter', 'caddyfile'], {
        logPath: path.join(runDir, 'caddy.log'),
        env: { XDG_CONFIG_HOME: path.join(runDir, 'xdg-config'), XDG_DATA_HOME: path.join(runDir, 'xdg-data') },
      });
      caddyPid = caddy.child.pid;
      await collector.started;
      // Every site answers over TLS with the local CA, and the HTTP/3 origin holds its UDP port.
      await Promise.all(Object.entries(SITES).map(([key, s]) => new Promise((resolve, reject) => {
        const spec = { address: s.address, certPath: certs.caPath, timeoutMs: 15000, udpPorts: key === 'h3' ? [443] : [],
          sites: [{ host: s.host, port: 443, path: key === 'collector' ? '/beacon' : key === 'page' ? '/' : '/noop' }] };
        const p = spawn('ip', ['netns', 'exec', NS, process.execPath, AWAIT_LISTENERS, JSON.stringify(spec)], { stdio: 'ignore' });
        p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${s.host} (${s.address}) not ready:\n${tail(runDir, 'caddy.log')}`))));
      })));

      // playwright talks to Chromium over fds 3 and 4, which `ip netns exec` passes through to the browser.
      const wrapper = path.join(runDir, 'chromium-in-netns.sh');
      fs.writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${NS} ${CHROMIUM_PATH} "$@"\n`, { mode: 0o755 });
      browser = await chromium.launch({
        executablePath: wrapper, headless: true,
        // No host mapping: the names resolve through the namespace's hosts file. The SPKI pin accepts the local CA's
        // server certificate; QUIC is forced for the HTTP/3 origin because Chromium follows Alt-Svc only for
        // certificates chaining to a public root.
        args: chromiumArgs({ spki: certs.spki, address: null, quicOrigins: [`${h3.host}:443`] }),
      });
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
      const context = await browser.newContext();
      const page = await context.newPage();
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
