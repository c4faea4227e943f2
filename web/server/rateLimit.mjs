// Per-client-network rate limit: a token bucket per IPv4 /24 or IPv6 /48 (a household, office or small ISP pool rather
// than one address, so rotating addresses inside a network does not escape it). Memory stays bounded: full buckets are
// forgotten (a full bucket is what a new network gets anyway).
import net from 'node:net';
import { normalizeIp } from './regionFor.mjs';

/** The network an address belongs to, as a key: '203.0.113.0/24', '2001:db8:1::/48'; 'invalid' for a non-address. */
export function networkKey(ip) {
  const s = normalizeIp(ip);
  if (!s) return 'invalid';
  if (net.isIPv4(s)) return `${s.slice(0, s.lastIndexOf('.'))}.0/24`;
  // Expand '::' so the first three groups are the /48.
  const [left, right = ''] = s.split('::');
  const head = left ? left.split(':') : [];
  const tail = s.includes('::') ? (right ? right.split(':') : []) : [];
  const groups = s.includes('::') ? [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail] : head;
  return `${groups.slice(0, 3).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/48`;
}

/**
 * perMinute tokens refill per minute up to burst; take(key) → {ok: true} or {ok: false, retryAfter: whole seconds}.
 * perMinute 0 → every take succeeds. now() in ms (tests pass a clock).
 */
export function createRateLimiter({ perMinute, burst, now = () => performance.now(), maxKeys = 100_000 }) {
  const buckets = new Map();
  const perMs = perMinute / 60_000;
  let lastSweep = now();

  function sweep(t) {
    lastSweep = t;
    for (const [key, b] of buckets) if (b.tokens + (t - b.at) * perMs >= burst) buckets.delete(key);
  }

  return {
    take(key) {
      if (perMinute <= 0) return { ok: true };
      const t = now();
      if (t - lastSweep > 60_000 || buckets.size > maxKeys) sweep(t);
      let b = buckets.get(key);
      if (!b) buckets.set(key, (b = { tokens: burst, at: t }));
      b.tokens = Math.min(burst, b.tokens + (t - b.at) * perMs);
      b.at = t;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)) };
    },
    get size() { return buckets.size; },
  };
}
