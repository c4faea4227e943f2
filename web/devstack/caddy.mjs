// Runs Caddy with the page site and the test origins, waits until every listener answers, and stops it without orphans.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { caddyfile } from './caddyfile.mjs';
import { startDelayedNoop } from './delayedNoop.mjs';
import { canBindUdp } from '../cli/ports.mjs';
import { pageRoot, distRoot } from './paths.mjs';
import { supervise } from './supervise.mjs';

/**
 * certPath, keyPath, hosts {page,h2,h3[,h2b,h3b]}, ports {page,h2,h3[,h2b,h3b],collector}, runDir (Caddyfile, log, Caddy's XDG dirs);
 * roots {page,module} (defaults: web/page, web/dist); pageRoot overrides roots.page;
 * h3 (false: no UDP, no Alt-Svc), tao (false: no Timing-Allow-Origin), noopStatus, noopDelayMs, h2Down, readyTimeoutMs;
 * claimProtocol (the origins' Server-Timing names this protocol, e.g. 'HTTP/1.1', whatever the request came over);
 * bindAddress (default 127.0.0.1); commandPrefix: argv put before `caddy` (the lab: ['ip', 'netns', 'exec', NS]);
 * waitReady: async ({hosts, ports, certPath, h3, h2Down}, timeoutMs) replacing the loopback readiness check, for a Caddy
 * whose listeners this process cannot reach. editCaddyfile: (text) => text, a change made to the rendered Caddyfile
 * (a fault a test injects).
 */
export async function startCaddy(opts) {
  const { runDir, ports, readyTimeoutMs = 15_000, noopDelayMs = 0, noopStatus = 204 } = opts;
  const roots = { page: pageRoot, module: distRoot, ...opts.roots };
  if (opts.pageRoot) roots.page = opts.pageRoot;
  fs.mkdirSync(runDir, { recursive: true });
  const delayed = noopDelayMs > 0 ? await startDelayedNoop({ delayMs: noopDelayMs, status: noopStatus }) : null;
  const config = path.join(runDir, 'Caddyfile');
  const text = caddyfile({ ...opts, roots, noopStatus, noopUpstream: delayed?.port ?? 0 });
  fs.writeFileSync(config, opts.editCaddyfile ? opts.editCaddyfile(text) : text);
  const logPath = path.join(runDir, 'caddy.log');
  const log = fs.openSync(logPath, 'a');
  const [command, ...prefixArgs] = [...(opts.commandPrefix ?? []), 'caddy'];
  const child = spawn(command, [...prefixArgs, 'run', '--config', config, '--adapter', 'caddyfile'], {
    stdio: ['ignore', log, log],
    // Keeps Caddy's autosave.json and storage out of the user's home directory.
    env: { ...process.env, XDG_CONFIG_HOME: path.join(runDir, 'xdg-config'), XDG_DATA_HOME: path.join(runDir, 'xdg-data') },
  });
  fs.closeSync(log);
  const { exited, stop: stopChild } = supervise(child, { graceMs: 5000 });

  const stop = async () => {
    await stopChild();
    await delayed?.close();
  };

  try {
    await Promise.race([
      (opts.waitReady ?? waitReady)(opts, readyTimeoutMs),
      exited.then(({ code, signal }) => { throw new Error(`caddy exited (${code ?? signal}) before it was ready:\n${tail(logPath)}`); }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid, configPath: config, logPath, stop };
}

async function waitReady({ hosts, ports, certPath, h3 = true, h2Down = false }, timeoutMs) {
  const ca = fs.readFileSync(certPath);
  const deadline = Date.now() + timeoutMs;
  const sites = [[hosts.page, ports.page, '/'], [hosts.h3, ports.h3, '/noop']];
  if (!h2Down) sites.push([hosts.h2, ports.h2, '/noop']);
  if (!h2Down && hosts.h2b && ports.h2b) sites.push([hosts.h2b, ports.h2b, '/noop']);
  const h3bOn = Boolean(hosts.h3b && ports.h3b);
  if (h3bOn) sites.push([hosts.h3b, ports.h3b, '/noop']);
  const checks = sites.map(([host, port, p]) => until(deadline, () => answers({ host, port, path: p, ca }), `${host}:${port}`));
  // QUIC cannot be spoken from Node 20; a UDP port that can no longer be bound shows Caddy's listener is up.
  for (const port of h3 ? [ports.h3, ...(h3bOn ? [ports.h3b] : [])] : []) {
    checks.push(until(deadline, async () => !(await canBindUdp(port)), `udp ${port}`));
  }
  await Promise.all(checks);
}

async function until(deadline, probe, what) {
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`caddy listener ${what} not ready in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function answers({ host, port, path: p, ca }) {
  return new Promise((resolve) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: p, servername: host, ca, agent: false, headers: { host: `${host}:${port}` }, timeout: 2000 },
      (res) => { res.resume(); res.on('end', () => resolve(true)); },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}
