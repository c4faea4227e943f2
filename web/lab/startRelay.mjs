// Runs build/native/h3probe_relay between the lab's namespaces with one link setting, and stops it, returning its counters.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../devstack/paths.mjs';

export const RELAY_PATH = path.join(repoRoot, 'build', 'native', 'h3probe_relay');

const live = new Set();
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

/**
 * names {cli, srv}: namespaces; link {rttMs, loss, jitterMs, seed}; rtPriority: SCHED_FIFO priority for the relay (0: off).
 * Resolves once both TUN devices are attached. stop() resolves to the relay's counters.
 */
export async function startRelay({ names, device = 'tun0', link, rtPriority = 0, relayPath = RELAY_PATH }) {
  if (!fs.existsSync(relayPath)) throw new Error(`${relayPath} is missing: run "npm run build:native" first`);
  const { rttMs = 0, loss = 0, jitterMs = 0, seed = 1 } = link;
  const args = ['--ns-a', names.cli, '--dev-a', device, '--ns-b', names.srv, '--dev-b', device, '--rtt-ms', String(rttMs),
    '--jitter-ms', String(jitterMs), '--loss', String(loss), '--seed', String(seed), '--rt-priority', String(rtPriority)];
  const child = spawn(relayPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => { live.delete(child); resolve({ code, signal }); }));

  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay not ready in 5 s: ${err}`)), 5000);
    const onData = () => {
      if (/^ready /m.test(out)) { clearTimeout(timer); child.stdout.off('data', onData); resolve(); }
    };
    child.stdout.on('data', onData);
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`relay exited (${code ?? signal}): ${err.trim()}`)); });
  }).catch(async (e) => { child.kill('SIGKILL'); await exited; throw e; });

  let stopping = null;
  const stop = () => (stopping ??= (async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    return parseCounters(out);
  })());
  return { pid: child.pid, args, stop, stderr: () => err };
}

/** "counters: a->b received 5 sent 5 … ; b->a …" -> { up: {received, sent, …}, down: {…} } (up: client to server). */
export function parseCounters(text) {
  const line = text.split('\n').find((l) => l.startsWith('counters: '));
  if (!line) return null;
  const [ab, ba] = line.slice('counters: '.length).split('; ');
  const side = (s) => {
    const words = s.split(' ').slice(1);
    const out = {};
    for (let i = 0; i + 1 < words.length; i += 2) out[words[i]] = Number(words[i + 1]);
    return out;
  };
  return { up: side(ab), down: side(ba) };
}
