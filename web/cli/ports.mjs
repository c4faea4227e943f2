// Picks free loopback ports (TCP, or TCP and UDP at once for an HTTP/3 listener), unless an environment variable fixes one.
import dgram from 'node:dgram';
import net from 'node:net';

const HOST = '127.0.0.1';

/** env: name of a variable (e.g. H3PROBE_PORT_H3) that, when set, wins. exclude: ports already handed out. */
export async function freePort({ udp = false, env, exclude = [] } = {}) {
  const fixed = env ? process.env[env] : undefined;
  if (fixed) {
    const port = Number(fixed);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${env}=${fixed} is not a port`);
    return port;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await bindTcp(0);
    if (exclude.includes(port)) continue;
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
