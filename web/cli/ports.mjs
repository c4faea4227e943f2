// Picks free loopback ports (TCP, or TCP and UDP at once for an HTTP/3 listener), unless an environment variable fixes one.
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';

const HOST = '127.0.0.1';

// Ports below the kernel's ephemeral range: a port picked there and released cannot be handed to another process's
// outgoing socket before our server binds it (a browser's QUIC sockets take ephemeral UDP ports, and once took the
// HTTP/3 listener's port in that gap). Where the range leaves no room below it, the kernel picks, as before.
function belowEphemeral() {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return low > 12000 ? [10000, low - 1] : null;
  } catch {
    return null;
  }
}
const RANGE = belowEphemeral();

/** env: name of a variable (e.g. H3PROBE_PORT_H3) that, when set, wins. exclude: ports already handed out. */
export async function freePort({ udp = false, env, exclude = [] } = {}) {
  const fixed = env ? process.env[env] : undefined;
  if (fixed) {
    const port = Number(fixed);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${env}=${fixed} is not a port`);
    return port;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await bindTcp(RANGE ? RANGE[0] + Math.floor(Math.random() * (RANGE[1] - RANGE[0] + 1)) : 0).catch(() => null);
    if (port === null || exclude.includes(port)) continue;
    if (!udp || (await canBindUdp(port))) return port;
  }
  throw new Error(`no free ${udp ? 'TCP+UDP' : 'TCP'} port on ${HOST}`);
}

function bindTcp(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: HOST, port, exclusive: true }, () => {
      const { port: bound } = server.address();
      server.close(() => resolve(bound));
    });
  });
}

/** True when nothing holds the UDP port; also used to see that Caddy's QUIC listener is up (then it is held). */
export function canBindUdp(port, host = HOST) {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind({ address: host, port, exclusive: true }, () => socket.close(() => resolve(true)));
  });
}
