// The load_error reasons the page module gives are the core's closed list (H3PROBE_LOAD_ERROR_REASONS in
// wasm/core/beacon.hpp, through the Node module's schema): each one the loaders tag an error with is in it, and each one
// in it is given by some loader, so neither side has a name the other lacks.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const core = await loadH3probeNode();

test('every reason the gate and its loaders give is in the core list, and every listed reason is given', () => {
  const listed = core.schema().loadErrorReasons.map((r) => r.name);
  assert.ok(listed.length >= 5, listed.join(', '));
  for (const r of core.schema().loadErrorReasons) assert.ok(r.description.length > 10, r.name);
  const given = new Set();
  for (const file of ['h3probe.js', 'run.js', 'worker.js']) {
    const text = fs.readFileSync(path.join(repoRoot, 'web', 'src', file), 'utf8');
    // The two ways a loader names a reason: failed(...) in worker.js (a name, or a choice of two), and
    // { loadError: '...' } in the gate and run.js. Every quoted name on the rest of such a line counts.
    for (const m of text.matchAll(/(?:failed\(|loadError: )(.*)$/gm)) {
      for (const q of m[1].matchAll(/'([^']*)'/g)) given.add(q[1]);
    }
  }
  assert.deepEqual([...given].sort(), [...listed].sort());
});

test('the decoder takes a load_error beacon with each listed reason and refuses any other', () => {
  const beacon = (reason) => JSON.stringify({ schema: 'h3probe/1', run_id: 'r1', page_load_id: 'p1', config_id: 'default',
    outcome: 'load_error', reason, run_ms: 5, samples: [] });
  for (const { name } of core.schema().loadErrorReasons) {
    const decoded = core.decodeBeacon(beacon(name));
    assert.ok(decoded.ok, decoded.error);
    assert.equal(decoded.run.outcome, 'load_error');
    assert.equal(decoded.run.reason, name);
    assert.equal(decoded.run.arms, '', 'in no arms mode');
    assert.deepEqual(decoded.requests, []);
  }
  const refused = core.decodeBeacon(beacon('wasm_missing'));
  assert.equal(refused.ok, false);
  assert.match(refused.error, /^reason has an unknown value/);
});
