// Run inside the server namespace (ip netns exec NS node awaitListeners.mjs JSON): exits 0 once Caddy's HTTPS sites answer
// on the lab address and its QUIC (UDP) port is held, 1 on timeout. The lab's Caddy cannot be reached from the host.
import fs from 'node:fs';
import https from 'node:https';
import { canBindUdp } from '../web/cli/ports.mjs';

const { address, sites, udpPorts, certPath, timeoutMs } = JSON.parse(process.argv[2]);
const ca = fs.readFileSync(certPath);
const deadline = Date.now() + timeoutMs;

const answers = ({ host, port, path }) => new Promise((resolve) => {
  const req = https.request({ host: address, port, path, servername: host, ca, agent: false, headers: { host: `${host}:${port}` },
    timeout: 2000 }, (res) => { res.resume(); res.on('end', () => resolve(true)); });
  req.on('error', () => resolve(false));
  req.on('timeout', () => req.destroy());
  req.end();
});

const checks = [...sites.map((s) => () => answers(s)), ...udpPorts.map((port) => async () => !(await canBindUdp(port, address)))];
const pending = new Set(checks);
while (pending.size > 0) {
  for (const check of [...pending]) if (await check()) pending.delete(check);
  if (pending.size === 0) break;
  if (Date.now() > deadline) process.exit(1);
  await new Promise((r) => setTimeout(r, 50));
}
process.exit(0);
