// The collector's live report on a ClickHouse store (either engine, web/test/chdb/lane.mjs): beacons in through the
// collector, /report, /report.json and /report.txt equal to `h3probe report --store clickhouse://… --html --json`, the
// store's own groupings as the only `by`, and the cache: new beacons show only once the window has passed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { assertSameReport } from './sameReport.mjs';
import { httpRequest } from './httpRequest.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-chlive-');
const { tmp } = scratch;
const TOKEN = 'clickhouse-live-report-token-7c1e';
let spec;
let store;
let collector;
let clock = 5_000_000;
after(async () => {
  await collector?.close();
  await store?.close();
  await scratch.cleanup();
});

const request = (port, path, headers = {}, options = {}) => httpRequest(port, { path, headers, ...options });
const bearer = { Authorization: `Bearer ${TOKEN}` };
const beacons = (n, seed, prefix) => [...syntheticBeacons({ runs: n, seed, days: 2 })]
  .map(({ beacon }, i) => JSON.stringify({ ...beacon, run_id: `${prefix}-${i}`, page_load_id: `${prefix}-pl-${i}` }));
async function post(bodies) {
  for (const body of bodies) assert.equal((await request(collector.port, '/beacon', {}, { method: 'POST', body })).status, 204);
  await store.flushed();
}

before(async () => {
  spec = `clickhouse://127.0.0.1:${(await scratch.fresh('live')).httpPort}/live`;
  store = await openClickHouseStore(spec, core, { log: path.join(tmp, 'live-log.ndjson') });
  collector = await startCollector({ store, core, rateLimit: 0,
    report: { token: TOKEN, store: spec, maxAge: 120, rateLimit: 0, now: () => clock } });
  await post(beacons(300, 4, 'ch'));
});

describe('the live report on ClickHouse', () => {
  test('with the token the report equals `h3probe report --store clickhouse://… --html --json`; without it 401', { timeout: 120_000 }, async () => {
    const got = {};
    for (const [format, route] of [['text', '/report.txt'], ['html', '/report'], ['json', '/report.json']]) {
      const r = await request(collector.port, `${route}?by=network`, bearer);
      assert.equal(r.status, 200, r.body);
      got[format] = format === 'json' ? JSON.parse(r.body) : r.body;
      assert.equal((await request(collector.port, route)).status, 401);
    }
    const html = path.join(tmp, 'cli.html');
    const json = path.join(tmp, 'cli.json');
    const out = execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report', '--store', spec, '--by', 'network',
      '--html', html, '--json', json], { encoding: 'utf8' });
    assert.match(got.text, /^h3probe report: network_ms, 300 stored runs/);
    assertSameReport({ sqlite: { text: out.slice(0, out.lastIndexOf('\nHTML report: ')), html: fs.readFileSync(html, 'utf8'),
      json: JSON.parse(fs.readFileSync(json, 'utf8')) }, clickhouse: got });
  });

  test('by: the ClickHouse store\'s groupings only', { timeout: 60_000 }, async () => {
    const r = await request(collector.port, '/report.json?by=browser', bearer);
    assert.equal(r.status, 400);
    assert.match(r.body, /^by must be one of region, day, network, got "browser"\n$/);
  });

  test('the cache: new beacons show once reportMaxAge has passed', { timeout: 120_000 }, async () => {
    const runs = async () => JSON.parse((await request(collector.port, '/report.json', bearer)).body).groups[0].runs;
    assert.equal(await runs(), 300);
    await post(beacons(4, 8, 'late'));
    clock += 119_000;
    assert.equal(await runs(), 300, 'the cached report');
    clock += 1_000;
    assert.equal(await runs(), 304, 'made again: the new runs are in');
  });
});
