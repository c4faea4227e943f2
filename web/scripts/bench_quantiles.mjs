// `npm run bench:quantiles`: exact quantiles (p50, p75, p90, p95, p99) of the same 10 M lognormal values through the
// WASM module in Node, natively (build/native/h3probe_bench) and with numpy.percentile, side by side in one run; then
// the report's interval table (analyzeArms) on a Dropbox-sized sample: 2 arms x 420k runs x 5 requests = 4.2 M.
// Options: --n N (values, default 10000000), --no-bootstrap (skip the optional bootstrap timing).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../devstack/paths.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

const args = process.argv.slice(2);
const n = Number(args[args.indexOf('--n') + 1]) || 10_000_000;
const withBootstrap = !args.includes('--no-bootstrap');
const ps = [0.5, 0.75, 0.9, 0.95, 0.99];

// A seeded generator, so every run benchmarks the same data: xorshift64* and Box-Muller.
function makeNormal(seed) {
  let s = BigInt(seed) | 1n;
  const mask = (1n << 64n) - 1n;
  const uniform = () => {
    s ^= s >> 12n; s ^= (s << 25n) & mask; s ^= s >> 27n;
    return Number(((s * 2685821657736338717n) & mask) >> 11n) / 2 ** 53;
  };
  let spare = null;
  return () => {
    if (spare !== null) { const z = spare; spare = null; return z; }
    const u = 1 - uniform(), v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

function bestOf(repeats, f) {
  let best = Infinity, result;
  for (let i = 0; i < repeats; i += 1) {
    const t0 = performance.now();
    result = f();
    best = Math.min(best, performance.now() - t0);
  }
  return { ms: best, result };
}

const fmt = (ms) => `${ms.toFixed(1)} ms`;
const normal = makeNormal(20240601);
const values = new Float64Array(n);
for (let i = 0; i < n; i += 1) values[i] = Math.exp(normal());
const dataPath = path.join(os.tmpdir(), `h3probe-bench-${process.pid}.f64`);
fs.writeFileSync(dataPath, Buffer.from(values.buffer));

try {
  const core = await loadH3probeNode();
  console.log(`exact quantiles p50..p99 of ${n.toLocaleString('en')} lognormal values (best of 5; input copy included)`);

  const wasm = bestOf(5, () => core.quantiles(values, ps));
  const copyOnly = bestOf(5, () => core.quantiles(values, []));
  console.log(`  WASM (Node)       ${fmt(wasm.ms)}   of which JS->WASM copy ~${fmt(copyOnly.ms)}`);

  const nativeBin = path.join(repoRoot, 'build', 'native', 'h3probe_bench');
  const native = spawnSync(nativeBin, [dataPath, withBootstrap ? '400' : '0'], { encoding: 'utf8' });
  if (native.status !== 0) throw new Error(`h3probe_bench failed: ${native.stderr || native.error}`);
  const field = (key) => native.stdout.match(new RegExp(`^${key}: (.*)$`, 'm'))?.[1];
  const nativeMs = Number(field('native_quantiles_ms'));
  console.log(`  native C++        ${fmt(nativeMs)}   (without the input copy ${fmt(Number(field('native_quantiles_in_place_ms')))}; ` +
    `a full std::sort instead ${fmt(Number(field('native_full_sort_ms')))})`);

  // OPENBLAS_CORETYPE may be set on this machine and slows numpy down: unset for this command only.
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  const py = `
import numpy as np, time, sys
x = np.fromfile(sys.argv[1], dtype=np.float64)
best = 1e300
for _ in range(5):
    t0 = time.perf_counter(); q = np.percentile(x, [50, 75, 90, 95, 99]); best = min(best, time.perf_counter() - t0)
print(best * 1e3); print(' '.join(repr(float(v)) for v in q)); print(np.__version__)
`;
  const numpy = spawnSync('/usr/bin/python3', ['-c', py, dataPath], { encoding: 'utf8', env });
  if (numpy.status !== 0) throw new Error(`numpy failed: ${numpy.stderr}`);
  const [numpyMsText, numpyValuesText, numpyVersion] = numpy.stdout.trim().split('\n');
  const numpyMs = Number(numpyMsText);
  const numpyValues = numpyValuesText.split(' ').map(Number);
  console.log(`  numpy ${numpyVersion} percentile ${fmt(numpyMs)}`);
  const nativeValues = field('native_quantiles_values').trim().split(' ').map(Number);
  const maxDiff = Math.max(...ps.map((_, i) => Math.max(Math.abs(wasm.result[i] - numpyValues[i]), Math.abs(nativeValues[i] - numpyValues[i]))));
  console.log(`  ratio numpy/WASM ${(numpyMs / wasm.ms).toFixed(2)}x, numpy/native ${(numpyMs / nativeMs).toFixed(2)}x; ` +
    `largest difference from numpy's values ${maxDiff.toExponential(1)}`);
  console.log(`  quantiles: ${ps.map((p, i) => `p${p * 100}=${wasm.result[i].toFixed(4)}`).join(' ')}`);

  // The report's table at Dropbox scale: 4.2 M requests, runs of 5 sharing a run factor.
  const runs = 420_000;
  const arm = (mu, sigma) => {
    const v = new Float64Array(runs * 5), r = new Int32Array(runs * 5);
    for (let i = 0, k = 0; i < runs; i += 1) {
      const f = Math.exp(0.3 * normal());
      for (let j = 0; j < 5; j += 1, k += 1) { v[k] = f * Math.exp(mu + sigma * normal()); r[k] = i; }
    }
    return [v, r];
  };
  const [v2, r2] = arm(Math.log(60), 0.6);
  const [v3, r3] = arm(Math.log(58), 0.45);
  const psArray = new Float64Array(ps);
  console.log('\nreport table with run-level 95% intervals, 2 arms x 420,000 runs x 5 requests = 4.2 M requests');
  const delta = bestOf(3, () => core.analyzeArms(v2, r2, v3, r3, psArray, 'delta', 0.95));
  const copy = bestOf(3, () => core.analyzeArms(v2, r2, v3, r3, new Float64Array(0), 'delta', 0.95));
  const p95 = JSON.parse(delta.result).rows[3];
  console.log(`  WASM delta        ${fmt(delta.ms)}   (copy in + run grouping alone ${fmt(copy.ms)}); ` +
    `p95 diff ${p95.diff_ms.toFixed(2)} ms [${p95.ci_ms.map((x) => x.toFixed(2)).join(', ')}]`);
  console.log(`  native delta      ${fmt(Number(field('native_analyze_delta_ms')))}`);
  if (withBootstrap) {
    const boot = bestOf(1, () => core.analyzeArms(v2, r2, v3, r3, psArray, 'bootstrap', 0.95));
    const b95 = JSON.parse(boot.result).rows[3];
    console.log(`  WASM bootstrap    ${fmt(boot.ms)}   (B=400) p95 [${b95.ci_ms.map((x) => x.toFixed(2)).join(', ')}]`);
    console.log(`  native bootstrap  ${fmt(Number(field('native_analyze_bootstrap_ms')))}`);
  }
} finally {
  fs.rmSync(dataPath, { force: true });
}
