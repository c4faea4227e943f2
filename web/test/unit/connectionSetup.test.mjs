// The report's connection-setup view on a mixed database, from both stores: which pre-warm request is a run's cold
// sample (every branch of the core's rule: QUIC at once, QUIC on the second request, UDP blocked, reused connections,
// a Server-Timing that disagrees, failed requests, no pre-warm to an origin, an unknown reuse flag), that no measured
// request and no A/A run enters it, its figures against the cold values computed here, a record of another format
// refused, and the same view (text, HTML and JSON) from ClickHouse as from SQLite.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-setup-');
const { tmp } = scratch;
after(scratch.cleanup);

// A pre-warm (or measured) request: connect > 0 opened a connection, 0 reused one.
function req(phase, idx, origin, protocol, connect, extra = {}) {
  const network = connect + 20;
  return { phase, idx, origin, result: 'ok', http_status: 204, protocol, reused: connect === 0, network_ms: network,
    queue_ms: 0, dns_ms: 0, connect_ms: connect, tls_ms: connect / 2, request_ms: 19, response_ms: 1, start_ms: 10 + idx,
    fetch_ms: network + 1, ...extra };
}
const arms = (control = 'h2') => [...[0, 1].map((i) => req('control', i, control, control, 0)),
  // A measured request on a new connection: its huge connect must never reach the view.
  req('treatment', 0, 'h3', 'h3', 9999), req('treatment', 1, 'h3', 'h3', 0)];

// [id, region, prewarm samples, expected {h2, h3: cold connect or outcome, first}]
const CASES = [
  ...Array.from({ length: 12 }, (_, i) => [`quic-first-${i}`, 'Europe',
    [req('prewarm', 0, 'h3', 'h3', 50 + i, { server_protocol: 'HTTP/3.0' }), req('prewarm', 1, 'h3', 'h3', 0), req('prewarm', 2, 'h2', 'h2', 100 + 3 * i)],
    { h2: 100 + 3 * i, h3: 50 + i, first: 'over_h3' }]),
  ...Array.from({ length: 4 }, (_, i) => [`altsvc-learned-${i}`, 'Asia',
    [req('prewarm', 0, 'h3', 'h2', 90), req('prewarm', 1, 'h3', 'h3', 45 + i), req('prewarm', 2, 'h2', 'h2', 95 + i)],
    { h2: 95 + i, h3: 45 + i, first: 'over_other' }]),
  ['udp-blocked', 'Asia', [req('prewarm', 0, 'h3', 'h2', 90), req('prewarm', 1, 'h3', 'h2', 0), req('prewarm', 2, 'h2', 'h2', 97)],
    { h2: 97, h3: 'unverified', first: 'over_other' }],
  ['all-reused', 'Europe', [req('prewarm', 0, 'h3', 'h3', 0), req('prewarm', 1, 'h3', 'h3', 0), req('prewarm', 2, 'h2', 'h2', 0)],
    { h2: 'reused', h3: 'reused', first: 'over_h3' }],
  ['proxy-mismatch', 'Europe', [req('prewarm', 0, 'h3', 'h3', 60, { server_protocol: 'HTTP/1.1' }), req('prewarm', 1, 'h3', 'h3', 0, { server_protocol: 'HTTP/1.1' }),
    req('prewarm', 2, 'h2', 'h2', 99, { server_protocol: 'HTTP/2.0' })], { h2: 99, h3: 'unverified', first: 'unknown' }],
  ['failures', 'Europe', [{ ...req('prewarm', 0, 'h3', '', 0), result: 'network_error', reused: undefined, network_ms: null, connect_ms: null,
    tls_ms: null, request_ms: null, response_ms: null, queue_ms: null, dns_ms: null, fetch_ms: null }, req('prewarm', 1, 'h3', 'h3', 48),
  { ...req('prewarm', 2, 'h2', 'h2', 0), result: 'timeout', protocol: '', reused: undefined, network_ms: null, connect_ms: null, tls_ms: null,
    request_ms: null, response_ms: null, queue_ms: null, dns_ms: null, fetch_ms: null }], { h2: 'unverified', h3: 48, first: 'unknown' }],
  ['no-h2-prewarm', 'Europe', [req('prewarm', 0, 'h3', 'h3', 52), req('prewarm', 1, 'h3', 'h3', 0)], { h2: 'absent', h3: 52, first: 'over_h3' }],
  ['reuse-unknown', 'Europe', [req('prewarm', 0, 'h3', 'h3', 51), req('prewarm', 1, 'h3', 'h3', 0), req('prewarm', 2, 'h2', 'h2', 98, { reused: undefined })],
    { h2: 'unverified', h3: 51, first: 'over_h3' }],
];

