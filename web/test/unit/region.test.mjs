// Unit tests of client location: the bundled country database on well-known addresses, the country → region table,
// loopback and private ranges, and the trusted-proxy rules (headers believed only from configured proxies).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createCountryLookup, isNotPublic, locateIp, normalizeIp, regionFor } from '../../server/regionFor.mjs';
import { REGIONS, regionForCountry } from '../../server/regionForCountry.mjs';
import { createClientLocator, forwardedClient, parseTrustedProxies } from '../../server/clientLocator.mjs';

describe('regionFor with the bundled IPtoASN country database', () => {
  const lookup = createCountryLookup();
  // Addresses whose holder and country are long-standing (root servers, registries, public resolvers, national NICs),
  // each answer checked in the bundled database.
  const samples = [
    ['8.8.8.8', 'US', 'North America'], // Google Public DNS
    ['2001:4860:4860::8888', 'US', 'North America'],
    ['193.0.14.129', 'NL', 'Europe'], // k.root-servers.net, RIPE NCC Amsterdam
    ['2001:67c:2e8:22::c100:68b', 'NL', 'Europe'], // www.ripe.net
    ['212.27.48.10', 'FR', 'Europe'], // Free (French ISP)
    ['202.12.27.33', 'JP', 'Asia'], // m.root-servers.net, WIDE Project
    ['168.126.63.1', 'KR', 'Asia'], // KT's public resolver
    ['200.160.0.8', 'BR', 'South America'], // NIC.br
    ['201.144.1.1', 'MX', 'Central America'], // Telmex
    ['186.15.0.1', 'CR', 'Central America'],
    ['41.0.0.1', 'ZA', 'Africa'],
    ['139.130.4.5', 'AU', 'Oceania'], // Telstra name server
  ];
  for (const [ip, country, region] of samples) {
    test(`${ip} is in ${country}, region ${region}`, () => {
      assert.equal(lookup(ip), country);
      assert.deepEqual(locateIp(ip, lookup), { country, region });
      assert.equal(regionFor(ip), region);
    });
  }

  test('loopback is local, with no country, in every spelling', () => {
    for (const ip of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '[::1]']) {
      assert.deepEqual(locateIp(ip, lookup), { country: null, region: 'local' }, ip);
    }
  });

  test('private, shared, link-local, documentation and benchmark ranges are unknown', () => {
    for (const ip of ['10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '100.64.0.1', '169.254.1.1', '192.0.2.7',
      '198.18.0.2', '203.0.113.9', 'fd12:3456::1', 'fe80::1', '2001:db8::1', '::ffff:10.0.0.1']) {
      assert.equal(isNotPublic(ip), true, ip);
      assert.deepEqual(locateIp(ip, lookup), { country: null, region: 'unknown' }, ip);
    }
    assert.equal(isNotPublic('172.32.0.1'), false);
  });

  test('garbage is unknown, not an error', () => {
    for (const ip of [undefined, null, '', 'not-an-ip', '1.2.3', '999.1.1.1']) assert.equal(regionFor(ip), 'unknown');
    assert.equal(normalizeIp('::FFFF:8.8.8.8'), '8.8.8.8');
  });
});

describe('regionForCountry', () => {
  test('keeps North and Central America apart, the Caribbean with Central America', () => {
    assert.equal(regionForCountry('US'), 'North America');
    assert.equal(regionForCountry('CA'), 'North America');
    for (const c of ['MX', 'GT', 'PA', 'CU', 'JM', 'DO', 'PR']) assert.equal(regionForCountry(c), 'Central America', c);
    assert.equal(regionForCountry('CO'), 'South America');
  });

  test('documents the border cases: Russia Europe, Turkey Asia, Egypt Africa', () => {
    assert.equal(regionForCountry('RU'), 'Europe');
    assert.equal(regionForCountry('TR'), 'Asia');
    assert.equal(regionForCountry('EG'), 'Africa');
    assert.equal(regionForCountry('nz'), 'Oceania');
  });

  test('an unknown code or a non-string is unknown', () => {
    for (const c of ['ZZ', 'XX', 'AQ', '', null, 42]) assert.equal(regionForCountry(c), 'unknown');
  });

  test('every region name it returns is one of REGIONS', () => {
    const seen = new Set();
    for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) seen.add(regionForCountry(String.fromCharCode(a, b)));
    seen.delete('unknown');
    assert.deepEqual([...seen].sort(), [...REGIONS].sort());
  });
});

