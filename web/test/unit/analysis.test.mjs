// The statistics as the report calls them: the C++ core compiled for Node (build/wasm/h3probe_node.cjs), checked on
// inputs small enough to compute by hand, so the Embind layer (typed arrays in, JSON out) is tested too.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';

let core;
before(async () => {
  core = await loadH3probeNode();
});

const range = (n, f = (i) => i) => Array.from({ length: n }, (_, i) => f(i + 1));
const close = (actual, expected, tol = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${actual} != ${expected}`);

// h2 = 1..100, h3 = 2, 4, ..., 200, one value per run: medians 50.5 and 101, outer intervals (40, 61) and (80, 122),
// diff 50.5 -/+ z sqrt(21^2 + 42^2) / (2 z); ratio 2 -/+ z sqrt(se3^2 + 4 se2^2) / 50.5 (see quantile_ci.hpp).
const h2Values = new Float64Array(range(100));
const h3Values = new Float64Array(range(100, (i) => 2 * i));
const runIds = new Int32Array(range(100, (i) => 1000 + 7 * i)); // sparse ids, as row ids are

test('analyzeArms gives the delta-method interval for the difference of quantiles', () => {
  const out = JSON.parse(core.analyzeArms(h2Values, runIds, h3Values, runIds, new Float64Array([0.5]), 'delta', 0.95));
  assert.equal(out.method, 'delta');
  assert.equal(out.confidence, 0.95);
  assert.equal(out.n_h2, 100);
  assert.equal(out.runs_h3, 100);
  const [row] = out.rows;
  assert.equal(row.p, 0.5);
  close(row.h2, 50.5);
  close(row.h3, 101);
  close(row.diff_ms, 50.5);
  close(row.diff_pct, 100);
  close(row.ci_ms[0], 27.02128623625221);
  close(row.ci_ms[1], 73.97871376374779);
  close(row.ci_pct[0], 41.191119188445555);
  close(row.ci_pct[1], 158.80888081155445);
  assert.equal(row.significant, true);
  assert.deepEqual(row.ci_h2, [40, 61]);
});

test('analyzeArms groups values by run id: five copies per run widen the interval', () => {
  const values = new Float64Array(range(500, (i) => Math.ceil(i / 5)));
  const runs = new Int32Array(range(500, (i) => Math.ceil(i / 5)));
  const own = new Int32Array(range(500));
  const ps = new Float64Array([0.5]);
  const clustered = JSON.parse(core.analyzeArms(values, runs, values, runs, ps, 'delta', 0.95)).rows[0];
  const naive = JSON.parse(core.analyzeArms(values, own, values, own, ps, 'delta', 0.95)).rows[0];
  assert.equal(clustered.diff_ms, 0);
  assert.equal(clustered.significant, false);
  assert.ok(clustered.ci_ms[1] - clustered.ci_ms[0] > 2 * (naive.ci_ms[1] - naive.ci_ms[0]));
});

test('analyzeArms by bootstrap is deterministic and brackets the estimate', () => {
  const ps = new Float64Array([0.5, 0.9]);
  const a = core.analyzeArms(h2Values, runIds, h3Values, runIds, ps, 'bootstrap', 0.95);
  const b = core.analyzeArms(h2Values, runIds, h3Values, runIds, ps, 'bootstrap', 0.95);
  assert.equal(a, b);
  const out = JSON.parse(a);
  assert.equal(out.method, 'bootstrap');
  for (const row of out.rows) {
    assert.ok(row.ci_ms[0] < row.diff_ms && row.diff_ms < row.ci_ms[1]);
    assert.equal(row.significant, true);
  }
});

test('analyzeArms returns null bounds with too few runs and no rows for an empty arm', () => {
  const few = JSON.parse(core.analyzeArms(new Float64Array([1, 2, 3]), new Int32Array([1, 2, 3]),
    new Float64Array([2, 3, 4]), new Int32Array([1, 2, 3]), new Float64Array([0.5]), 'delta', 0.95));
  assert.equal(few.rows[0].h2, 2);
  assert.equal(few.rows[0].diff_ms, 1);
  assert.deepEqual(few.rows[0].ci_ms, [null, null]);
  assert.equal(few.rows[0].significant, false);
  const empty = JSON.parse(core.analyzeArms(h2Values, runIds, new Float64Array(0), new Int32Array(0),
    new Float64Array([0.5]), 'delta', 0.95));
  assert.deepEqual(empty.rows, []);
  assert.equal(empty.n_h3, 0);
});

test('analyzeArms reports bad arguments in the JSON instead of throwing', () => {
  const ps = new Float64Array([0.5]);
  assert.match(JSON.parse(core.analyzeArms(h2Values, new Int32Array(3), h3Values, runIds, ps, 'delta', 0.95)).error, /length/);
  assert.match(JSON.parse(core.analyzeArms(h2Values, runIds, h3Values, runIds, ps, 'jackknife', 0.95)).error, /method/);
});

test('pairedDifferences summarises per-run differences', () => {
  const out = JSON.parse(core.pairedDifferences(new Float64Array([5, 1, 4, 2, 3]), 0.95));
  assert.equal(out.n, 5);
  close(out.mean, 3);
  close(out.median, 3);
  close(out.p10, 1.4);
  close(out.p90, 4.6);
  close(out.ci_mean[0], 1.6140961756503225);
  close(out.ci_mean[1], 4.385903824349677);
  assert.deepEqual(out.ci_median, [null, null]); // fewer than 10 runs
  const big = JSON.parse(core.pairedDifferences(new Float64Array(range(100)), 0.95));
  assert.deepEqual(big.ci_median, [40, 61]);
});

test('orderEffect compares h3-first with h2-first runs (Welch, normal approximation)', () => {
  const out = JSON.parse(core.orderEffect(new Float64Array([1, 2, 3]), new Float64Array([4, 5, 6]), 0.95));
  assert.equal(out.n_h2_first, 3);
  assert.equal(out.n_h3_first, 3);
  close(out.mean_h2_first, 2);
  close(out.mean_h3_first, 5);
  close(out.diff, 3);
  close(out.ci[0], 1.3996961078815637);
  close(out.ci[1], 4.600303892118436);
  close(out.p_value, 0.00023856345402872847, 1e-6);
});

test('sampleSize returns the runs per arm for a relative change of a quantile', () => {
  const out = JSON.parse(core.sampleSize(h2Values, runIds, 0.5, 0.1, 0.05, 0.8));
  assert.equal(out.runs_per_arm, 1767);
  assert.equal(out.requests_per_run, 1);
  close(out.quantile, 50.5);
  close(out.design_effect, 100 / 99);
  assert.match(out.formula, /^runs_per_arm = /);
});

test('quantiles and compareArms still work as before', () => {
  const q = core.quantiles(new Float64Array([7, 1, 3, 9, 5, 2, 8]), [0.5, 0.75, 0.9, 0.95, 0.99]);
  [5, 7.5, 8.4, 8.7, 8.94].forEach((expected, i) => close(q[i], expected));
  const table = JSON.parse(core.compareArms([100, 200, 300, 400, 500], [90, 180, 270, 360, 450]));
  close(table.rows[0].diff_pct, -10);
});
