// Runs the real collector service (`h3probe collector`, as deployed) inside the lab's server namespace, behind the lab's
// Caddy: Caddy plays the CDN edge that passes each client's country in a header, and the collector trusts Caddy by address.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../devstack/paths.mjs';

const CLI = path.join(repoRoot, 'web', 'bin', 'h3probe.mjs');
const live = new Set();
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

/**
 * ns: the server namespace; host, port: where it listens (the lab's server address); trustedProxy: the address Caddy's
 * connections come from; dbPath: the SQLite database. Resolves once it listens, to {pid, stop()}; stop() sends SIGTERM,
 * which drains in-flight beacons, and resolves to the service's last log lines.
 */
export async function startLabCollector({ ns, host, port, trustedProxy, dbPath, readyTimeoutMs = 15000 }) {
  const args = ['netns', 'exec', ns, process.execPath, CLI, 'collector', '--host', host, '--port', String(port), '--db', dbPath,
    '--trusted-proxies', trustedProxy,
    // Every lab client shares one /24 (198.18.0.0/24): the per-network rate limit would count the whole user mix as one
    // client network, so it is off here (a page load every ~2 s stays far below it anyway).
    '--rate-limit', '0'];
  const child = spawn('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => { live.delete(child); resolve({ code, signal }); }));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`collector not listening in ${readyTimeoutMs} ms: ${err || out}`)), readyTimeoutMs);
    const onData = () => {
      if (/"listening"/.test(out)) { clearTimeout(timer); child.stdout.off('data', onData); resolve(); }
    };
    child.stdout.on('data', onData);
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`collector exited (${code ?? signal}): ${err.trim() || out.trim()}`)); });
  }).catch(async (e) => { child.kill('SIGKILL'); await exited; throw e; });
  let stopping = null;
  const stop = () => (stopping ??= (async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      await exited;
      clearTimeout(timer);
    }
    return out.trim().split('\n').slice(-2).join('\n');
  })());
  return { pid: child.pid, args, stop };
}
