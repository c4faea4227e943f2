// The lab's link object → the relay's settings (startRelay.mjs relaySettings): RTT split in two, shared keys on both
// directions, per-direction overrides, loss numbers as independent loss; and the relay accepts what comes out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { RELAY_PATH, relaySettings } from '../startRelay.mjs';
import { relayCheckLink } from '../fieldProfile.mjs';

test('RTT is split between the directions, shared keys go to both, up/down override per direction', () => {
  const s = relaySettings({ rttMs: 50, seed: 9, jitterMs: 3, loss: { model: 'gilbert', rate: 0.02, meanBurst: 2 },
    down: { loss: 0.01, rateKbps: 8000, queueMs: 40 } });
  assert.equal(s.seed, 9);
  assert.deepEqual(s.up, { delayMs: 25, jitterMs: 3, reorder: false, loss: { model: 'gilbert', rate: 0.02, meanBurst: 2 } });
  assert.deepEqual(s.down, { delayMs: 25, jitterMs: 3, reorder: false, loss: { model: 'bernoulli', rate: 0.01 }, rateKbps: 8000,
    queueMs: 40 });
  assert.deepEqual(relaySettings({ rttMs: 0, loss: 0 }).up.loss, { model: 'none' });
  assert.deepEqual(relaySettings({}), { seed: 1, up: { delayMs: 0, jitterMs: 0, reorder: false, loss: { model: 'none' } },
    down: { delayMs: 0, jitterMs: 0, reorder: false, loss: { model: 'none' } } });
});

test('the relay accepts the settings relaySettings makes, and names the key of a bad one', { skip: fs.existsSync(RELAY_PATH) ? false : 'needs npm run build:native' }, () => {
  assert.equal(relayCheckLink(relaySettings({ rttMs: 80, loss: 0.03, jitterMs: 2, reorder: true, rateKbps: 1000, queueMs: 20 })), null);
  assert.match(relayCheckLink(relaySettings({ rttMs: 80, up: { jitterMs: -2 } })), /^link\.up\.jitterMs/);
});
