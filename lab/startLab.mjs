// Starts the whole lab: namespaces with TUN devices, the relay between them, Caddy in the server namespace, and a Chromium
// launcher for the client namespace. stop() removes all of it, also on SIGINT/SIGTERM and (synchronously) on exit.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOSTS, chromiumArgs, startStack } from '../web/stack/stack.mjs';
import { CHROMIUM_PATH, launchChromium } from '../web/cli/chromium.mjs';
import { addClientAddress, createLabNetwork, removeLabNetwork, useClientAddress } from './createLabNetwork.mjs';
import { startRelay } from './startRelay.mjs';
import { edgeHeaders } from './edgeHeaders.mjs';
import { startLabCollector } from './startLabCollector.mjs';
import { awaitListeners } from './awaitListeners.mjs';
import { hookSignals, once } from '../web/stack/hookSignals.mjs';

// Fixed ports are safe: nothing else listens inside the lab's own server namespace.
const PORTS = Object.freeze({ page: 8443, h2: 8444, h3: 8445, h2b: 8446, h3b: 8447, collector: 8480 });

/**
 * prefix: namespace names PREFIX-cli / PREFIX-srv; link: the first setting (relaySettings in startRelay.mjs);
 * rtPriority: SCHED_FIFO priority of the relay (default 10; it blocks in ppoll, so it cannot starve the machine),
 * so a busy machine delays the relay's departures less.
 * field: {clients: [{address, country, network}], dbPath}: the field mode (docs/lab.md). The client namespace gets one
 * extra address per client (useClient(address) makes it the source of new connections); the real collector service runs
 * in the server namespace with its database at dbPath, behind Caddy, which sets the country header of each beacon from
 * the client address, as a CDN edge would, and forwards a client with a network as its stand-in public address
 * (network.standIn, fieldNetworks.mjs). Without field, Caddy answers POST /beacon itself and the lab reads each
 * beacon from the page (labSearch.mjs).
 */
export async function startLab({ prefix = 'h3lab', link = { rttMs: 0, loss: 0 }, rtPriority = 10, field = null } = {}) {
  const stoppers = [];
  let relay = null;
  const stop = once(async () => {
    unhook();
    const counters = await relay?.stop().catch(() => null);
    relay = null;
    for (const fn of stoppers.reverse()) await fn().catch(() => {});
    return counters;
  });
  const unhook = hookSignals(stop);
  // Last resort for a process that exits without awaiting stop(): no namespace may outlive it.
  const onExit = () => removeLabNetwork({ prefix });
  process.on('exit', onExit);
  stoppers.push(async () => process.off('exit', onExit));

  try {
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-lab-'));
    stoppers.push(async () => fs.rmSync(runDir, { recursive: true, force: true }));

    const network = createLabNetwork({ prefix });
    stoppers.push(async () => network.remove());
    const { names, addresses } = network;
    for (const { address } of field?.clients ?? []) addClientAddress(names, address);

    let collector = null;
    if (field) {
      collector = await startLabCollector({ ns: names.srv, host: addresses.srv, port: PORTS.collector,
        trustedProxy: addresses.srv, dbPath: field.dbPath });
      stoppers.push(() => collector.stop());
    }

    // One relay for the whole lab: settings change through its control channel, between page loads, without a restart.
    relay = await startRelay({ names, link, rtPriority });
    const setLink = (next) => (next ? relay.set(next) : relay.counters());

    // The local stack's Caddy (the origins `h3probe origins` writes, and the page site) in the server namespace, on the
    // lab's fixed ports. Field mode: beacons go to the collector in the same namespace, with the client's country in
    // X-Country-Code. Otherwise the lab reads each run's beacon from the page, and Caddy just accepts the POST /beacon.
    const upstream = `${addresses.srv}:${PORTS.collector}`;
    const stack = await startStack({
      ports: PORTS, runDir, bindAddress: addresses.srv, commandPrefix: ['ip', 'netns', 'exec', names.srv], hookSignals: false,
      beacons: field ? { upstream } : { status: 204 },
      ...(field ? { editCaddyfile: edgeHeaders({ upstream,
        countryByClient: Object.fromEntries(field.clients.map((c) => [c.address, c.country])),
        forwardedForByClient: Object.fromEntries(field.clients.filter((c) => c.network).map((c) => [c.address, c.network.standIn])) }) } : {}),
      waitReady: (ready, timeoutMs) => awaitListeners({ ns: names.srv, address: addresses.srv, ready, timeoutMs }),
    });
    stoppers.push(() => stack.stop());
    const { caddy, spki } = stack;

    // puppeteer-core talks to Chromium over a pipe (fds 3 and 4), which `ip netns exec` passes through to the exec'd browser.
    const wrapper = path.join(runDir, 'chromium-in-netns.sh');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${names.cli} ${CHROMIUM_PATH} "$@"\n`, { mode: 0o755 });
    const browsers = new Set();
    stoppers.push(async () => { for (const b of browsers) await b.close().catch(() => {}); });

    const { urls } = stack;
    return {
      names, addresses, urls, hosts: HOSTS, ports: PORTS, spki, certPath: stack.certPath, runDir, caddy, collector, stop,
      /** The lab's own processes outside Chromium: relay, Caddy and (field mode) collector. */
      pids: () => ({ relay: relay?.pid ?? null, caddy: caddy.pid, collector: collector?.pid ?? null }),
      /** Field mode: new connections from the client namespace leave from `address` (one of field.clients). */
      useClient: (address) => useClientAddress(names, address),
      /**
       * Gives the relay new settings (`next`: see relaySettings in startRelay.mjs), or with null keeps them; either way
       * resolves to the relay's counters since the previous call ({up, down}).
       */
      setLink,
      /** forceQuic false: a Chromium that never tries QUIC to the lab's origins (their root is private), as behind UDP blocking. */
      async launchBrowser({ extra = [], forceQuic = true } = {}) {
        const browser = await launchChromium(
          chromiumArgs({ spki, h3Port: PORTS.h3, h3bPort: PORTS.h3b, address: addresses.srv, extra, forceQuic }),
          { executablePath: wrapper });
        browsers.add(browser);
        browser.once('disconnected', () => browsers.delete(browser));
        return browser;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
