// The collector's per-network rate limit and client address as logic, on a test clock: networks by prefix, the token
// bucket, X-Forwarded-For behind a trusted proxy only. Pure logic: neither the WebAssembly build nor a server. (429
// over real HTTP: collectorService.test.mjs.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createClientLocator } from '../../server/clientLocator.mjs';
import { createRateLimiter, networkKey } from '../../server/rateLimit.mjs';

describe('rate limit', () => {
  test('networks are IPv4 /24 and IPv6 /48', () => {
    assert.equal(networkKey('203.0.113.77'), '203.0.113.0/24');
    assert.equal(networkKey('::ffff:203.0.113.9'), '203.0.113.0/24');
    assert.equal(networkKey('2001:db8:abcd:12::1'), '2001:db8:abcd::/48');
    assert.equal(networkKey('2001:db8::1'), '2001:db8:0::/48');
    assert.equal(networkKey('2001:0db8:0001:ffff::'), '2001:db8:1::/48');
    assert.equal(networkKey('nonsense'), 'invalid');
  });

  test('token bucket: burst, then refusal with Retry-After, then refill at the rate', () => {
    let t = 0;
    const limiter = createRateLimiter({ perMinute: 6, burst: 3, now: () => t });
    for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take('a'), { ok: true });
    assert.deepEqual(limiter.take('a'), { ok: false, retryAfter: 10 });
    assert.deepEqual(limiter.take('b'), { ok: true });
    t = 10_000;
    assert.deepEqual(limiter.take('a'), { ok: true });
    assert.equal(limiter.take('a').ok, false);
    t = 10 * 60_000;
    assert.equal(limiter.take('c').ok, true);
    assert.equal(limiter.size, 1, 'full buckets are forgotten');
    assert.equal(createRateLimiter({ perMinute: 0, burst: 1 }).take('a').ok, true);
  });

  test('the client network comes from X-Forwarded-For only behind a trusted proxy', () => {
    const req = (peer, xff) => ({ socket: { remoteAddress: peer }, headers: xff ? { 'x-forwarded-for': xff } : {} });
    const trusting = createClientLocator({ trustedProxies: ['198.51.100.0/24'], lookupCountry: () => null });
    const plain = createClientLocator({ trustedProxies: [], lookupCountry: () => null });
    assert.equal(trusting.client(req('198.51.100.4', '8.8.8.8')).address, '8.8.8.8');
    assert.equal(trusting.client(req('198.51.100.4', '1.1.1.1, 8.8.8.8, 198.51.100.9')).address, '8.8.8.8');
    assert.equal(trusting.client(req('198.51.100.4', 'garbage')).address, '198.51.100.4');
    assert.equal(plain.client(req('198.51.100.4', '8.8.8.8')).address, '198.51.100.4');
    assert.equal(plain.client(req('::1', '8.8.4.4')).address, '8.8.4.4', 'loopback is always trusted');
  });
});
