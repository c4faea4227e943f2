// The payload mode (config payloadBytes) from the beacon to the report: the run's mode is stored (runs and run_records),
// each request's body size is kept, and the report reads one payload mode at a time,
// never pooled, saying which it reads and which others are stored.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../server/store.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { PAYLOAD } from '../../server/originRules.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const core = await loadH3probeNode();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-payload-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sample = (phase, idx, networkMs, bodyBytes) => ({ phase, idx, origin: phase === 'control' ? 'h2' : 'h3', result: 'ok',
  http_status: bodyBytes ? 200 : 204, protocol: phase === 'control' ? 'h2' : 'h3', reused: true, network_ms: networkMs,
  queue_ms: 0, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: networkMs / 2, response_ms: networkMs / 2, start_ms: 100,
  fetch_ms: networkMs + 1, body_bytes: bodyBytes });

// A run whose arms fetched `payload` bytes (0: the no-op; undefined: a beacon of a module older than the payload mode).
function run(id, payload, hs, ts) {
  return { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'test', module_version: '0.1.0',
    order: 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '', ...(payload === undefined ? {} : { payload_bytes: payload }),
    context: {}, samples: [sample('prewarm', 0, 300, 0), ...hs.map((v, i) => sample('control', i, v, payload ?? 0)),
      ...ts.map((v, i) => sample('treatment', i, v, payload ?? 0))] };
}
const insert = (st, beacon) => {
  const decoded = core.decodeBeacon(JSON.stringify(beacon));
  assert.ok(decoded.ok, decoded.error);
  return st.insertBeacon(decoded, { receivedAt: '2024-05-01T12:00:00.000Z', region: 'Europe' });
};

test('the payload rule of the origins is the core\'s limit', () => {
  assert.equal(PAYLOAD.maxBytes, core.schema().limits.maxPayloadBytes);
});

describe('payload modes in the store and the report', () => {
  const dbPath = path.join(tmp, 'payload.sqlite');
  before(() => {
    const st = openStore(dbPath, core);
    insert(st, run('n1', undefined, [10, 11], [9, 10]));
    insert(st, run('n2', 0, [12], [11]));
    for (let i = 0; i < 3; i++) insert(st, run(`p${i}`, 131072, [200 + i, 210 + i], [150 + i, 160 + i]));
    insert(st, run('q1', 16384, [50], [40]));
    st.close();
  });
  const report = async (opts = {}) => (await makeReport(core, { dbPath, ...opts })).report;

  test('the run keeps its payload mode and each request its body size', () => {
    const db = new Database(dbPath, { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT run_id, payload_bytes FROM runs ORDER BY run_id').all().map((r) => [r.run_id, r.payload_bytes]),
        [['n1', 0], ['n2', 0], ['p0', 131072], ['p1', 131072], ['p2', 131072], ['q1', 16384]]);
      const p0 = db.prepare("SELECT phase, body_bytes FROM requests WHERE run_id = 'p0' ORDER BY phase, idx").all();
      assert.deepEqual(p0.map((q) => q.body_bytes), [131072, 131072, 0, 131072, 131072]);
    } finally {
      db.close();
    }
  });

  test('the default report reads the no-op runs only, and names the other modes stored', async () => {
    const r = await report();
    assert.equal(r.payloadBytes, 0);
    assert.equal(r.storedRuns, 2);
    assert.deepEqual(r.groups[0].arms, { h2: { n: 3, runs: 2 }, h3: { n: 3, runs: 2 } });
    assert.deepEqual(r.payloadModes, [{ bytes: 0, runs: 2 }, { bytes: 16384, runs: 1 }, { bytes: 131072, runs: 3 }]);
  });

  test('--payload-bytes N reads the runs of that mode only: text, HTML and JSON say which', async () => {
    const r = await report({ payloadBytes: 131072 });
    assert.equal(r.storedRuns, 3);
    assert.ok(r.groups[0].analysis.rows.every((row) => row.h2 >= 200 && row.h3 >= 150));
    const html = path.join(tmp, 'out', 'payload.html');
    const json = path.join(tmp, 'out', 'payload.json');
    const { status, stdout, stderr } = spawnSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report',
      '--db', dbPath, '--payload-bytes', '131072', '--html', html, '--json', json], { encoding: 'utf8' });
    assert.equal(status, 0, stderr);
    assert.match(stdout, /^payload: 131,072 B per measured request \(--payload-bytes\); other payload modes stored: 0 B \(the no-op\) 2 runs, 16,384 B 1 runs$/m);
    assert.match(fs.readFileSync(html, 'utf8'), /<p class="payload">payload: 131,072 B per measured request/);
    const data = JSON.parse(fs.readFileSync(json, 'utf8'));
    assert.equal(data.payloadBytes, 131072);
    assert.equal(data.storedRuns, 3);
  });

  test('a bad --payload-bytes is refused, saying what it takes', async () => {
    for (const bad of [-1, 1.5, core.schema().limits.maxPayloadBytes + 1]) {
      await assert.rejects(report({ payloadBytes: bad }), /--payload-bytes must be a whole number from 0 \(the no-op\) to 1048576/);
    }
    const { status, stderr } = spawnSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report',
      '--db', dbPath, '--payload-bytes', '128k', '--no-html'], { encoding: 'utf8' });
    assert.notEqual(status, 0);
    assert.match(stderr, /--payload-bytes must be a whole number .* got "128k"/);
  });
});
