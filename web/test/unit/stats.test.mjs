// The benchmarks' statistics (web/bench/stats.mjs) against published values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quantile, wilson } from '../../bench/stats.mjs';

test("wilson() gives the score intervals of Newcombe's comparison of intervals for one proportion (Statistics in Medicine, 1998: its worked examples)", () => {
  const published = [[81, 263, 0.2553, 0.3662], [15, 148, 0.0624, 0.1605], [0, 20, 0, 0.1611], [1, 29, 0.0061, 0.1718]];
  for (const [k, n, lo, hi] of published) {
    const [low, high] = wilson(k, n);
    assert.ok(Math.abs(low - lo) < 5e-5 && Math.abs(high - hi) < 5e-5, `${k} of ${n}: [${low}, ${high}], published [${lo}, ${hi}]`);
  }
  assert.deepEqual(wilson(29, 29).map((x) => Number(x.toFixed(4))), [0.883, 1]); // the mirror of 0 of 29, capped at 1
});

test('quantile() is the order statistic at floor(p n), NaN for no values, and leaves its input alone', () => {
  const xs = [5, 1, 4, 2, 3];
  assert.equal(quantile(xs, 0.5), 3);
  assert.equal(quantile(xs, 0.9), 5);
  assert.equal(quantile(xs, 0), 1);
  assert.equal(quantile(xs, 1), 5);
  assert.deepEqual(xs, [5, 1, 4, 2, 3]);
  assert.ok(Number.isNaN(quantile([], 0.5)));
});
