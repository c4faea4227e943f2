// A self-signed ECDSA P-256 certificate for given names (openssl), and its key's SPKI hash, which Chromium trusts by
// --ignore-certificate-errors-spki-list: the trial's private certificate and the dev stack's.
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** Writes dir/cert.pem and dir/key.pem (0600) for sans (['DNS:name', 'IP:127.0.0.1', ...]); resolves to the certificate. */
export async function makeCertificate(dir, sans, { days = 365 } = {}) {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', String(days), '-subj', '/CN=h3probe',
    '-addext', `subjectAltName=${sans.join(',')}`,
  ]);
  fs.chmodSync(keyPath, 0o600);
  return new X509Certificate(fs.readFileSync(certPath));
}

export function spkiHash(cert) {
  const der = cert.publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}
