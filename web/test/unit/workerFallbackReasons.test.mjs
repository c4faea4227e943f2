// Why a run left its Worker (the beacon's context.worker_fallback) is the core's closed list (H3PROBE_WORKER_FALLBACK_REASONS
// in wasm/core/beacon.hpp, through the Node module's schema): every name the gate (what its Worker met) and run.js (its
// own) give is in it, every name in it is given by one of them, and the decoder takes each listed name on a run
// of the main thread and refuses anything else.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const core = await loadH3probeNode();
const listed = core.schema().workerFallbackReasons.map((r) => r.name);

test('every reason the gate and run.js give is in the core list, and every listed reason is given', () => {
  assert.ok(listed.length >= 6, listed.join(', '));
  for (const r of core.schema().workerFallbackReasons) assert.ok(r.description.length > 10, r.name);
  // What the gate's Worker met, by name: fallBack('name', problem) in h3probe.js.
  const gate = fs.readFileSync(path.join(repoRoot, 'web', 'src', 'h3probe.js'), 'utf8');
  const tried = [...gate.matchAll(/fallBack\('([^']*)', /g)].map((m) => m[1]);
  assert.equal(tried.length, 3, 'the gate names the constructor, the worker and the core');
  // run.js's own: the choices of `fallback = …` where the gate tried none, and the CSP's late word in workerFallback
  // (a quoted name after `? ` or `= `).
  const text = fs.readFileSync(path.join(repoRoot, 'web', 'src', 'run.js'), 'utf8');
  const given = new Set(tried);
  for (const [line] of text.matchAll(/^.*(?:fallback = |const workerFallback = ).*$/gm)) {
    for (const q of line.matchAll(/(?:\?|[^=!]=) '([^']*)'/g)) given.add(q[1]);
  }
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
