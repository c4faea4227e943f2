// Runs Caddy on a Caddyfile, waits until every listener answers, and stops it without orphans: the one place a Caddy
// process is started (the local stack, and through it npm start, h3probe trial, the end-to-end tests and the lab).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { canBindUdp } from '../cli/ports.mjs';
import { supervise } from './supervise.mjs';

export class CaddyError extends Error {}

/**
 * text: the Caddyfile; runDir: where it, Caddy's log and its XDG folders go; ready: {sites: [{host, port, path}],
 * udpPorts: [port]} that must answer (over TLS with certPath as the CA) or be held before Caddy counts as started;
 * readyTimeoutMs; commandPrefix: argv put before `caddy` (the lab: ['ip', 'netns', 'exec', NS]); waitReady: async
 * (ready, timeoutMs) replacing waitListening() here, for a Caddy whose listeners this process cannot reach (the lab's
 * namespaces: lab/awaitListeners.mjs runs waitListening() inside one).
 * Throws CaddyError with the log's tail when Caddy exits before it is ready (portTaken: a listener's port was taken).
 */
export async function startCaddy({ text, runDir, ready, certPath, readyTimeoutMs = 15_000, commandPrefix = [], waitReady }) {
  fs.mkdirSync(runDir, { recursive: true });
  const configPath = path.join(runDir, 'Caddyfile');
  fs.writeFileSync(configPath, text);
  const logPath = path.join(runDir, 'caddy.log');
  const log = fs.openSync(logPath, 'a');
  const [command, ...prefixArgs] = [...commandPrefix, 'caddy'];
  const child = spawn(command, [...prefixArgs, 'run', '--config', configPath, '--adapter', 'caddyfile'], {
    stdio: ['ignore', log, log],
    // Keeps Caddy's autosave.json and storage out of the user's home directory.
    env: { ...process.env, XDG_CONFIG_HOME: path.join(runDir, 'xdg-config'), XDG_DATA_HOME: path.join(runDir, 'xdg-data') },
  });
  fs.closeSync(log);
  const { exited, stop } = supervise(child, { graceMs: 5000 });
  const spawnFailed = new Promise((resolve) => child.once('error', resolve));

  try {
    await Promise.race([
      (waitReady ?? waitListening)({ ...ready, certPath }, readyTimeoutMs),
      exited.then(({ code, signal }) => { throw caddyExited(`caddy exited (${code ?? signal}) before it was ready`, logPath); }),
      spawnFailed.then((err) => { throw new CaddyError(`caddy could not be started (is Caddy 2.6+ installed?): ${err.message}`); }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid, configPath, logPath, stop };
}

function caddyExited(message, logPath) {
  const log = tail(logPath);
  const err = new CaddyError(`${message}:\n${log}`);
  err.portTaken = /address already in use/.test(log);
  return err;
}

/**
 * Resolves once every site answers over TLS (certPath the CA) at address and every UDP port there is held by another
 * process; throws CaddyError at the deadline.
 */
export async function waitListening({ sites, udpPorts = [], certPath, address = '127.0.0.1' }, timeoutMs) {
  const ca = fs.readFileSync(certPath);
  const deadline = Date.now() + timeoutMs;
  const checks = sites.map((s) => until(deadline, async () => (await statusOf(ca, s, address)) !== 0, `${s.host}:${s.port}`));
  // QUIC cannot be spoken from Node 20; a UDP port that can no longer be bound shows Caddy's listener is up.
  for (const port of udpPorts) checks.push(until(deadline, async () => !(await canBindUdp(port, address)), `udp ${address}:${port}`));
  await Promise.all(checks);
}

async function until(deadline, probe, what) {
  while (!(await probe())) {
    if (Date.now() > deadline) throw new CaddyError(`caddy listener ${what} not ready in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The status of GET https://host:port/path sent to address (loopback by default), trusting ca (0: no answer). */
export function statusOf(ca, { host, port, path: p }, address = '127.0.0.1') {
  return new Promise((resolve) => {
    const req = https.request(
      { host: address, port, path: p, servername: host, ca, agent: false, headers: { host: `${host}:${port}` }, timeout: 2000 },
      (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); },
    );
    req.on('error', () => resolve(0));
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
