// Why a run left its Worker (the beacon's context.worker_fallback) is the core's closed list (H3PROBE_WORKER_FALLBACK_REASONS
// in wasm/core/beacon.hpp, through the Node module's schema): every name run.js gives (from the gate's codes for what its
// Worker met, or its own) is in it, every name in it is given by run.js, and the decoder takes each listed name on a run
// of the main thread and refuses anything else.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { repoRoot } from '../../devstack/paths.mjs';

const core = await loadH3probeNode();
const listed = core.schema().workerFallbackReasons.map((r) => r.name);

test('every reason run.js gives is in the core list, and every listed reason is given', () => {
  assert.ok(listed.length >= 6, listed.join(', '));
  for (const r of core.schema().workerFallbackReasons) assert.ok(r.description.length > 10, r.name);
  const text = fs.readFileSync(path.join(repoRoot, 'web', 'src', 'run.js'), 'utf8');
  // The ways run.js names a reason: TRIED, what the gate's Worker met by the code the gate gives; the choices of
  // `fallback = …` where the gate tried none; and the CSP's late word in workerFallback: the quoted names of TRIED, and
  // a quoted name after `? ` or `= ` on the other lines.
  const given = new Set();
  for (const [line] of text.matchAll(/^.*(?:const TRIED = |fallback = |const workerFallback = ).*$/gm)) {
    for (const q of line.matchAll(line.includes('TRIED = ') ? /'([^']*)'/g : /(?:\?|[^=!]=) '([^']*)'/g)) given.add(q[1]);
  }
  // The gate gives each code of TRIED: fallBack(N, problem) in h3probe.js.
  const gate = fs.readFileSync(path.join(repoRoot, 'web', 'src', 'h3probe.js'), 'utf8');
  const codes = [...gate.matchAll(/fallBack\((\d), /g)].map((m) => Number(m[1])).sort();
  const tried = text.match(/const TRIED = \[([^\]]*)\]/)[1].split(',').length;
  assert.deepEqual(codes, [...Array(tried).keys()], 'the gate gives each code of TRIED');
  assert.deepEqual([...given].sort(), [...listed].sort());
});

// A complete run of no request, with this context.
const beacon = (context) => JSON.stringify({ schema: 'h3probe/1', run_id: 'r1', page_load_id: 'p1', config_id: 'default',
  module_version: '0.1.0', order: 'h2-first', arms: 'h2-h3', outcome: 'complete', run_ms: 5, context, samples: [] });

test('the decoder keeps each listed reason of a run on the main thread, and refuses any other value', () => {
  for (const name of listed) {
    const decoded = core.decodeBeacon(beacon({ run_context: 'main', worker_fallback: name }));
    assert.ok(decoded.ok, decoded.error);
    assert.equal(decoded.run.run_context, 'main');
    assert.equal(decoded.run.worker_fallback, name);
  }
  const unknown = core.decodeBeacon(beacon({ run_context: 'main', worker_fallback: 'gone' }));
  assert.equal(unknown.ok, false);
  assert.equal(unknown.error, 'context.worker_fallback has an unknown value "gone"');
  assert.equal(core.decodeBeacon(beacon({ run_context: 'main', worker_fallback: 3 })).error, 'context.worker_fallback must be a string');
});

test('a run in the Worker has no fallback reason; one on the main thread may lack it (a module older than the field)', () => {
  const inWorker = core.decodeBeacon(beacon({ run_context: 'worker', worker_fallback: 'csp' }));
  assert.equal(inWorker.ok, false);
  assert.equal(inWorker.error, 'context.worker_fallback is only for run_context main');
  for (const context of [{ run_context: 'worker' }, { run_context: 'main' }, { run_context: 'worker', worker_fallback: '' }]) {
    const decoded = core.decodeBeacon(beacon(context));
    assert.ok(decoded.ok, decoded.error);
    assert.equal(decoded.run.worker_fallback, '');
  }
});