function beacons() {
  const out = CASES.map(([id, region, prewarm], k) => ({
    beacon: { schema: 'h3probe/1', run_id: id, page_load_id: `pl-${id}`, config_id: 'setup', module_version: '0.1.0',
      order: k % 2 ? 'h3-first' : 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '', samples: [...prewarm, ...arms()] },
    meta: { receivedAt: '2026-11-30T10:00:00.000Z', region, country: null } }));
  // A/A runs: their cold connections are in no view (the view is of the experiment's runs).
  for (let i = 0; i < 3; i++) {
    out.push({ beacon: { schema: 'h3probe/1', run_id: `aa-${i}`, page_load_id: `pl-aa-${i}`, config_id: 'setup', module_version: '0.1.0',
      order: 'h2-first', arms: 'h3-h3', outcome: 'complete', error: '',
      samples: [req('prewarm', 0, 'h3', 'h3', 7), req('prewarm', 1, 'h3', 'h3', 0), req('prewarm', 2, 'h3', 'h3', 7), ...arms('h3')] },
    meta: { receivedAt: '2026-11-30T10:00:00.000Z', region: 'Europe', country: null } });
  }
  return out;
}

const q = (values, p) => core.quantiles(Float64Array.from(values), [p])[0];
const sqlitePath = path.join(tmp, 'setup.sqlite');

before(() => {
  const st = openStore(sqlitePath, core);
  for (const { beacon, meta } of beacons()) {
    const decoded = core.decodeBeacon(JSON.stringify(beacon));
    assert.ok(decoded.ok, `${beacon.run_id}: ${decoded.error}`);
    st.insertBeacon(decoded, meta);
  }
  st.close();
});

