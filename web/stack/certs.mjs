// Makes (once) and reuses the self-signed ECDSA P-256 certificate shared by the test origins, and its SPKI hash for Chromium.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makeCertificate, spkiHash } from '../cli/certificate.mjs';
import { stateDir } from './paths.mjs';

const SANS = ['DNS:*.h3probe.test', 'DNS:h3probe.test', 'DNS:localhost', 'IP:127.0.0.1'];
const MIN_REMAINING_MS = 24 * 3600 * 1000;

export async function ensureCerts(dir = path.join(stateDir, 'tls')) {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  fs.mkdirSync(dir, { recursive: true });
  let cert = readValid(certPath, keyPath);
  if (!cert) {
    // node --test runs test files in parallel processes: without a lock two of them could leave a cert and a key that do not match.
    await withLock(path.join(dir, '.lock'), async () => {
      cert = readValid(certPath, keyPath);
      if (!cert) cert = await generate(dir, certPath, keyPath);
    });
  }
  return { certPath, keyPath, spki: spkiHash(cert) };
}

function readValid(certPath, keyPath) {
  try {
    const cert = new X509Certificate(fs.readFileSync(certPath));
    const key = createPrivateKey(fs.readFileSync(keyPath));
    const sans = (cert.subjectAltName ?? '').split(', ').map((s) => s.replace('IP Address:', 'IP:'));
    const fresh = Date.parse(cert.validTo) - Date.now() > MIN_REMAINING_MS;
    if (fresh && SANS.every((s) => sans.includes(s)) && cert.checkPrivateKey(key)) return cert;
  } catch {
    // missing or unreadable: regenerate
  }
  return null;
}

async function generate(dir, certPath, keyPath) {
  const tmp = fs.mkdtempSync(path.join(dir, '.gen-'));
  try {
    await makeCertificate(tmp, SANS);
    fs.renameSync(path.join(tmp, 'key.pem'), keyPath);
    fs.renameSync(path.join(tmp, 'cert.pem'), certPath);
    return new X509Certificate(fs.readFileSync(certPath));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function withLock(lockPath, fn) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lockPath, 'wx'));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (isStale(lockPath) || Date.now() > deadline) fs.rmSync(lockPath, { force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    await fn();
  } finally {
    fs.rmSync(lockPath, { force: true });
  }
}

function isStale(lockPath) {
  try {
    return Date.now() - fs.statSync(lockPath).mtimeMs > 20_000;
  } catch {
    return false;
  }
}
