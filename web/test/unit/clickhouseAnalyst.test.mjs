// A read-only analyst's report at a size where the report's queries once outgrew ClickHouse's max_query_size (issue 52:
// "Syntax error: failed at position 262140" on 5,000 runs): 5,000 runs over 14 days whose timings are not on a grid
// (as a browser's performance entries give them), so that nearly every histogram bucket near an estimate holds several
// distinct values and the values pass must name many buckets. Written through the store's own insert path (the
// collector's rows, its log and batched inserts) and into SQLite; the report read as a user whose profile is readonly=1
// (no setting may be sent, max_query_size included) equals SQLite's, text, HTML and JSON. On the chdb lane there are no
// users, but no setting is sent either, so the current engine's own max_query_size (256 KiB) holds the queries too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { MAX_LISTED_KEYS, inListSql } from '../../report/clickhouseAggregates.mjs';
import { clickhouseLane, onChdb } from '../chdb/lane.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { assertSameReport } from './sameReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-chanalyst-');
const { tmp } = scratch;
after(() => scratch.cleanup());

const RUNS = 5000;
const USERS = { writer: { password: 'writer-pw' }, analyst: { password: 'analyst-pw', readonly: true } };

// The synthetic beacons with every timing moved off the generator's 0.1 ms grid by a deterministic fraction of it, onto
// a grid of 1/1024 ms (about the microsecond a browser's performance entries give): several distinct values in most
// buckets near an estimate. (Values of 17 significant digits, which are not sums exactly in float64, make the two
// stores' per-order means differ in their last bit: that is the statistics', not the query size's.)
function* offGrid(runs) {
  let x = 12345;
  const next = () => ((x = (x * 48271) % 2147483647) / 2147483647);
  for (const item of syntheticBeacons({ runs, seed: 52, days: 14 })) {
    for (const q of item.beacon.samples) {
      for (const k of Object.keys(q)) if (k.endsWith('_ms') && typeof q[k] === 'number' && q[k] > 0) q[k] = Math.round((q[k] + next() * 0.1) * 1024) / 1024;
    }
    yield item;
  }
}

test('inListSql: the keys themselves up to MAX_LISTED_KEYS, else the fewest blocks of 2^k keys that hold them', () => {
  assert.equal(inListSql('key', [5, 3, 5]), 'key IN (3, 5)');
  const many = Array.from({ length: 3 * MAX_LISTED_KEYS }, (_, i) => 1_000_000 + 2 * i);
  const sql = inListSql('key', many);
  const m = /^bitShiftRight\(key, (\d+)\) IN \((.*)\)$/.exec(sql);
  assert.ok(m, sql.slice(0, 80));
  const blocks = new Set(m[2].split(', ').map(Number));
  assert.ok(blocks.size <= MAX_LISTED_KEYS);
  for (const k of many) assert.ok(blocks.has(Math.floor(k / 2 ** Number(m[1]))), `key ${k} is in a listed block`);
  assert.ok(sql.length < 64 * 1024, `${sql.length} characters`);
});

describe(`a read-only analyst's report of ${RUNS.toLocaleString('en-US')} runs off the timing grid`, () => {
  let server;
  let sqlitePath;
  const spec = (user) => (onChdb ? `clickhouse://127.0.0.1:${server.httpPort}/analyst`
    : `clickhouse://${user}:${USERS[user].password}@127.0.0.1:${server.httpPort}/analyst`);

  before(async () => {
    server = await scratch.fresh('analyst', onChdb ? {} : { users: USERS });
    sqlitePath = path.join(tmp, 'analyst.sqlite');
    const st = openStore(sqlitePath, core);
    const ch = await openClickHouseStore(spec('writer'), core, { log: path.join(tmp, 'analyst-log') });
    let pending = [];
    for (const { beacon, meta } of offGrid(RUNS)) {
      const text = JSON.stringify(beacon);
      st.insertBeacon(core.decodeBeacon(text), meta);
      pending.push(ch.queueBeacon(core.decodeBeacon(text), meta));
      if (pending.length === 500) { await Promise.all(pending); pending = []; }
    }
    await Promise.all(pending);
    st.close();
    await ch.flushed(120_000);
    await ch.close();
  });

  test('equals SQLite\'s report of the same beacons, text, HTML and JSON; no query longer than 256 KiB', { timeout: 600_000 }, async () => {
    const out = {};
    let longest = 0;
    for (const [name, source] of [['sqlite', { dbPath: sqlitePath }], ['clickhouse', { store: spec('analyst') }]]) {
      const r = await makeReport(core, { ...source, htmlPath: path.join(tmp, `analyst-${name}.html`), jsonPath: path.join(tmp, `analyst-${name}.json`) });
      out[name] = { text: r.text, html: fs.readFileSync(r.htmlPath, 'utf8'), json: JSON.parse(fs.readFileSync(r.jsonPath, 'utf8')) };
      if (name === 'clickhouse') {
        assert.ok(r.passes.some((p) => p.name.endsWith('ranks')), 'the values pass ran');
        longest = Math.max(...r.passes.map((p) => p.sqlLength ?? 0));
      }
    }
    assert.match(out.sqlite.text, new RegExp(`${RUNS.toLocaleString('en-US')} runs`));
    assertSameReport(out);
    assert.ok(longest > 0 && longest < 256 * 1024, `the longest query: ${longest} characters`);
  });
});
