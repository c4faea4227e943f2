// Unit tests of the production origins Caddyfile (`h3probe origins`): listeners and their protocols, the /noop rules
// from web/server/originRules.mjs, the collector site, input validation and the command's exit status.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { originsCaddyfile, originsProblems } from '../../server/originsCaddyfile.mjs';
import { NOOP, NOOP_HEADERS, ORIGIN_PROTOCOLS } from '../../server/originRules.mjs';
import { SERVER_TIMING_PROTOCOL } from '../../src/browserHost.js';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';

const BIN = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bin/h3probe.mjs');
const base = { h2: 'h2.example.com', h3: 'h3.example.com', h2Bind: '203.0.113.2', h3Bind: '203.0.113.3' };
const listener = (text, key) => text.match(new RegExp(`servers ${key.replace(/[.[\]]/g, '\\$&')} \\{\\n\\t\\tprotocols ([^\\n]+)`))?.[1];
const site = (text, address) => {
  const start = text.indexOf(`\n${address} {`);
  return start < 0 ? undefined : text.slice(start + 1).split('\n}\n')[0];
};
const hasCaddy = spawnSync('caddy', ['version']).status === 0;

test('two bind addresses: the h2 listener speaks h1 h2 only, the h3 listener h1 h2 h3, both on 443', () => {
  const text = originsCaddyfile(base);
  assert.equal(listener(text, '203.0.113.2:443'), ORIGIN_PROTOCOLS.h2.join(' '));
  assert.equal(listener(text, '203.0.113.3:443'), ORIGIN_PROTOCOLS.h3.join(' '));
  assert.equal(listener(text, '203.0.113.2:443'), 'h1 h2');
  assert.match(site(text, 'https://h2.example.com'), /\n\tbind 203\.0\.113\.2\n/);
  assert.match(site(text, 'https://h3.example.com'), /\n\tbind 203\.0\.113\.3\n/);
  assert.doesNotMatch(text, /auto_https|tls /, 'ACME is the default: no tls directive, no auto_https change');
});

test('IPv6 bind addresses are bracketed in the listener key', () => {
  const text = originsCaddyfile({ ...base, h2Bind: '2001:db8::2', h3Bind: '2001:db8::3' });
  assert.equal(listener(text, '[2001:db8::2]:443'), 'h1 h2');
  assert.equal(listener(text, '[2001:db8::3]:443'), 'h1 h2 h3');
});

test('the port split puts the HTTP/2 origin on its own port and the HTTP/3 origin on 443', () => {
  const text = originsCaddyfile({ h2: 'h2.example.com', h3: 'h3.example.com', h2Port: 8443 });
  assert.equal(listener(text, ':8443'), 'h1 h2');
  assert.equal(listener(text, ':443'), 'h1 h2 h3');
  assert.ok(site(text, 'https://h2.example.com:8443'));
  assert.ok(site(text, 'https://h3.example.com'));
});

test('h3Port and collectorPort (h3probe trial): every site on a port of its own on one address, or refused when the origins share one', () => {
  const opts = { ...base, h2Bind: '127.0.0.1', h3Bind: '127.0.0.1', h2Port: 40001, h3Port: 40002, collectorPort: 40003,
    collector: 'beacon.example.com', collectorUpstream: '127.0.0.1:8787', collectorBind: '127.0.0.1' };
  const text = originsCaddyfile(opts);
  assert.equal(listener(text, '127.0.0.1:40001'), 'h1 h2');
  assert.equal(listener(text, '127.0.0.1:40002'), 'h1 h2 h3');
  assert.ok(site(text, 'https://h2.example.com:40001') && site(text, 'https://h3.example.com:40002') && site(text, 'https://beacon.example.com:40003'), text);
  assert.match(originsProblems({ ...opts, h3Port: 40001 }).join('\n'), /must differ/);
  assert.match(originsProblems({ ...opts, h3Port: 70000 }).join('\n'), /h3Port: "70000" is not a port number/);
});

test('--only emits one origin, without the other host', () => {
  const h2only = originsCaddyfile({ h2: 'h2.example.com', only: 'h2' });
  assert.equal(listener(h2only, ':443'), 'h1 h2');
  assert.equal(site(h2only, 'https://h3.example.com'), undefined);
  const h3only = originsCaddyfile({ h3: 'h3.example.com', only: 'h3' });
  assert.equal(listener(h3only, ':443'), 'h1 h2 h3');
  assert.equal(site(h3only, 'https://h2.example.com'), undefined);
});

