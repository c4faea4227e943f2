// Unit tests of the Chromium flags the stack and the lab launch with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chromiumArgs } from '../../stack/stack.mjs';

test('test host names resolve to loopback by default and to the given address in the lab', () => {
  assert.ok(chromiumArgs({ spki: 'abc', h3Port: 9 }).includes('--host-resolver-rules=MAP *.h3probe.test 127.0.0.1'));
  const lab = chromiumArgs({ spki: 'abc', h3Port: 9, address: '198.18.0.2' });
  assert.ok(lab.includes('--host-resolver-rules=MAP *.h3probe.test 198.18.0.2'));
  assert.ok(lab.includes('--origin-to-force-quic-on=h3.h3probe.test:9'));
  assert.ok(lab.includes('--ignore-certificate-errors-spki-list=abc'));
});

test('the second HTTP/3 origin is forced onto QUIC with the first', () => {
  assert.ok(chromiumArgs({ spki: 'abc', h3Port: 9, h3bPort: 10 })
    .includes('--origin-to-force-quic-on=h3.h3probe.test:9,h3b.h3probe.test:10'));
  assert.equal(chromiumArgs({ spki: 'abc', h3Port: 9, h3bPort: 10, forceQuic: false })
    .filter((a) => a.startsWith('--origin-to-force-quic-on')).length, 0);
});
