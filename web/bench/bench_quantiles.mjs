// `npm run bench:quantiles`: exact quantiles (p50, p75, p90, p95, p99) of the same 10 M lognormal values through the
// Node module's quantiles() (the lab's path), natively (build/native/h3probe_bench) and with numpy.percentile, side by
// side in one run. Budget (docs/design.md): numpy/WASM at least 3x. The report's interval table is npm run bench:report.
// Options: --n N (values, default 10000000), --tiny (100,000 values: the same path in a second, for npm test).
// Exits nonzero if a step fails or the three disagree on a quantile.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../stack/paths.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

const { values: args } = parseArgs({
  options: { n: { type: 'string', default: '10000000' }, tiny: { type: 'boolean', default: false } },
});
const n = args.tiny ? 100_000 : Number(args.n);
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
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
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
  const native = spawnSync(nativeBin, [dataPath], { encoding: 'utf8' });
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
  console.log(`  load average ${load()}`);
  if (!(maxDiff <= 1e-9 * Math.max(...numpyValues))) throw new Error(`the quantiles differ from numpy's by ${maxDiff}`);
} catch (err) {
  // Reported here: uncaught, it would surface through the Emscripten glue's own handler, which prints its source.
  console.error(`bench:quantiles failed: ${err.message}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(dataPath, { force: true });
}
