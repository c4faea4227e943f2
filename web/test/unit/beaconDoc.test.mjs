// docs/beacon.md's example beacons are beacons the collector accepts: each is posted to a real collector (real HTTP,
// the core's decoder, a real SQLite store) and must be answered 204 and stored as it reads. The full example names
// every field the collector keeps, and no key it would drop (an unknown key is skipped, so a typo would pass unseen).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'beacon.md'), 'utf8');
/** The first ```json block after the heading that starts with `heading`, parsed. */
function example(heading) {
  const at = doc.indexOf(`\n## ${heading}`);
  assert.ok(at >= 0, `docs/beacon.md has a section "${heading}"`);
  const block = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
  assert.ok(block, `a json block under "${heading}"`);
  return { text: block[1], beacon: JSON.parse(block[1]) };
}

const core = await loadH3probeNode();
const schema = core.schema();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-beacondoc-'));
const dbPath = path.join(tmp, 'beacons.sqlite');
let store;
let collector;

before(async () => {
  store = openStore(dbPath, core);
  collector = await startCollector({ port: 0, store, core });
});
after(async () => {
  await collector?.close();
  store?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function post(text) {
  const res = await fetch(`http://127.0.0.1:${collector.port}/beacon`, { method: 'POST', body: text, headers: { 'content-type': 'text/plain' } });
  return { status: res.status, body: await res.text() };
}
const stored = (runId) => {
  const db = new Database(dbPath, { readonly: true });
  try {
    return { run: db.prepare('SELECT * FROM runs WHERE run_id = ?').get(runId),
      requests: db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY phase, idx').all(runId) };
  } finally {
    db.close();
  }
};

test('the schema example is a beacon the collector takes: 204, stored with its arms, context and every sample', async () => {
  const { text, beacon } = example('Beacon schema');
  const res = await post(text);
  assert.equal(res.status, 204, res.body);
  const { run, requests } = stored(beacon.run_id);
  assert.equal(run.arms, beacon.arms);
  assert.equal(run.run_order, beacon.order);
  assert.equal(run.outcome, 'complete');
  for (const [key, value] of Object.entries(beacon.context)) assert.equal(run[key], typeof value === 'boolean' ? Number(value) : value, key);
  assert.equal(requests.length, beacon.samples.length);
  assert.deepEqual(requests.map((q) => q.request_class).sort(), ['prewarm', 'usable_control', 'usable_treatment']);
  // The example's summary is the one the core computes (the collector does not trust a client's, but a reader does).
  const decoded = core.decodeBeacon(text);
  const usable = (cls) => decoded.requests.filter((q) => q.request_class === cls).map((q) => q.network_ms);
  assert.deepEqual([beacon.summary.control.median, beacon.summary.treatment.median], [usable('usable_control')[0], usable('usable_treatment')[0]]);
});

test('the schema example shows every field the collector keeps and no key it would drop', () => {
  const { beacon } = example('Beacon schema');
  const runColumns = schema.runColumns.map((c) => c.name);
  // The context's fields are the run columns from page_origin up to errors (H3PROBE_CONTEXT_FIELDS, in its order).
  const contextFields = runColumns.slice(runColumns.indexOf('page_origin'), runColumns.indexOf('errors'));
  assert.ok(contextFields.includes('run_context') && !contextFields.includes('payload_bytes'), contextFields.join(', '));
  assert.deepEqual(Object.keys(beacon.context), contextFields);
  // Top level: the run's columns (order is stored as run_order; reason is only for a load_error beacon), and the
  // structure around them.
  const topLevel = ['schema', ...runColumns.filter((c) => !contextFields.includes(c) && c !== 'reason').map((c) => (c === 'run_order' ? 'order' : c)),
    'context', 'samples', 'summary'];
  assert.deepEqual(Object.keys(beacon).sort(), topLevel.sort());
  const sampleFields = [...schema.requestColumns.map((c) => c.name).filter((c) => c !== 'run_id' && c !== 'request_class'),
    ...schema.durations.map((d) => d.name)];
  for (const s of beacon.samples) assert.deepEqual(Object.keys(s).sort(), [...sampleFields].sort());
});

test('the load_error example is one the collector takes: 204, stored with its reason and no request', async () => {
  const { text, beacon } = example('Load errors');
  const res = await post(text);
  assert.equal(res.status, 204, res.body);
  const { run, requests } = stored(beacon.run_id);
  assert.deepEqual([run.outcome, run.reason, run.arms], ['load_error', beacon.reason, '']);
  assert.deepEqual(requests, []);
});