test('the view from SQLite: each run\'s cold samples by the rule, their quantiles and paired differences', async () => {
  const { report, text } = await makeReport(core, { dbPath: sqlitePath });
  const view = report.connectionSetup;
  const [overall] = view.groups;
  const expected = CASES.map((c) => c[3]);
  const cold = (p) => expected.filter((e) => typeof e[p] === 'number').map((e) => e[p]);
  const outcome = (p) => Object.fromEntries(['cold', 'reused', 'unverified', 'absent'].map((o) => [o,
    expected.filter((e) => (o === 'cold' ? typeof e[p] === 'number' : e[p] === o)).length]));
  assert.equal(overall.runs, CASES.length, 'every h2-h3 run with a pre-warm request, no A/A run');
  assert.deepEqual(overall.outcomes, { h2: outcome('h2'), h3: outcome('h3') });
  const pairs = expected.filter((e) => typeof e.h2 === 'number' && typeof e.h3 === 'number');
  assert.equal(overall.paired, pairs.length);
  const first = (f) => expected.filter((e) => e.first === f).length;
  assert.deepEqual(overall.firstH3, { over_h3: first('over_h3'), over_other: first('over_other'), unknown: first('unknown'),
    share: first('over_h3') / (first('over_h3') + first('over_other')) });

  assert.deepEqual(view.percentiles, [0.5, 0.9, 0.95]);
  for (const [i, p] of view.percentiles.entries()) {
    const row = overall.connect_ms.rows[i];
    assert.equal(row.h2, q(cold('h2'), p), `cold HTTP/2 connect at ${p}`);
    assert.equal(row.h3, q(cold('h3'), p), `cold HTTP/3 connect at ${p}`);
    assert.equal(overall.network_ms.rows[i].h3, q(cold('h3').map((c) => c + 20), p), `cold HTTP/3 network at ${p}`);
    assert.equal(overall.tls_ms.rows[i].h2, q(cold('h2').map((c) => c / 2), p), `cold HTTP/2 TLS at ${p}`);
    assert.deepEqual(Object.keys(overall.tls_ms.rows[i]), ['p', 'h2', 'ci_h2'], 'TLS: HTTP/2 only');
  }
  const diffs = pairs.map((e) => e.h3 - e.h2);
  assert.equal(overall.connect_ms.paired.n, pairs.length);
  assert.equal(overall.connect_ms.paired.median, q(diffs, 0.5));
  assert.ok(Number.isFinite(overall.connect_ms.rows[0].ci_ms[0]), 'an interval at p50 (16 paired runs)');
  assert.ok(overall.connect_ms.paired.ci_median[1] < 0, 'QUIC faster by the data above, within the run');
  const largest = Math.max(...view.groups.flatMap((g) => ['connect_ms', 'network_ms'].flatMap((m) => g[m].rows.flatMap((r) => [r.h2, r.h3]))));
  assert.ok(largest < 1000, `no measured request in the view (largest quantile ${largest})`);
  assert.deepEqual(view.groups.map((g) => [g.name, g.runs]), [['overall', 22], ['Europe', 17], ['Asia', 5]]);
  assert.match(text, /^== connection setup: .*22 runs of arms h2-h3$/m);
  assert.match(text, /^connect p50 /m);
  assert.match(text, /first request to the HTTP\/3 origin already over HTTP\/3 .*: 75\.0% \(15 of 20 runs; 2 more/);

  // One arms mode at a time: an A/A report has no connection-setup view.
  assert.equal((await makeReport(core, { dbPath: sqlitePath, arms: 'h3-h3' })).report.connectionSetup, null);
});

test('a cold-setup record of another format is refused, not guessed at', async () => {
  const file = path.join(tmp, 'future.sqlite');
  fs.copyFileSync(sqlitePath, file);
  const d = new Database(file);
  d.exec("UPDATE run_records SET setup = x'09' || substr(setup, 2) WHERE run = 1");
  d.close();
  await assert.rejects(makeReport(core, { dbPath: file }), /cold-setup record of version 9/);
});

describe('the view from ClickHouse', () => {
  let spec;
  before(async () => {
    const server = await scratch.fresh('setup');
    spec = `clickhouse://127.0.0.1:${server.httpPort}/setup`;
    const ch = await openClickHouseStore(spec, core, { log: path.join(tmp, 'log.ndjson') });
    for (const { beacon, meta } of beacons()) await ch.queueBeacon(core.decodeBeacon(JSON.stringify(beacon)), meta);
    await ch.flushed();
    await ch.close();
  });

  test('the same view, text and HTML section as from SQLite', { timeout: 60_000 }, async () => {
    const html = (name) => path.join(tmp, `${name}.html`);
    const a = await makeReport(core, { dbPath: sqlitePath, htmlPath: html('sqlite') });
    const b = await makeReport(core, { store: spec, htmlPath: html('clickhouse') });
    assert.deepEqual(b.report.connectionSetup, a.report.connectionSetup);
    const section = (text) => text.slice(text.indexOf('== connection setup'));
    assert.equal(section(b.text), section(a.text));
    const htmlSection = (file) => { const s = fs.readFileSync(file, 'utf8'); return s.slice(s.indexOf('<section id="connection-setup">'), s.indexOf('<footer>')); };
    assert.equal(htmlSection(html('clickhouse')), htmlSection(html('sqlite')));
    assert.equal((await makeReport(core, { store: spec, arms: 'h3-h3' })).report.connectionSetup, null);
  });
});
