// The local stack: a certificate, the collector, and Caddy serving the test origins from the Caddyfile `h3probe origins`
// writes for users, plus a page site (the stand-in for the user's app). The one module that starts local origins:
// npm start, h3probe trial, the end-to-end tests, the benchmarks and the lab all start theirs here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeCertificate, spkiHash } from '../cli/certificate.mjs';
import { freePort } from '../cli/ports.mjs';
import { chromiumArgs as chromiumFlags } from '../cli/chromiumArgs.mjs';
import { originsCaddyfile } from '../server/originsCaddyfile.mjs';
import { startCollector } from '../server/collector.mjs';
import { openStore } from '../server/store.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { startCaddy } from './caddy.mjs';
import { ensureCerts } from './certs.mjs';
import { startDelayedNoop } from './delayedNoop.mjs';
import { injectFaults } from './faults.mjs';
import { hookSignals, once } from './hookSignals.mjs';
import { distRoot, pageRoot } from './paths.mjs';

const tempDirs = new Set();
// 'exit' handlers cannot await stop(); removing our temp run directories synchronously is the part that still can be done.
process.on('exit', () => { for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true }); });

// The development names (npm start, the tests, the lab): h2b and h3b are a second origin of each kind, the treatment
// arm's origin in an A/A test (arms h2-h2 or h3-h3).
export const HOSTS = Object.freeze({
  page: 'page.h3probe.test', h2: 'h2.h3probe.test', h3: 'h3.h3probe.test', h2b: 'h2b.h3probe.test', h3b: 'h3b.h3probe.test',
});
const PORT_ENV = { page: 'H3PROBE_PORT_PAGE', h2: 'H3PROBE_PORT_H2', h3: 'H3PROBE_PORT_H3', h2b: 'H3PROBE_PORT_H2B',
  h3b: 'H3PROBE_PORT_H3B', collector: 'H3PROBE_PORT_COLLECTOR' };
const ORIGIN_KEYS = ['h2', 'h3', 'h2b', 'h3b'];

/**
 * The servers, started; resolves to {urls, hosts, ports, spki, certPath, runDir, caddyfile, store, collector, caddy,
 * stop(), restartCaddy(edit), writeFixture(name, body), resolveArgs, chromiumArgs()}.
 *
 * hosts: {page, h2, h3, h2b?, h3b?, collector?} (default: HOSTS, under the repository's cached certificate; other
 *   names get a certificate of their own in the run directory). collector: a site of its own for POST /beacon, on the
 *   page's listener (h3probe trial: the beacon URL the user's page names); without it the page site takes /beacon.
 * ports: fixed ports by key (the lab); otherwise free loopback ports, or the H3PROBE_PORT_* variables.
 * site: {root (default web/page), module (the built module served at /h3probe/, default web/dist; null: none),
 *   fixtures (default true: a folder served at /fixtures/NAME), csp, beacon (default true: the page site proxies
 *   POST /beacon)}; pageRoot and roots {page, module} are accepted as before.
 * beacons: where /beacon goes: 'collector' (default: a collector started here on store, or a SQLite file at dbPath,
 *   default one in the run directory; core, location), {upstream: 'IP:PORT'} (the lab's collector), or {status}
 *   (answered by Caddy, nothing stored). editCaddyfile: (text) => text, applied to the rendered Caddyfile after the
 *   faults (the lab's CDN edge headers).
 * Faults (web/stack/faults.mjs): h3, tao, noopStatus, noopDelayMs, claimProtocol; h2Down: no HTTP/2 origins.
 * bindAddress (default 127.0.0.1), commandPrefix and waitReady: as startCaddy's (the lab's namespace).
 * runDir (default: a temp dir, removed on stop unless keepRunDir), fixtures ({name: body}); hookSignals (default true:
 *   SIGINT and SIGTERM stop the stack, then exit).
 */
