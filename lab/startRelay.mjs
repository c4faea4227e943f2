// Runs build/native/h3probe_relay between the lab's namespaces and changes its link settings on the fly through its control
// channel (stdin: one JSON command per line; stdout: one JSON answer per line), without a restart.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../web/stack/paths.mjs';
import { supervise } from '../web/stack/supervise.mjs';

export const RELAY_PATH = path.join(repoRoot, 'build', 'native', 'h3probe_relay');

/**
 * The lab's link ({rttMs, seed, jitterMs, reorder, loss, rateKbps, queueMs, up, down}) as the relay's settings
 * (lab/relay/link_settings.hpp, docs/lab.md): each direction gets RTT/2 of delay and the shared keys, then its own overrides
 * from `up` (client to server) or `down` (any direction key: delayMs, jitterMs, reorder, loss, rateKbps, queueMs,
 * queueBytes). loss: a number (independent loss at that rate) or a loss object ({model: 'gilbert', rate, meanBurst}, ...).
 * The relay checks every value and refuses bad ones with the key named.
 */
export function relaySettings(link = {}) {
  const { rttMs = 0, seed = 1, jitterMs = 0, reorder = false, loss = 0, rateKbps = 0, queueMs, up = {}, down = {} } = link;
  const lossObject = typeof loss === 'number' ? (loss > 0 ? { model: 'bernoulli', rate: loss } : { model: 'none' }) : loss;
  const shared = { delayMs: rttMs / 2, jitterMs, reorder, loss: lossObject, ...(rateKbps > 0 ? { rateKbps, ...(queueMs ? { queueMs } : {}) } : {}) };
  const direction = (own) => {
    const d = { ...shared, ...own };
    if (typeof d.loss === 'number') d.loss = d.loss > 0 ? { model: 'bernoulli', rate: d.loss } : { model: 'none' };
    return d;
  };
  return { seed, up: direction(up), down: direction(down) };
}

/**
 * names {cli, srv}: namespaces; link: the first settings (see relaySettings); rtPriority: SCHED_FIFO priority (0: off).
 * Resolves once both TUN devices are attached, to {pid, set(link), counters(), stop()}: set() applies new settings and
 * resolves to the counters of the period it ends ({up, down}: received, sent, lost, loss_bursts, overflow, queued,
 * bytes_sent, late_mean_us, late_max_us...); counters() ends a period without changing the link; stop() resolves to the totals.
 */
export async function startRelay({ names, device = 'tun0', link = {}, rtPriority = 0, relayPath = RELAY_PATH }) {
  if (!fs.existsSync(relayPath)) throw new Error(`${relayPath} is missing: run "npm run build:native" first`);
  const args = ['--ns-a', names.cli, '--dev-a', device, '--ns-b', names.srv, '--dev-b', device,
    '--link', JSON.stringify(relaySettings(link)), '--rt-priority', String(rtPriority)];
  const child = spawn(relayPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  let buffered = '';
  let final = null;
  const waiting = [];  // resolvers of the commands sent, answered in order
  let onReady = null;
  child.stderr.on('data', (d) => { err += d; });
  child.stdin.on('error', () => {});  // a relay that died is reported by its exit, not by a broken pipe
  child.stdout.on('data', (d) => {
    buffered += d;
    for (let nl; (nl = buffered.indexOf('\n')) >= 0;) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let msg;
      try { msg = JSON.parse(line); } catch { continue; }
      if (msg.ready) onReady?.();
      else if (msg.final) final = msg.counters;
      else waiting.shift()?.(msg);
    }
  });
  const { exited, stop: stopChild, kill } = supervise(child, {
    graceMs: 3000,
    onExit: (code, signal) => { for (const w of waiting.splice(0)) w({ ok: false, error: `relay exited (${code ?? signal}): ${err.trim()}` }); },
  });

  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay not ready in 5 s: ${err}`)), 5000);
    onReady = () => { clearTimeout(timer); resolve(); };
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`relay exited (${code ?? signal}): ${err.trim()}`)); });
  }).catch(async (e) => { await kill(); throw e; });

  const command = (cmd) => new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      reject(new Error(`relay is not running: ${err.trim()}`));
      return;
    }
    waiting.push((msg) => (msg.ok ? resolve(msg.counters) : reject(new Error(`relay: ${msg.error}`))));
    child.stdin.write(`${JSON.stringify(cmd)}\n`);
  });

  const stop = () => stopChild().then(() => final);
  return {
    pid: child.pid, args, stop, stderr: () => err,
    set: (next) => command({ set: relaySettings(next) }),
    counters: () => command({ counters: true }),
  };
}
