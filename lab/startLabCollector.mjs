// Runs the real collector service (`h3probe collector`, as deployed) inside the lab's server namespace, behind the lab's
// Caddy: Caddy plays the CDN edge that passes each client's country in a header, and the collector trusts Caddy by address.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../web/stack/paths.mjs';
import { supervise } from '../web/stack/supervise.mjs';

const CLI = path.join(repoRoot, 'web', 'bin', 'h3probe.mjs');

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
  const { exited, stop: stopChild, kill } = supervise(child, { graceMs: 15000 });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`collector not listening in ${readyTimeoutMs} ms: ${err || out}`)), readyTimeoutMs);
    const onData = () => {
      if (/"listening"/.test(out)) { clearTimeout(timer); child.stdout.off('data', onData); resolve(); }
    };
    child.stdout.on('data', onData);
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`collector exited (${code ?? signal}): ${err.trim() || out.trim()}`)); });
  }).catch(async (e) => { await kill(); throw e; });
  const stop = () => stopChild().then(() => out.trim().split('\n').slice(-2).join('\n'));
  return { pid: child.pid, args, stop };
}
