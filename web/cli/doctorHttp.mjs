// The doctor's two ways to meet a server as a browser would: a TLS handshake (the ALPN an HTTP/2 client offers) and
// one HTTP/1.1 request, each through the address --resolve or --connect-to gives for the host, while TLS and the Host
// header still name the host.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

const defaultPort = (u) => Number(u.port || (u.protocol === 'https:' ? 443 : 80));

/**
 * Where to connect for a URL's host and port: { address, port } from the map ('host:port' → { address, port }, the
 * port undefined for --resolve: the URL's own), or undefined (the system's resolver, the URL's port).
 */
export const connectTarget = (u, map) => map?.get(`${u.hostname.toLowerCase()}:${defaultPort(u)}`);

export function tlsHandshake(u, { ca, timeoutMs, resolve: map }) {
  const target = connectTarget(u, map);
  return new Promise((resolve) => {
    const socket = tls.connect({ host: target?.address ?? u.hostname, port: target?.port ?? defaultPort(u), servername: u.hostname, ca,
      ALPNProtocols: ['h2', 'http/1.1'] });
    const done = (r) => { clearTimeout(timer); socket.destroy(); resolve(r); };
    const timer = setTimeout(() => done({ error: `no TLS answer in ${timeoutMs} ms` }), timeoutMs);
    socket.once('secureConnect', () => {
      const cert = socket.getPeerX509Certificate();
      const spki = createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
      done({ protocol: socket.getProtocol(), alpn: socket.alpnProtocol || '', validTo: cert.validTo, spki });
    });
    socket.once('error', (err) => done({ error: err.message }));
  });
}

/** One HTTP/1.1 request; resolves to { status, headers, body, size } (body as text, at most 64 KB kept; size: its bytes). */
export function request(u, { method = 'GET', headers = {}, body, ca, timeoutMs, resolve: map }) {
  return new Promise((resolve, reject) => {
    const lib = u.protocol === 'https:' ? https : http;
    const target = connectTarget(u, map);
    const lookup = target && ((host, options, done) => (options?.all ? done(null, [{ address: target.address, family: net.isIP(target.address) }])
      : done(null, target.address, net.isIP(target.address))));
    // The Host header names the URL's host and port whatever port the connection goes to (--connect-to).
    const req = lib.request(u, { method, headers: { 'user-agent': 'h3probe-doctor', host: u.host, ...headers }, ca, agent: false, timeout: timeoutMs,
      servername: u.hostname, ...(lookup ? { lookup } : {}), ...(target?.port ? { port: target.port } : {}) }, (res) => {
      let text = '';
      let size = 0;
      res.on('data', (d) => {
        size += d.length;
        if (text.length < 65536) text += d.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text, size }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`${method} ${u.href}: ${err.message}`)));
    req.end(body);
  });
}
