// docs/cdn.md's edge handlers, run literally: each answers GET /noop as the origin rules say (web/server/originRules.mjs,
// the rules `h3probe doctor` checks), and refuses other methods. The Fastly VCL cannot run here: its lines are checked
// against the same rules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { NOOP, NOOP_HEADERS } from '../../server/originRules.mjs';

const DOC = fs.readFileSync(new URL('../../../docs/cdn.md', import.meta.url), 'utf8');
const REQUIRED = NOOP_HEADERS.filter((h) => h.required);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-cdn-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The fenced block after `<!-- marker -->`. */
function block(marker) {
  const at = DOC.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `docs/cdn.md has a <!-- ${marker} --> block`);
  return /```[a-z]*\n([\s\S]*?)\n```/.exec(DOC.slice(at))[1];
}

async function importBlock(marker) {
  const file = path.join(tmp, `${marker}.mjs`);
  fs.writeFileSync(file, block(marker));
  return import(pathToFileURL(file).href);
}

/** headers: name → value, any case. Every required /noop header with its rule's value. */
function assertNoopHeaders(headers, where) {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const rule of REQUIRED) assert.equal(lower[rule.name.toLowerCase()], rule.value, `${where}: ${rule.name}`);
}

test('the Cloudflare Worker answers GET /noop with the status and headers of the rules, and nothing else', async () => {
  const worker = (await importBlock('cloudflare-worker')).default;
  const res = await worker.fetch(new Request('https://probe.example-h3.com/noop?h3probe=1'));
  assert.equal(res.status, NOOP.status);
  assertNoopHeaders(Object.fromEntries(res.headers), 'worker');
  assert.equal(await res.text(), '');
  assert.notEqual((await worker.fetch(new Request('https://probe.example-h3.com/noop', { method: 'POST', body: 'x' }))).status, NOOP.status);
});

test('the CloudFront Function makes the /noop response itself', () => {
  // A CloudFront Function is a script that defines handler(event), not a module.
  const handler = new Function(`${block('cloudfront-function')}\nreturn handler;`)();
  const event = (method) => ({ version: '1.0', request: { method, uri: '/noop', querystring: { h3probe: { value: '1' } }, headers: {} } });
  const res = handler(event('GET'));
  assert.equal(res.statusCode, NOOP.status);
  for (const [name, v] of Object.entries(res.headers)) assert.equal(name, name.toLowerCase(), 'CloudFront wants lower-case header names');
  assertNoopHeaders(Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, v.value])), 'function');
  assert.equal(res.body, undefined);
  assert.notEqual(handler(event('POST')).statusCode, NOOP.status);
});

test('the Akamai EdgeWorker responds with the rules at the edge', async () => {
  const { onClientRequest } = await importBlock('akamai-edgeworker');
  const answer = (method) => {
    const calls = [];
    onClientRequest({ method, path: '/noop', respondWith: (...args) => calls.push(args) });
    assert.equal(calls.length, 1, 'one response');
    return calls[0];
  };
  const [status, headers, body] = answer('GET');
  assert.equal(status, NOOP.status);
  for (const v of Object.values(headers)) assert.ok(Array.isArray(v), 'EdgeWorkers header values are arrays');
  assertNoopHeaders(Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.join(', ')])), 'edgeworker');
  assert.equal(body, '');
  assert.notEqual(answer('POST')[0], NOOP.status);
});

test('the Fastly VCL sets the status and every required header, and announces HTTP/3 only for the HTTP/3 name', () => {
  const vcl = block('fastly-vcl');
  assert.match(vcl, new RegExp(`set obj\\.status = ${NOOP.status};`));
  for (const rule of REQUIRED) assert.ok(vcl.includes(`set obj.http.${rule.name} = "${rule.value}";`), rule.name);
  assert.match(vcl, /if \(req\.http\.host == "h3\.example\.com"\) \{\s*h3\.alt_svc\(\);\s*\}/);
  assert.ok(vcl.indexOf('h3.alt_svc()') < vcl.indexOf('error 604'), 'announced before the synthetic answer');
});

