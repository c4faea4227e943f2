// How the report prints a figure (web/report/numberText.mjs): the same text from either store's sum. Pure logic:
// neither the WebAssembly build nor a server. (The report itself: report.test.mjs.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixed, snap, whole } from '../../report/numberText.mjs';

test('a figure on a rounding boundary prints the same whatever its last bits (the two stores sum in other orders)', () => {
  // -0.865 as C++ sums it in run order and as ClickHouse does per cell, and a Δ of 0 that one path leaves at -1e-16.
  for (const [a, b, d] of [[-0.8649999999999999, -0.8650000000000001, 2], [0.12499999999999997, 0.12500000000000003, 2],
    [1e-16, -1e-16, 2], [2.4999999999999996, 2.5000000000000004, 0], [0.3095, 0.30950000000000005, 3]]) {
    assert.equal(fixed(a, d), fixed(b, d), `${a} and ${b} at ${d} decimals`);
    assert.deepEqual([snap(a, d) > 0, snap(a, d) < 0], [snap(b, d) > 0, snap(b, d) < 0], `the sign of ${a} and ${b}`);
  }
  assert.equal(whole(7709.499999999999), whole(7709.500000000001));
  // Figures away from a boundary print as toFixed prints them.
  assert.equal(fixed(-26.354, 2), '-26.35');
  assert.equal(fixed(599990, 1), '599990.0');
  assert.equal(fixed(0.0004, 3), '0.000');
});
