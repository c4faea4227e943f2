// Unit tests of the stack's certificate and port helpers (real openssl, real sockets on loopback).
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ensureCerts } from '../../stack/certs.mjs';
import { canBindUdp, freePort } from '../../cli/ports.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-certs-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('makes an ECDSA P-256 certificate for the test host names and reuses it afterwards', async () => {
  const dir = path.join(tmp, 'once');
  const first = await ensureCerts(dir);
  const cert = new X509Certificate(fs.readFileSync(first.certPath));
  assert.equal(cert.publicKey.asymmetricKeyDetails.namedCurve, 'prime256v1');
  for (const san of ['DNS:*.h3probe.test', 'DNS:h3probe.test', 'DNS:localhost', 'IP Address:127.0.0.1']) assert.ok(cert.subjectAltName.includes(san));
  const mtime = fs.statSync(first.certPath).mtimeMs;
  const second = await ensureCerts(dir);
  assert.equal(second.spki, first.spki);
  assert.equal(fs.statSync(first.certPath).mtimeMs, mtime);
});

test('spki is the base64 SHA-256 of the public key, as openssl computes it for Chromium', async () => {
  const { certPath, spki } = await ensureCerts(path.join(tmp, 'spki'));
  const viaOpenssl = execSync(
    `openssl x509 -in '${certPath}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
    { encoding: 'utf8' },
  ).trim();
  assert.equal(spki, viaOpenssl);
});

test('replaces a key that does not match its certificate', async () => {
  const dir = path.join(tmp, 'mismatch');
  const { keyPath, spki } = await ensureCerts(dir);
  execSync(`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out '${keyPath}'`);
  const again = await ensureCerts(dir);
  assert.notEqual(again.spki, spki);
});

test('concurrent callers end up with one matching pair', async () => {
  const dir = path.join(tmp, 'race');
  const results = await Promise.all(Array.from({ length: 4 }, () => ensureCerts(dir)));
  assert.equal(new Set(results.map((r) => r.spki)).size, 1);
});

test('freePort honours its environment variable and otherwise finds a port free for TCP and UDP', async () => {
  process.env.H3PROBE_PORT_TEST = '45678';
  assert.equal(await freePort({ env: 'H3PROBE_PORT_TEST' }), 45678);
  process.env.H3PROBE_PORT_TEST = 'nope';
  await assert.rejects(freePort({ env: 'H3PROBE_PORT_TEST' }));
  delete process.env.H3PROBE_PORT_TEST;
  const port = await freePort({ udp: true });
  assert.ok(port > 0);
  assert.equal(await canBindUdp(port), true);
});