test('the edge requests per sampled page load are the module\'s defaults (wasm/core/config.hpp)', () => {
  const hpp = fs.readFileSync(new URL('../../../wasm/core/config.hpp', import.meta.url), 'utf8');
  const value = (name) => Number(new RegExp(`\\b${name} = (\\d+);`).exec(hpp)[1]);
  const [h3, h2, arm] = [value('prewarm_h3'), value('prewarm_h2'), value('requests_per_arm')];
  // One paragraph, its line breaks read as spaces.
  const text = DOC.slice(DOC.indexOf('<!-- edge-requests -->')).split('\n## ')[0].replace(/\s+/g, ' ');
  assert.match(text, new RegExp(`\\*\\*${h3 + h2 + 2 * arm} requests\\*\\*`));
  assert.match(text, new RegExp(`\\*\\*${h3 + arm}\\*\\* to the HTTP/3 name \\(${h3} pre-warm, ${arm} measured\\)`));
  assert.match(text, new RegExp(`\\*\\*${h2 + arm}\\*\\* to the HTTP/2 name \\(${h2} pre-warm, ${arm} measured\\)`));
  // Cloudflare's Workers Free quota, 100,000 requests a day, in sampled page loads (to the hundred below).
  const loads = (Math.floor(100_000 / (h3 + h2 + 2 * arm) / 100) * 100).toLocaleString('en');
  assert.match(DOC.replace(/\s+/g, ' '), new RegExp(`about ${loads} sampled page loads at ${h3 + h2 + 2 * arm} requests each`));
});

test('the wrangler.toml routes /noop of each name to the Worker, in its own zone', () => {
  const toml = block('cloudflare-wrangler');
  assert.match(toml, /^main = "noop\.js"$/m);
  const routes = [...toml.matchAll(/\{ pattern = "([^"]+)", zone_name = "([^"]+)" \}/g)].map((m) => [m[1], m[2]]);
  assert.equal(routes.length, 2, toml);
  for (const [pattern, zone] of routes) {
    const host = pattern.split('/')[0];
    assert.ok(pattern.endsWith('/noop*'), pattern);
    assert.equal(host.split('.').slice(-2).join('.'), zone, `${pattern} is in zone ${zone}`);
  }
  assert.notEqual(routes[0][1], routes[1][1], 'two zones: HTTP/3 is a zone setting');
});

test('each CDN says its steps: the quota, the HTTPS record, Alt-Svc on the edge\'s own answers, checking before DNS, and what was not tried', () => {
  for (const cdn of ['Cloudflare', 'Fastly', 'Amazon CloudFront', 'Akamai']) {
    const section = DOC.split(`\n## ${cdn}\n`)[1]?.split('\n## ')[0];
    assert.ok(section, cdn);
    for (const part of [/\*\*Quota\*\*|\*\*Quota\.\*\*/, /HTTPS record/, /`Alt-Svc`/, /\*\*Before (DNS|the page uses them)\*\*/, /\*\*Not tried here\*\*: /]) {
      assert.match(section, part, `${cdn}: ${part}`);
    }
  }
});

test('the doctor command that checks the edge before DNS runs as written, each name sent to the address given', () => {
  const at = DOC.indexOf('## Checking the edge before the page uses it');
  const command = /```sh\n([\s\S]*?)\n```/.exec(DOC.slice(at))[1].replace(/\\\n\s*/g, '');
  // The edge's addresses, here two loopback ones where nothing listens on 443: each TLS check must fail on that address.
  const args = command.replace('EDGE_ADDRESS_H2', '127.0.0.2').replace('EDGE_ADDRESS_H3', '127.0.0.3').split(/\s+/);
  assert.deepEqual(args.slice(0, 3), ['npx', 'h3probe', 'doctor']);
  const bin = new URL('../../bin/h3probe.mjs', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [bin, 'doctor', ...args.slice(3), '--json'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1, `the options are valid (2 would be a bad option): ${r.stderr}`);
  const checks = JSON.parse(r.stdout);
  for (const [host, address] of [['h2.example.com', '127.0.0.2'], ['h3.example.com', '127.0.0.3']]) {
    const tls = checks.find((c) => c.check.startsWith(`TLS ${host}`));
    assert.match(tls.detail, new RegExp(`ECONNREFUSED ${address.replace(/\./g, '\\.')}:443`), JSON.stringify(tls));
  }
});
