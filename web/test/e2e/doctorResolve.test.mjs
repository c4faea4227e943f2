// `h3probe doctor --resolve HOST:PORT:ADDRESS` checks a deployment whose names are not in DNS yet: the local stack's
// *.h3probe.test names resolve nowhere, so without --resolve every check that connects fails on the name, and with it
// the TLS, origin and collector checks pass against the real Caddy (HTTP/2 and HTTP/3) and collector.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startStack } from '../../stack/stack.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const run = promisify(execFile);
let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack?.stop(); });

// The doctor as a user runs it (a process of its own: the stack's collector answers from this one), its JSON checks.
async function doctor(extra) {
  const { urls } = stack;
  const args = [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'doctor', '--page', urls.page, '--h2', urls.h2Origin, '--h3', urls.h3Origin,
    '--collector', urls.beacon, '--ca', stack.certPath, '--json', '--timeout', '5000', ...extra];
  const out = await run(process.execPath, args, { encoding: 'utf8', timeout: 120_000 }).catch((err) => err);
  return Object.fromEntries(JSON.parse(out.stdout).map((c) => [c.check, c]));
}

test('without --resolve the stack\'s names resolve nowhere: the TLS checks fail on the name', { timeout: 180_000 }, async () => {
  const checks = await doctor([]);
  const tlsChecks = Object.values(checks).filter((c) => c.check.startsWith('TLS '));
  assert.equal(tlsChecks.length, 3, JSON.stringify(checks, null, 1));
  for (const c of tlsChecks) assert.match(`${c.status} ${c.detail}`, /^FAIL .*(ENOTFOUND|EAI_AGAIN|getaddrinfo)/, c.check);
});

test('with --resolve for each host and port: every check passes but the collector\'s /healthz (behind the page\'s proxy)', { timeout: 180_000 }, async () => {
  // The stack serves web/dist under /h3probe/ on the page's origin: the doctor finds the module files from the page's
  // own scripts (no --module), as it does for any page.
  const checks = await doctor(stack.resolveArgs);
  assert.equal(checks['module worker worker.js']?.detail.includes('200'), true, JSON.stringify(checks['module worker worker.js']));
  const notPassed = Object.values(checks).filter((c) => c.status !== 'PASS').map((c) => `${c.status} ${c.check}`);
  assert.deepEqual(notPassed, ['SKIP collector /healthz']);
  const tlsChecks = Object.values(checks).filter((c) => c.check.startsWith('TLS '));
  assert.equal(tlsChecks.length, 3);
  for (const c of tlsChecks) assert.equal(c.status, 'PASS', `${c.check}: ${c.detail}`);
  for (const name of ['HTTP/2 origin offers no HTTP/3', 'HTTP/3 origin announces HTTP/3', 'collector test beacon']) {
    assert.equal(checks[name]?.status, 'PASS', `${name}: ${JSON.stringify(checks[name])}`);
  }
});
