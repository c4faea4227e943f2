// docs/cdn.md's edge handlers, run literally: each answers GET /noop as the origin rules say (web/server/originRules.mjs,
// the rules `h3probe doctor` checks), and refuses other methods. The Fastly VCL cannot run here: its lines are checked
// against the same rules.
import assert from 'node:assert/strict';
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