test('both origins answer /noop with the status and every header of the rules, and 404 elsewhere', () => {
  const text = originsCaddyfile(base);
  for (const host of ['https://h2.example.com', 'https://h3.example.com']) {
    const s = site(text, host);
    assert.match(s, new RegExp(`@noop path ${NOOP.path}\\n`));
    assert.match(s, new RegExp(`\\trespond ${NOOP.status}\\n`));
    for (const h of NOOP_HEADERS) assert.ok(s.includes(`header ${h.name} `) && s.includes(h.caddy), `${host}: ${h.name}`);
    assert.match(s, /Server-Timing `proto;desc="\{http\.request\.proto\}"`/);
    assert.match(s, /handle \{\n\t\trespond 404\n\t\}/);
  }
});

test('page origins: Access-Control-Allow-Origin echoes a listed Origin, Timing-Allow-Origin lists them', () => {
  const s = site(originsCaddyfile({ ...base, pageOrigins: ['https://app.example.com', 'https://www.example.com'] }), 'https://h3.example.com');
  assert.match(s, /@fromPage \{\n\t\theader Origin https:\/\/app\.example\.com\n\t\theader Origin https:\/\/www\.example\.com\n\t\}/);
  assert.match(s, /header @fromPage Access-Control-Allow-Origin \{http\.request\.header\.Origin\}/);
  assert.match(s, /header Vary Origin/);
  assert.match(s, /header Timing-Allow-Origin `https:\/\/app\.example\.com, https:\/\/www\.example\.com`/);
  assert.doesNotMatch(s, /Access-Control-Allow-Origin \*/);
});

test('tls: internal and certificate files; email goes to the global options', () => {
  assert.match(originsCaddyfile({ ...base, tls: 'internal' }), /\ttls internal\n/);
  assert.match(originsCaddyfile({ ...base, tls: 'internal' }), /^\tskip_install_trust$/m, 'never touches the machine\'s trust store');
  assert.doesNotMatch(originsCaddyfile(base), /skip_install_trust/);
  const files = originsCaddyfile({ ...base, tls: '/etc/c.pem,/etc/k.pem' });
  assert.equal(files.match(/\ttls "\/etc\/c\.pem" "\/etc\/k\.pem"\n/g).length, 2);
  assert.match(originsCaddyfile({ ...base, email: 'ops@example.com' }), /^\temail ops@example\.com$/m);
});

