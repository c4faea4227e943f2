// A loopback upstream that answers /noop after a delay: Caddy 2.6 has no sleep directive, so slow answers come from here.
import http from 'node:http';

export function startDelayedNoop({ delayMs, status = 204 }) {
  const server = http.createServer((req, res) => {
    req.resume();
    const timer = setTimeout(() => res.writeHead(status).end(), delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      }),
    );
  });
}
