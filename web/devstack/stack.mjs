// Starts the whole local stack (certificate, ports, collector, Caddy) and hands back its URLs, the Chromium flags and stop().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureCerts } from './certs.mjs';
import { freePort } from '../cli/ports.mjs';
import { startCaddy } from './caddy.mjs';
import { startCollector } from '../server/collector.mjs';
import { openStore } from '../server/store.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { hookSignals, once } from './hookSignals.mjs';
import { chromiumArgs as chromiumFlags } from '../cli/chromiumArgs.mjs';

const tempDirs = new Set();
// 'exit' handlers cannot await stop(); removing our temp run directories synchronously is the part that still can be done.
process.on('exit', () => { for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true }); });

// h2b and h3b: a second origin of each kind, the treatment arm's origin in an A/A test (arms h2-h2 or h3-h3).
export const HOSTS = Object.freeze({
  page: 'page.h3probe.test', h2: 'h2.h3probe.test', h3: 'h3.h3probe.test', h2b: 'h2b.h3probe.test', h3b: 'h3b.h3probe.test',
});

/**
 * core (default: loadH3probeNode()), location (the collector's client-location options, see clientLocator.mjs), store or dbPath (default:
 * a fresh database in the run directory), certDir, runDir (default: a temp dir, removed on stop unless keepRunDir), fixtures
 * ({name: body} served at /fixtures/name), plus the startCaddy options: pageRoot, roots, h3, tao, noopStatus, noopDelayMs,
 * h2Down, pageCsp, beaconStatus.
 */
export async function startStack(opts = {}) {
  const stoppers = [];
  const stop = once(async () => {
    unhook();
    for (const fn of stoppers.reverse()) await fn().catch(() => {});
  });
  const unhook = hookSignals(stop);
  try {
    const { certPath, keyPath, spki } = await ensureCerts(...(opts.certDir ? [opts.certDir] : []));
    const runDir = opts.runDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-stack-'));
    if (!opts.runDir && !opts.keepRunDir) {
      tempDirs.add(runDir);
      stoppers.push(async () => { fs.rmSync(runDir, { recursive: true, force: true }); tempDirs.delete(runDir); });
    }

    const ports = {};
    const taken = () => Object.values(ports);
    ports.collector = await freePort({ env: 'H3PROBE_PORT_COLLECTOR', exclude: taken() });
    // Caddy's listeners: picked free, but a port can still be taken before Caddy binds it (seen: its UDP port, twice in
    // a full e2e run), so Caddy starts again on other ports then, unless a variable fixed them.
    const CADDY_PORTS = [['page', 'H3PROBE_PORT_PAGE', false], ['h2', 'H3PROBE_PORT_H2', false], ['h3', 'H3PROBE_PORT_H3', true],
      ['h2b', 'H3PROBE_PORT_H2B', false], ['h3b', 'H3PROBE_PORT_H3B', true]];
    const pickCaddyPorts = async () => {
      for (const [key] of CADDY_PORTS) delete ports[key];
      for (const [key, env, udp] of CADDY_PORTS) ports[key] = await freePort({ udp, env, exclude: taken() });
    };
    await pickCaddyPorts();
    const movable = CADDY_PORTS.every(([, env]) => !process.env[env]);

    const core = opts.core ?? await loadH3probeNode();
    const store = opts.store ?? openStore(opts.dbPath ?? path.join(runDir, 'beacons.sqlite'), core);
    if (!opts.store) stoppers.push(async () => store.close());
    const collector = await startCollector({ port: ports.collector, store, core, location: opts.location });
    stoppers.push(() => collector.close());

    // Files served at https://page…/fixtures/NAME, e.g. remote configs; tests may rewrite them between page loads.
    const fixtures = path.join(runDir, 'fixtures');
    fs.mkdirSync(fixtures, { recursive: true });
    const writeFixture = (name, body) => fs.writeFileSync(path.join(fixtures, path.basename(name)), body);
    for (const [name, body] of Object.entries(opts.fixtures ?? {})) writeFixture(name, body);
    const roots = { ...opts.roots, fixtures };
    const caddyOptions = { ...opts, roots, certPath, keyPath, hosts: HOSTS, ports, runDir };
    let caddy;
    for (let attempt = 1; ; attempt++) {
      try {
        caddy = await startCaddy(caddyOptions);
        break;
      } catch (err) {
        if (!movable || attempt >= 3 || !/address already in use/.test(err.message)) throw err;
        await pickCaddyPorts();
      }
    }
    stoppers.push(() => caddy.stop());

    const urls = {
      page: `https://${HOSTS.page}:${ports.page}/`,
      h2Origin: `https://${HOSTS.h2}:${ports.h2}`,
      h3Origin: `https://${HOSTS.h3}:${ports.h3}`,
      h2bOrigin: `https://${HOSTS.h2b}:${ports.h2b}`,
      h3bOrigin: `https://${HOSTS.h3b}:${ports.h3b}`,
      beacon: `https://${HOSTS.page}:${ports.page}/beacon`,
    };
    return {
      urls, hosts: HOSTS, ports, spki, certPath, runDir, store, collector, stop, writeFixture,
      get caddy() { return caddy; },
      // Caddy again on the same ports, its Caddyfile passed through editCaddyfile (a fault injected; none: as started).
      async restartCaddy(editCaddyfile) {
        await caddy.stop();
        caddy = await startCaddy({ ...caddyOptions, editCaddyfile });
      },
      // The page's and both origins' names, which no DNS holds, as h3probe doctor's --resolve flags (all on loopback).
      resolveArgs: ['page', 'h2', 'h3'].flatMap((k) => ['--resolve', `${HOSTS[k]}:${ports[k]}:127.0.0.1`]),
      chromiumArgs: ({ forceQuic = true, extra = [] } = {}) => chromiumArgs({ spki, h3Port: ports.h3, h3bPort: ports.h3b, forceQuic, extra }),
    };
  } catch (err) {
    await stop();
    throw err;
  }
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
