// The soak of `npm run soak` (web/bench/soak_collector.mjs), short: the collector into a real ClickHouse at the most
// it takes, SIGKILLed a third of the way in and started again on its log, ClickHouse stopped past the middle and started
// again. Every beacon answered 204 is stored once with all its requests, nothing is stored twice, the active parts stay
// bounded and ClickHouse never says "too many parts". No timing is asserted: the figures are printed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clickhouseInstalled } from '../../launch/clickhouse.mjs';
import { PART_BOUND, soak } from '../../bench/soak_collector.mjs';

test('soak into ClickHouse with a SIGKILL of the collector and a ClickHouse outage: every acknowledged beacon once', { timeout: 300_000 }, async () => {
  assert.ok(clickhouseInstalled(), 'clickhouse-server is not installed: npm run deps');
  const result = await soak({ seconds: 15, outageSeconds: 4, clients: 8 });
  console.log(JSON.stringify(result));
  assert.deepEqual(result.problems, []);
  assert.ok(result.acked > 0 && result.stored >= result.acked, JSON.stringify(result));
  assert.equal(result.missing, 0);
  assert.equal(result.doubled, 0);
  assert.ok(result.outage.acked > 0, 'beacons were acknowledged while ClickHouse was stopped');
  assert.ok(result.outage.logBytes > 0, 'the log grew while ClickHouse was stopped');
  assert.ok(result.maxParts <= PART_BOUND);
  assert.equal(result.tooManyParts, 0);
});
