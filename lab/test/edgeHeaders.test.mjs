// The lab's field mode: its page site maps client addresses to countries and stand-in public addresses, on the
// local stack's Caddyfile, and passes them to the collector it proxies to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOSTS, stackCaddyfile } from '../../web/stack/stack.mjs';
import { edgeHeaders } from '../edgeHeaders.mjs';

const ports = { page: 1001, h2: 1002, h3: 1003, collector: 1004 };
const upstream = '198.18.0.2:8480';
const text = stackCaddyfile({ hosts: { page: HOSTS.page, h2: HOSTS.h2, h3: HOSTS.h3 }, ports, certPath: '/c/c.pem', keyPath: '/c/k.pem',
  site: { root: '/r/page', module: '/r/dist', fixtures: null, beacon: true }, beacons: { upstream } });
const page = (t) => t.slice(t.indexOf(`\nhttps://${HOSTS.page}:`) + 1);

test('the page site maps client addresses to countries and passes them to the collector', () => {
  const edited = page(edgeHeaders({ upstream, countryByClient: { '198.18.0.10': 'US', '198.18.0.11': 'DE' } })(text));
  assert.match(edited, /map \{remote_host\} \{client_country\} \{\n\t\t198\.18\.0\.10 US\n\t\t198\.18\.0\.11 DE\n\t\tdefault XX\n\t\}/);
  assert.match(edited, /reverse_proxy 198\.18\.0\.2:8480 \{\n\t\t\theader_up X-Country-Code \{client_country\}\n\t\t\}/);
});

test('a client with a network is forwarded as its stand-in address; without tables nothing changes', () => {
  const edited = page(edgeHeaders({ upstream, forwardedForByClient: { '198.18.0.10': '203.0.113.7' } })(text));
  assert.match(edited, /map \{remote_host\} \{client_forwarded_for\} \{\n\t\t198\.18\.0\.10 203\.0\.113\.7\n\t\tdefault \{remote_host\}/);
  assert.match(edited, /header_up X-Forwarded-For \{client_forwarded_for\}/);
  assert.equal(edgeHeaders({ upstream })(text), text);
});

test('bad entries and a Caddyfile without the beacon route fail loudly', () => {
  assert.throws(() => edgeHeaders({ upstream, countryByClient: { '198.18.0.10': 'usa' } }), /bad client country entry/);
  assert.throws(() => edgeHeaders({ upstream: '10.0.0.1:1', countryByClient: { '198.18.0.10': 'US' } })(text), /no beacon route/);
});
