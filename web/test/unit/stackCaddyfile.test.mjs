// Unit tests of the rendered Caddyfile: which listener speaks which protocols and which headers the probe endpoints send.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { caddyfile } from '../../devstack/caddyfile.mjs';

const base = {
  certPath: '/c/cert.pem', keyPath: '/c/key.pem',
  hosts: { page: 'page.h3probe.test', h2: 'h2.h3probe.test', h3: 'h3.h3probe.test' },
  ports: { page: 1001, h2: 1002, h3: 1003, collector: 1004 },
  roots: { page: '/r/page', module: '/r/dist' },
};
const serverBlock = (text, port) => text.match(new RegExp(`servers 127\\.0\\.0\\.1:${port} \\{\\n\\t\\tprotocols ([^\\n]+)`))?.[1];
const siteBlock = (text, host) => text.slice(text.indexOf(`https://${host}`)).split('\n}\n')[0];

test('only the h3 origin listener speaks h3', () => {
  const text = caddyfile(base);
  assert.equal(serverBlock(text, 1001), 'h1 h2');
  assert.equal(serverBlock(text, 1002), 'h1 h2');
  assert.equal(serverBlock(text, 1003), 'h1 h2 h3');
  assert.match(text, /admin off/);
  assert.match(text, /auto_https off/);
});

test('h3:false leaves the h3 origin on TCP only', () => {
  assert.equal(serverBlock(caddyfile({ ...base, h3: false }), 1003), 'h1 h2');
});

test('both origins answer /noop with CORS and Timing-Allow-Origin unless tao is false', () => {
  for (const host of ['h2.h3probe.test', 'h3.h3probe.test']) {
    const site = siteBlock(caddyfile(base), host);
    assert.match(site, /Access-Control-Allow-Origin \*/);
    assert.match(site, /Timing-Allow-Origin \*/);
    assert.match(site, /Cache-Control no-store/);
    assert.match(site, /respond 204/);
    assert.doesNotMatch(siteBlock(caddyfile({ ...base, tao: false }), host), /Timing-Allow-Origin/);
  }
});

test('noopStatus and a delayed upstream change only the /noop answer', () => {
  assert.match(siteBlock(caddyfile({ ...base, noopStatus: 500 }), 'h2.h3probe.test'), /respond 500/);
  assert.match(siteBlock(caddyfile({ ...base, noopUpstream: 4242 }), 'h3.h3probe.test'), /reverse_proxy 127\.0\.0\.1:4242/);
});

test('h2Down drops the h2 origin site and its listener', () => {
  const text = caddyfile({ ...base, h2Down: true });
  assert.doesNotMatch(text, /h2\.h3probe\.test/);
  assert.equal(serverBlock(text, 1002), undefined);
});

test('the page site serves the page and the built module folder and proxies beacons to the collector', () => {
  const site = siteBlock(caddyfile(base), 'page.h3probe.test');
  assert.match(site, /handle_path \/h3probe\/\* \{\n\t\troot \* "\/r\/dist"/);
  assert.match(site, /reverse_proxy 127\.0\.0\.1:1004/);
  assert.match(site, /root \* "\/r\/page"/);
});

test('bindAddress moves every site and its listener key to that address', () => {
  const text = caddyfile({ ...base, bindAddress: '198.18.0.2' });
  assert.doesNotMatch(text, /127\.0\.0\.1:100[123]|bind 127\.0\.0\.1/);
  assert.equal(text.match(/\tbind 198\.18\.0\.2\n/g).length, 3);
  assert.match(text, /servers 198\.18\.0\.2:1003 \{\n\t\tprotocols h1 h2 h3/);
  assert.throws(() => caddyfile({ ...base, bindAddress: '1.2.3.4 { }' }), /IPv4/);
});

test('the second origins of an A/A test listen and answer like the first origin of their kind', () => {
  const aa = { ...base, hosts: { ...base.hosts, h2b: 'h2b.h3probe.test', h3b: 'h3b.h3probe.test' },
    ports: { ...base.ports, h2b: 1005, h3b: 1006 } };
  const text = caddyfile(aa);
  assert.equal(serverBlock(text, 1005), 'h1 h2');
  assert.equal(serverBlock(text, 1006), 'h1 h2 h3');
  for (const host of ['h2b.h3probe.test', 'h3b.h3probe.test']) {
    assert.match(siteBlock(text, host), /Timing-Allow-Origin \*/);
    assert.match(siteBlock(text, host), /respond 204/);
  }
  assert.equal(serverBlock(caddyfile({ ...aa, h3: false }), 1006), 'h1 h2');
  assert.equal(serverBlock(caddyfile({ ...aa, h2Down: true }), 1005), undefined);
});

test('the local origins send every /noop header of the production rules (web/server/originRules.mjs)', async () => {
  const { NOOP_HEADERS } = await import('../../server/originRules.mjs');
  for (const host of ['h2.h3probe.test', 'h3.h3probe.test']) {
    const site = siteBlock(caddyfile(base), host);
    for (const h of NOOP_HEADERS) assert.ok(site.includes(`header ${h.name} `) && site.includes(h.caddy), `${host}: ${h.name}`);
  }
});

test('the lab field mode: the page site maps client addresses to countries and passes them to the collector it proxies to', () => {
  const site = siteBlock(caddyfile({ ...base, collectorUpstream: '198.18.0.2:8480',
    countryByClient: { '198.18.0.10': 'US', '198.18.0.11': 'DE' } }), 'page.h3probe.test');
  assert.match(site, /map \{remote_host\} \{client_country\} \{\n\t\t198\.18\.0\.10 US\n\t\t198\.18\.0\.11 DE\n\t\tdefault XX\n\t\}/);
  assert.match(site, /reverse_proxy 198\.18\.0\.2:8480 \{\n\t\t\theader_up X-Country-Code \{client_country\}\n\t\t\}/);
  assert.throws(() => caddyfile({ ...base, countryByClient: { '198.18.0.10': 'usa' } }), /bad client country entry/);
  assert.throws(() => caddyfile({ ...base, collectorUpstream: 'collector:80' }), /IPv4:port/);
  // Without the table nothing is set: the collector locates the client by address, as before.
  assert.doesNotMatch(siteBlock(caddyfile(base), 'page.h3probe.test'), /X-Country-Code|map /);
});