describe('client location behind proxies', () => {
  const lookupCountry = (ip) => ({ '8.8.8.8': 'US', '202.12.27.33': 'JP', '193.0.14.129': 'NL' })[ip] ?? null;
  const req = (peer, headers = {}) => ({ socket: { remoteAddress: peer }, headers });
  // The country and region only: the network's own cases are in network.test.mjs.
  const place = (locator) => (r) => {
    const { country, region } = locator(r);
    return { country, region };
  };
  const locate = place(createClientLocator({ trustedProxies: '198.51.100.7, 203.0.113.0/24, 2001:db8::/32', lookupCountry,
    lookupNetwork: () => null }, {}));

  test('a direct public peer is located by its own address, headers ignored', () => {
    assert.deepEqual(locate(req('202.12.27.33')), { country: 'JP', region: 'Asia' });
    assert.deepEqual(locate(req('202.12.27.33', { 'cf-ipcountry': 'US', 'x-forwarded-for': '8.8.8.8' })), { country: 'JP', region: 'Asia' });
  });

  test('the country header of a trusted proxy wins, in any case, from v4 or v6 proxies and CIDRs', () => {
    assert.deepEqual(locate(req('198.51.100.7', { 'cf-ipcountry': 'de' })), { country: 'DE', region: 'Europe' });
    assert.deepEqual(locate(req('::ffff:203.0.113.99', { 'x-country-code': 'BR', 'x-forwarded-for': '8.8.8.8' })),
      { country: 'BR', region: 'South America' });
    assert.deepEqual(locate(req('2001:db8::5', { 'cf-ipcountry': 'JP' })), { country: 'JP', region: 'Asia' });
  });

  test('an untrusted peer cannot set the country header', () => {
    assert.deepEqual(locate(req('198.51.100.8', { 'cf-ipcountry': 'JP' })), { country: null, region: 'unknown' });
    assert.deepEqual(locate(req('193.0.14.129', { 'cf-ipcountry': 'JP' })), { country: 'NL', region: 'Europe' });
  });

  test("a trusted proxy's X-Forwarded-For gives the client: the nearest untrusted hop, not a spoofed first entry", () => {
    assert.deepEqual(locate(req('198.51.100.7', { 'x-forwarded-for': '8.8.8.8' })), { country: 'US', region: 'North America' });
    assert.deepEqual(locate(req('198.51.100.7', { 'x-forwarded-for': '202.12.27.33, 8.8.8.8, 203.0.113.5' })),
      { country: 'US', region: 'North America' });
  });

  test('Cloudflare XX and T1 are not countries: the forwarded address decides', () => {
    assert.deepEqual(locate(req('198.51.100.7', { 'cf-ipcountry': 'XX', 'x-forwarded-for': '8.8.8.8' })),
      { country: 'US', region: 'North America' });
    assert.deepEqual(locate(req('198.51.100.7', { 'cf-ipcountry': 'T1' })), { country: null, region: 'unknown' });
  });

  test('loopback is always trusted, so the local Caddy forwards the client and a loopback client is local', () => {
    const plain = place(createClientLocator({ lookupCountry, lookupNetwork: () => null }, {}));
    assert.deepEqual(plain(req('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' })), { country: null, region: 'local' });
    assert.deepEqual(plain(req('::ffff:127.0.0.1', { 'x-forwarded-for': '8.8.8.8' })), { country: 'US', region: 'North America' });
    assert.deepEqual(plain(req('127.0.0.1')), { country: null, region: 'local' });
    assert.deepEqual(plain(req('198.51.100.7', { 'x-forwarded-for': '8.8.8.8' })), { country: null, region: 'unknown' });
  });

  test('the environment configures proxies and header names when options do not', () => {
    const env = { H3PROBE_TRUSTED_PROXIES: '198.51.100.0/24', H3PROBE_COUNTRY_HEADERS: 'X-Geo-Country' };
    const fromEnv = place(createClientLocator({ lookupCountry, lookupNetwork: () => null }, env));
    assert.deepEqual(fromEnv(req('198.51.100.200', { 'x-geo-country': 'JP', 'cf-ipcountry': 'US' })), { country: 'JP', region: 'Asia' });
    assert.deepEqual(fromEnv(req('198.51.100.200', { 'cf-ipcountry': 'US' })), { country: null, region: 'unknown' });
  });

  test('a malformed trusted-proxy entry is an error at start, not a silent hole', () => {
    for (const bad of ['1.2.3.4/33', 'proxy.example', '10.0.0.0/8/1', '::1/129']) assert.throws(() => parseTrustedProxies(bad), /trusted proxies/);
    assert.doesNotThrow(() => parseTrustedProxies(' 10.0.0.0/8 , ::1 ,'));
  });

  test('forwardedClient: a malformed hop stops the walk as invalid', () => {
    const trusted = (ip) => ip === '10.0.0.1';
    assert.equal(forwardedClient('8.8.8.8, junk, 10.0.0.1', trusted), 'invalid');
    assert.equal(forwardedClient('10.0.0.1', trusted), '10.0.0.1');
    assert.equal(forwardedClient('', trusted), null);
  });
});