test('the admin API is off unless a loopback address is given', () => {
  assert.match(originsCaddyfile(base), /^\{\n\tadmin off\n/m);
  assert.match(originsCaddyfile({ ...base, admin: 'localhost:2019' }), /^\{\n\tadmin localhost:2019\n/m);
  assert.match(originsCaddyfile({ ...base, admin: '[::1]:2020' }), /^\tadmin \[::1\]:2020$/m);
  for (const admin of ['0.0.0.0:2019', ':2019', 'localhost', 'on', '203.0.113.2:2019', 'localhost:70000']) {
    assert.match(originsProblems({ ...base, admin }).join('\n'), /--admin must be off or a loopback address/, admin);
  }
});

test('the collector site proxies /beacon only, on its own address', () => {
  const text = originsCaddyfile({ ...base, collector: 'beacon.example.com', collectorUpstream: '127.0.0.1:8787', collectorBind: '203.0.113.4' });
  const s = site(text, 'https://beacon.example.com');
  assert.match(s, /bind 203\.0\.113\.4/);
  assert.match(s, /@beacon path \/beacon\n\thandle @beacon \{\n\t\treverse_proxy 127\.0\.0\.1:8787\n\t\}/);
  assert.match(s, /respond 404/);
});

test('invalid options: one clear message each, and the generator refuses', () => {
  const cases = [
    [{ ...base, h2: 'https://h2.example.com' }, /--h2: .* is not a host name/],
    [{ ...base, h3: 'h3.example.com:443' }, /--h3: .* is not a host name/],
    [{ ...base, h3: 'H2.example.com' }, /must be different host names/],
    [{ h2: 'h2.example.com', h3: 'h3.example.com' }, /cannot share one listener/],
    [{ ...base, h3Bind: undefined }, /--h2-bind and --h3-bind go together/],
    [{ ...base, h3Bind: base.h2Bind }, /must differ/],
    [{ ...base, h2Bind: '203.0.113' }, /--h2-bind: .* not an IPv4 or IPv6 address/],
    [{ ...base, h3: undefined }, /--h3 HOST is required/],
    [{ ...base, only: 'h4' }, /--only must be h2 or h3/],
    [{ ...base, h2Port: 70000 }, /--h2-port/],
    [{ ...base, pageOrigins: ['https://app.example.com/'] }, /--page-origin/],
    [{ ...base, pageOrigins: ['http://app.example.com'] }, /--page-origin/],
    [{ ...base, collector: 'beacon.example.com' }, /go together/],
    [{ ...base, collector: 'beacon.example.com', collectorUpstream: '127.0.0.1' , collectorBind: '203.0.113.4' }, /--collector-upstream/],
    [{ ...base, collector: 'h2.example.com', collectorUpstream: '127.0.0.1:8787', collectorBind: '203.0.113.4' }, /host name of its own/],
    [{ ...base, collector: 'beacon.example.com', collectorUpstream: '127.0.0.1:8787' }, /--collector-bind IP is needed/],
    [{ ...base, email: 'not-an-address' }, /--email/],
    [{ ...base, tls: 'letsencrypt' }, /--tls must be/],
    [{ ...base, tls: '/a.pem,/b".pem' }, /quotes/],
  ];
  for (const [opts, pattern] of cases) {
    assert.match(originsProblems(opts).join('\n'), pattern, JSON.stringify(opts));
    assert.throws(() => originsCaddyfile(opts), pattern);
  }
  assert.deepEqual(originsProblems(base), []);
});

test('h3probe origins: prints the Caddyfile, writes --out, exits 2 with the problems on bad input', () => {
  const args = ['origins', '--h2', 'h2.example.com', '--h3', 'h3.example.com', '--h2-bind', '203.0.113.2', '--h3-bind', '203.0.113.3'];
  const printed = execFileSync(process.execPath, [BIN, ...args]).toString();
  assert.equal(printed, originsCaddyfile(base));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-origins-'));
  try {
    execFileSync(process.execPath, [BIN, ...args, '--out', path.join(dir, 'Caddyfile')]);
    assert.equal(fs.readFileSync(path.join(dir, 'Caddyfile'), 'utf8'), printed);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const bad = spawnSync(process.execPath, [BIN, 'origins', '--h2', 'same.example.com', '--h3', 'same.example.com', '--h2-port', '8443']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr.toString(), /^h3probe origins: --h2 and --h3 must be different host names/);
  const unknown = spawnSync(process.execPath, [BIN, 'origins', '--h4', 'x']);
  assert.equal(unknown.status, 2);
  const help = spawnSync(process.execPath, [BIN, 'origins', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout.toString(), /--h2-bind IP --h3-bind IP/);
});

test('Caddy accepts every form the generator writes, formatted as caddy fmt would', { skip: hasCaddy ? false : 'caddy not installed' }, () => {
  const forms = [
    { ...base, email: 'ops@example.com', collector: 'beacon.example.com', collectorUpstream: '127.0.0.1:8787', collectorBind: '203.0.113.4' },
    { ...base, pageOrigins: ['https://app.example.com', 'https://www.example.com'], tls: 'internal', admin: 'localhost:2019' },
    { h2: 'h2.example.com', h3: 'h3.example.com', h2Port: 8443, tls: '/etc/c.pem,/etc/k.pem' },
    { h3: 'h3.example.com', only: 'h3' },
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-origins-'));
  try {
    for (const opts of forms) {
      const file = path.join(dir, 'Caddyfile');
      const text = originsCaddyfile(opts);
      fs.writeFileSync(file, text);
      const adapted = spawnSync('caddy', ['adapt', '--config', file, '--adapter', 'caddyfile']);
      assert.equal(adapted.status, 0, adapted.stderr.toString());
      assert.doesNotMatch(adapted.stderr.toString(), /not formatted/, JSON.stringify(opts));
      const config = JSON.parse(adapted.stdout);
      if (opts.admin) assert.equal(config.admin.listen, opts.admin);
      else assert.equal(config.admin.disabled, true, 'admin API off');
      const servers = config.apps.http.servers;
      // One server per listener, each with the protocols of its origin kind.
      const byListen = Object.fromEntries(Object.values(servers).map((s) => [s.listen.join(','), s.protocols?.join(' ')]));
      if (opts.h2Bind) assert.equal(byListen[`${opts.h2Bind}:443`], 'h1 h2');
      if (opts.h3Bind) assert.equal(byListen[`${opts.h3Bind}:443`], 'h1 h2 h3');
      if (opts.h2Port) assert.deepEqual([byListen[`:${opts.h2Port}`], byListen[':443']], ['h1 h2', 'h1 h2 h3']);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the Server-Timing the origins send is the one the module reads and the core classifies by', async () => {
  const schema = (await loadH3probeNode()).schema();
  const header = NOOP_HEADERS.find((h) => h.name === 'Server-Timing');
  assert.equal(SERVER_TIMING_PROTOCOL, schema.serverTimingProtocol);
  for (const value of [header.value, header.caddy, header.nginx]) assert.ok(value.startsWith(`${schema.serverTimingProtocol};desc=`), value);
  // What Caddy's placeholder and nginx's variable expand to, for each protocol an origin speaks: names the core knows.
  for (const server of ['HTTP/1.1', 'HTTP/2.0', 'HTTP/3.0']) assert.ok(schema.serverProtocols[server], server);
  assert.deepEqual([schema.serverProtocols['HTTP/2.0'], schema.serverProtocols['HTTP/3.0']], ['h2', 'h3']);
});
