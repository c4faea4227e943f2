// Maps a client IP to a coarse region; a placeholder until the IP-to-region lookup lands (later issue): loopback is 'local'.
import net from 'node:net';

export function regionFor(ip) {
  return isLoopback(ip) ? 'local' : 'unknown';
}

export function isLoopback(ip) {
  if (typeof ip !== 'string') return false;
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return (net.isIPv4(v4) && v4.startsWith('127.')) || ip === '::1';
}