export async function startStack(opts = {}) {
  const stoppers = [];
  const stop = once(async () => {
    unhook();
    for (const fn of stoppers.reverse()) await fn().catch(() => {});
  });
  // hookSignals false: the caller handles SIGINT/SIGTERM itself (h3probe trial --open prints the report on Ctrl-C).
  const unhook = opts.hookSignals === false ? () => {} : hookSignals(stop);
  try {
    const hosts = { ...(opts.hosts ?? HOSTS) };
    // h2Down: the HTTP/2 origins keep their names and ports, but nothing listens there (connection refused).
    const served = { ...hosts };
    if (opts.h2Down) { delete served.h2; delete served.h2b; }
    const runDir = opts.runDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-stack-'));
    if (!opts.runDir && !opts.keepRunDir) {
      tempDirs.add(runDir);
      stoppers.push(async () => { fs.rmSync(runDir, { recursive: true, force: true }); tempDirs.delete(runDir); });
    }
    const { certPath, keyPath, spki } = await certificate(opts, hosts, runDir);

    // A beaconStatus fault answers POST /beacon at Caddy, with the collector still there (a test counts what it stored).
    const beacons = opts.beacons ?? (opts.beaconStatus ? { status: opts.beaconStatus } : 'collector');
    const withCollector = beacons === 'collector' || Boolean(opts.beaconStatus);
    const ports = {};
    const keys = ['page', ...ORIGIN_KEYS.filter((k) => hosts[k])];
    const fixed = (key) => opts.ports?.[key] ?? null;
    const h3Listener = (key) => key === 'page' || hosts[key] && /^h3/.test(key);
    if (withCollector) ports.collector = fixed('collector') ?? await freePort({ env: PORT_ENV.collector, exclude: Object.values(ports) });
    // Caddy's listeners: picked free, but a port can still be taken before Caddy binds it (a browser's UDP sockets),
    // so Caddy starts again on other ports then, unless the ports were given.
    const pickCaddyPorts = async () => {
      for (const key of keys) delete ports[key];
      for (const key of keys) ports[key] = fixed(key) ?? await freePort({ udp: h3Listener(key), env: PORT_ENV[key], exclude: Object.values(ports) });
    };
    await pickCaddyPorts();
    const movable = keys.every((k) => !fixed(k) && !process.env[PORT_ENV[k]]);

    let store = null;
    let collector = null;
    let core = null;
    if (withCollector) {
      core = opts.core ?? await loadH3probeNode();
      store = opts.store ?? openStore(opts.dbPath ?? path.join(runDir, 'beacons.sqlite'), core);
      if (!opts.store) stoppers.push(async () => store.close());
      collector = await startCollector({ port: ports.collector, store, core, location: opts.location });
      stoppers.push(() => collector.close());
    }
    const delayed = opts.noopDelayMs > 0 ? await startDelayedNoop({ delayMs: opts.noopDelayMs, status: opts.noopStatus ?? 204 }) : null;
    if (delayed) stoppers.push(() => delayed.close());

    const site = pageSiteOptions(opts, runDir);
    const writeFixture = (name, body) => fs.writeFileSync(path.join(site.fixtures, path.basename(name)), body);
    if (site.fixtures) {
      fs.mkdirSync(site.fixtures, { recursive: true });
      for (const [name, body] of Object.entries(opts.fixtures ?? {})) writeFixture(name, body);
    }
    const bindAddress = opts.bindAddress ?? '127.0.0.1';
    const edit = opts.editCaddyfile ?? ((t) => t);
    const render = () => edit(injectFaults(stackCaddyfile({ hosts: served, ports, bindAddress, certPath, keyPath, site, beacons }),
      { ...opts, noopUpstream: delayed?.port ?? 0 }));
    const ready = () => ({
      sites: [{ host: hosts.page, port: ports.page, path: '/' },
        ...keys.slice(1).filter((k) => served[k]).map((k) => ({ host: hosts[k], port: ports[k], path: '/noop' }))],
      udpPorts: opts.h3 === false ? [] : keys.filter((k) => k !== 'page' && h3Listener(k)).map((k) => ports[k]),
    });
    const caddyOptions = () => ({ runDir, certPath, ready: ready(), commandPrefix: opts.commandPrefix, waitReady: opts.waitReady });
    let text = render();
    let caddy;
    for (let attempt = 1; ; attempt++) {
      try {
        caddy = await startCaddy({ ...caddyOptions(), text });
        break;
      } catch (err) {
        if (!movable || attempt >= 3 || !err.portTaken) throw err;
        await pickCaddyPorts();
        text = render();
      }
    }
    stoppers.push(() => caddy.stop());

    const url = (key) => `https://${hosts[key]}:${ports[key]}`;
    const urls = {
      page: `${url('page')}/`,
      ...Object.fromEntries(ORIGIN_KEYS.filter((k) => hosts[k]).map((k) => [`${k}Origin`, url(k)])),
      beacon: hosts.collector ? `https://${hosts.collector}:${ports.page}/beacon` : `${url('page')}/beacon`,
    };
    return {
      urls, hosts, ports, spki, certPath, runDir, store, collector, core, stop, writeFixture,
      get caddyfile() { return text; },
      get caddy() { return caddy; },
      // Caddy again on the same ports, its Caddyfile passed through editCaddyfile (a fault injected; none: as started).
      async restartCaddy(editCaddyfile) {
        await caddy.stop();
        caddy = await startCaddy({ ...caddyOptions(), text: editCaddyfile ? editCaddyfile(text) : text });
      },
      // The page's and both origins' names, which no DNS holds, as h3probe doctor's --resolve flags (all on loopback).
      resolveArgs: ['page', 'h2', 'h3'].filter((k) => hosts[k]).flatMap((k) => ['--resolve', `${hosts[k]}:${ports[k]}:127.0.0.1`]),
      chromiumArgs: ({ forceQuic = true, extra = [] } = {}) => chromiumArgs({ spki, h3Port: ports.h3, h3bPort: ports.h3b, forceQuic, extra }),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The Caddyfile: `h3probe origins`' text for these names, ports and certificate, then the page site. */
export function stackCaddyfile({ hosts, ports, bindAddress = '127.0.0.1', certPath, keyPath, site, beacons = 'collector' }) {
  const aaOrigins = [['h2b', 'h2'], ['h3b', 'h3']].filter(([k]) => hosts[k])
    .map(([k, kind]) => ({ kind, host: hosts[k], bind: bindAddress, port: ports[k] }));
  const origins = originsCaddyfile({
    ...(hosts.h2 ? { h2: hosts.h2, h2Bind: bindAddress, h2Port: ports.h2 } : { only: 'h3' }),
    h3: hosts.h3, h3Bind: bindAddress, h3Port: ports.h3, aaOrigins, tls: `${certPath},${keyPath}`,
    ...(hosts.collector && beacons === 'collector'
      ? { collector: hosts.collector, collectorUpstream: `127.0.0.1:${ports.collector}`, collectorBind: bindAddress, collectorPort: ports.page }
      : {}),
  });
  return `${origins}\n${pageSite({ host: hosts.page, port: ports.page, bindAddress, certPath, keyPath, site, beacons, upstream: `127.0.0.1:${ports.collector}` })}`;
}

function pageSiteOptions(opts, runDir) {
  const site = { root: pageRoot, module: distRoot, fixtures: true, csp: '', beacon: !opts.hosts?.collector, ...opts.site };
  if (opts.roots?.page) site.root = opts.roots.page;
  if (opts.roots?.module) site.module = opts.roots.module;
  if (opts.pageRoot) site.root = opts.pageRoot;
  if (opts.pageCsp) site.csp = opts.pageCsp;
  site.fixtures = site.fixtures ? path.join(runDir, 'fixtures') : null;
  for (const dir of [site.root, site.module, site.fixtures]) {
    if (dir && /["\n]/.test(dir)) throw new Error(`path not usable in a Caddyfile: ${dir}`);
  }
  return site;
}

// The user's app, stood in for: the page, the built module at /h3probe/, the fixtures, and POST /beacon.
function pageSite({ host, port, bindAddress, certPath, keyPath, site, beacons, upstream }) {
  const lines = ['header Cache-Control no-store', ...(site.csp ? [`header Content-Security-Policy "${site.csp.replace(/"/g, '')}"`] : [])];
  if (site.beacon) lines.push(...beaconRoutes(beacons, upstream));
  const dir = (opener, root) => [`${opener} {`, `\troot * "${root}"`, '\tfile_server', '}'];
  if (site.fixtures) lines.push(...dir('handle_path /fixtures/*', site.fixtures));
  if (site.module) lines.push(...dir('handle_path /h3probe/*', site.module));
  lines.push(...dir('handle', site.root));
  return [`https://${host}:${port} {`, `\tbind ${bindAddress}`, `\ttls "${certPath}" "${keyPath}"`, ...lines.map((l) => `\t${l}`), '}', ''].join('\n');
}

// POST /beacon on the page site: proxied to the collector (or an upstream), or answered by Caddy with a status.
function beaconRoutes(beacons, collectorUpstream) {
  const { upstream = collectorUpstream, status = 0 } = beacons === 'collector' ? {} : beacons;
  if (!status && !/^[0-9.]+:\d+$/.test(upstream)) throw new Error(`collector upstream must be IPv4:port: ${upstream}`);
  return ['@beacon {', '\tpath /beacon', '\tmethod POST OPTIONS', '}', 'handle @beacon {', status ? `\trespond ${status}` : `\treverse_proxy ${upstream}`, '}'];
}

async function certificate(opts, hosts, runDir) {
  if (opts.certificate) return opts.certificate;
  const names = Object.values(hosts);
  if (names.every((n) => n.endsWith('.h3probe.test'))) return ensureCerts();
  const cert = await makeCertificate(runDir, names.map((n) => `DNS:${n}`), { days: 2 });
  return { certPath: path.join(runDir, 'cert.pem'), keyPath: path.join(runDir, 'key.pem'), spki: spkiHash(cert) };
}

/**
 * Chromium's flags for the stack (web/cli/chromium.mjs). address: where the test host names resolve (the lab: its
 * server namespace's 198.18.0.2); null: no mapping, the names resolve through the system (the kit's e2e test: a network
 * namespace's hosts file). h3bPort: the second HTTP/3 origin's port, forced onto QUIC like the first. quicOrigins:
 * ['HOST:PORT', ...] forced onto QUIC instead of the stack's.
 */
export function chromiumArgs({ spki, h3Port, h3bPort = 0, forceQuic = true, extra = [], address = '127.0.0.1', quicOrigins }) {
  return chromiumFlags({
    spki, forceQuic, extra, quicOrigins: quicOrigins ?? [`${HOSTS.h3}:${h3Port}`, ...(h3bPort ? [`${HOSTS.h3b}:${h3bPort}`] : [])],
    hostResolverRules: address ? `MAP *.h3probe.test ${address}` : null,
  });
}
