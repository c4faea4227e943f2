// The local stack's Caddyfile: the text `h3probe origins` writes for the same names (bar loopback ports and
// certificates), then the page site; and each fault a test injects changes only what it names.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HOSTS, stackCaddyfile } from '../../stack/stack.mjs';
import { injectFaults } from '../../stack/faults.mjs';
import { NOOP_HEADERS } from '../../server/originRules.mjs';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/h3probe.mjs');
const cert = { certPath: '/c/cert.pem', keyPath: '/c/key.pem' };
const site = { root: '/r/page', module: '/r/dist', fixtures: '/r/fixtures', csp: '', beacon: true };
const ports = { page: 1001, h2: 1002, h3: 1003, h2b: 1005, h3b: 1006, collector: 1004 };
const base = { hosts: HOSTS, ports, ...cert, site };
const serverBlock = (text, port) => text.match(new RegExp(`servers 127\\.0\\.0\\.1:${port} \\{\\n\\t\\tprotocols ([^\\n]+)`))?.[1];
const siteBlock = (text, host) => text.slice(text.indexOf(`\nhttps://${host}:`) + 1).split('\n}\n')[0];

test("the stack's origins are `h3probe origins`' text for the same names, bar the loopback ports; the page site follows", () => {
  const hosts = { page: HOSTS.page, h2: HOSTS.h2, h3: HOSTS.h3 };
  const text = stackCaddyfile({ ...base, hosts });
  const printed = execFileSync(process.execPath, [BIN, 'origins', '--h2', HOSTS.h2, '--h3', HOSTS.h3, '--h2-bind', '127.0.0.1',
    '--h3-bind', '127.0.0.1', '--h2-port', String(ports.h2), '--tls', `${cert.certPath},${cert.keyPath}`], { encoding: 'utf8' });
  // The command puts the HTTP/3 origin on 443; the stack gives it a free loopback port.
  const normalized = text.replaceAll(`${HOSTS.h3}:${ports.h3}`, HOSTS.h3).replaceAll(`127.0.0.1:${ports.h3} {`, '127.0.0.1:443 {');
  assert.ok(normalized.startsWith(printed), `the stack's text begins with the command's:\n${normalized.slice(0, printed.length)}`);
  assert.match(normalized.slice(printed.length), /^\nhttps:\/\/page\.h3probe\.test:1001 \{\n/);
  assert.equal(text.match(/^https:\/\//gm).length, 3, 'two origins and the page');
});

test('only the HTTP/3 origins speak h3; the A/A origins listen and answer like the first of their kind', () => {
  const text = stackCaddyfile(base);
  assert.equal(serverBlock(text, 1002), 'h1 h2');
  assert.equal(serverBlock(text, 1003), 'h1 h2 h3');
  assert.equal(serverBlock(text, 1005), 'h1 h2');
  assert.equal(serverBlock(text, 1006), 'h1 h2 h3');
  assert.match(text, /^\tadmin off$/m);
  assert.match(text, /^\tauto_https disable_redirects$/m, 'no redirect listener on port 80');
  for (const host of [HOSTS.h2, HOSTS.h3, HOSTS.h2b, HOSTS.h3b]) {
    const block = siteBlock(text, host);
    for (const h of NOOP_HEADERS) assert.ok(block.includes(`header ${h.name} `), `${host}: ${h.name}`);
    assert.match(block, /\n\t\trespond 204\n/);
  }
});

test('h3: false leaves the HTTP/3 origins on TCP only', () => {
  const text = injectFaults(stackCaddyfile(base), { h3: false });
  for (const port of [1002, 1003, 1005, 1006]) assert.equal(serverBlock(text, port), 'h1 h2');
});

test('tao: false drops Timing-Allow-Origin from every origin, and nothing else', () => {
  const text = stackCaddyfile(base);
  const faulty = injectFaults(text, { tao: false });
  assert.doesNotMatch(faulty, /Timing-Allow-Origin/);
  assert.equal(faulty, text.replace(/\n\t\theader Timing-Allow-Origin [^\n]*/g, ''));
});

test('noopStatus, a delayed upstream and claimProtocol change only the /noop answer', () => {
  const text = stackCaddyfile(base);
  assert.match(siteBlock(injectFaults(text, { noopStatus: 500 }), HOSTS.h2), /\n\t\trespond 500\n/);
  assert.match(siteBlock(injectFaults(text, { noopUpstream: 4242 }), HOSTS.h3), /reverse_proxy 127\.0\.0\.1:4242/);
  const claimed = siteBlock(injectFaults(text, { claimProtocol: 'HTTP/1.1' }), HOSTS.h3);
  assert.match(claimed, /Server-Timing `proto;desc="HTTP\/1\.1"`/);
  assert.throws(() => injectFaults(text, { noopStatus: 99 }), /noopStatus/);
  assert.throws(() => injectFaults(text, { claimProtocol: 'a b' }), /claimProtocol/);
  assert.equal(injectFaults(text, {}), text, 'no fault: the text as written');
});

test('a fault whose line the generator no longer writes fails loudly instead of silently injecting nothing', () => {
  assert.throws(() => injectFaults('{\n}\n', { h3: false }), /fault h3: false: the origins' Caddyfile has nothing it changes/);
  assert.throws(() => injectFaults('{\n}\n', { tao: false }), /fault tao: false/);
});

test('without HTTP/2 origins (h2Down) the HTTP/3 origin stands alone', () => {
  const text = stackCaddyfile({ ...base, hosts: { page: HOSTS.page, h3: HOSTS.h3 } });
  assert.doesNotMatch(text, /h2\.h3probe\.test/);
  assert.equal(serverBlock(text, 1002), undefined);
  assert.equal(serverBlock(text, 1003), 'h1 h2 h3');
});

test('the page site serves the page, the built module and the fixtures, and proxies beacons to the collector', () => {
  const page = siteBlock(stackCaddyfile(base), HOSTS.page);
  assert.match(page, /handle_path \/h3probe\/\* \{\n\t\troot \* "\/r\/dist"/);
  assert.match(page, /handle_path \/fixtures\/\* \{\n\t\troot \* "\/r\/fixtures"/);
  assert.match(page, /reverse_proxy 127\.0\.0\.1:1004/);
  assert.match(page, /root \* "\/r\/page"/);
  assert.match(siteBlock(stackCaddyfile({ ...base, beacons: { status: 500 } }), HOSTS.page), /handle @beacon \{\n\t\trespond 500/);
});

test("h3probe trial's layout: a collector site of its own on the page's listener, and a page site without /beacon", () => {
  const hosts = { page: 'localhost', h2: 'h2.example.com', h3: 'h3.example.com', collector: 'beacon.example.com' };
  const text = stackCaddyfile({ ...base, hosts, site: { root: '/site', module: null, fixtures: null, beacon: false } });
  assert.match(siteBlock(text, 'beacon.example.com'), /^https:\/\/beacon\.example\.com:1001 \{\n\tbind 127\.0\.0\.1\n/);
  assert.match(siteBlock(text, 'beacon.example.com'), /reverse_proxy 127\.0\.0\.1:1004/);
  const page = siteBlock(text, 'localhost');
  assert.doesNotMatch(page, /beacon|h3probe\/|fixtures/);
  assert.match(page, /root \* "\/site"/);
});

test('bindAddress moves every site and its listener key to that address', () => {
  const text = stackCaddyfile({ ...base, bindAddress: '198.18.0.2' });
  assert.doesNotMatch(text, /127\.0\.0\.1:100[12356]|bind 127\.0\.0\.1/);
  assert.equal(text.match(/\tbind 198\.18\.0\.2\n/g).length, 5);
  assert.match(text, /servers 198\.18\.0\.2:1003 \{\n\t\tprotocols h1 h2 h3/);
  assert.throws(() => stackCaddyfile({ ...base, bindAddress: '1.2.3.4 { }' }), /not an IPv4 or IPv6 address/);
});
