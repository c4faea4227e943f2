// Reads the stored runs and requests for the report: per group (overall and each region) the usable samples of each arm as
// typed arrays with their run ids, exclusion counts by reason, run counts, the fallback rate and the per-run paired
// differences. Large databases are scanned by two worker threads, each over half of the runs (see scanRuns.mjs).
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { EXCLUSIONS, METRICS, scanRuns } from './scanRuns.mjs';
import { PACK_VERSION, PACKED_METRIC } from './runPack.mjs';

export { EXCLUSIONS, METRICS };
export const ARMS = Object.freeze(['h2', 'h3']);

// Below this many runs a worker thread costs more than it saves.
const RUNS_PER_THREAD_MIN = 50_000;

/**
 * db: a better-sqlite3 Database. Options: metric (one of METRICS), since (ISO date or date-time: runs received at or after it),
 * threads (default: 1 for small or in-memory databases, else up to 2).
 * Resolves to { metric, since, storedRuns, regions: [names], groups: [overall, ...regions by runs, most first] } where a group is
 *   { name, runs, requests, excluded: {reason: n}, arms: {h2: {values, runs, n, nRuns}, h3: {...}},
 *     fallback: {completed, fallbacks, rate}, paired: {diffs, h2First, h3First} }
 * values are Float64Array, runs Int32Array (the SQLite rowid of the run); paired.diffs is, per run with both arms usable,
 * median(h3) - median(h2) of that run's samples; h2First/h3First split those by the run's recorded order.
 * A run counts when it has at least one control or treatment request.
 */
export async function readReportData(db, { metric = 'network_ms', since = '', threads } = {}) {
  if (!METRICS.includes(metric)) throw new Error(`unknown metric "${metric}"; one of ${METRICS.join(', ')}`);
  const sinceIso = normalizeSince(since);
  // One pass over the selected runs: the regions, the run count and whether every run was packed when stored (then
  // scanRuns reads the packed rows without checking again).
  const packable = metric === PACKED_METRIC && db.prepare('PRAGMA table_info(runs)').all().some((c) => c.name === 'packed_version');
  const byName = db.prepare(`SELECT coalesce(region, 'unknown') AS name, count(*) AS n,
      ${packable ? 'sum(packed_version IS NOT ?)' : '1'} AS unpacked
    FROM runs WHERE received_at >= ? GROUP BY 1 ORDER BY 1`).all(...(packable ? [PACK_VERSION] : []), sinceIso);
  const regions = byName.map((r) => r.name);
  if (regions.length > 250) throw new Error(`too many distinct regions (${regions.length})`);
  const { lo, hi } = db.prepare('SELECT coalesce(min(rowid), 1) AS lo, coalesce(max(rowid), 0) AS hi FROM runs').get();
  const storedRuns = byName.reduce((s, r) => s + r.n, 0);
  const packed = packable && byName.every((r) => r.unpacked === 0) ? 'checked' : false;

  const span = Math.max(0, hi - lo + 1);
  const n = threads ?? (db.memory || span < 2 * RUNS_PER_THREAD_MIN ? 1 : Math.min(2, os.availableParallelism()));
  const ranges = Array.from({ length: n }, (_, i) => [lo + Math.floor((span * i) / n), lo + Math.floor((span * (i + 1)) / n) - 1]);
  const scan = { metric, sinceIso, regions, packed };
  const parts = n === 1
    ? [scanRuns(db, { ...scan, lo, hi })]
    : await Promise.all(ranges.map(([a, b]) => scanInWorker({ dbPath: db.name, ...scan, lo: a, hi: b })));

  // Whole-table run attributes, indexed by rowid - lo, for the pairing.
  const runRegion = new Uint8Array(span);
  const runOrder = new Uint8Array(span);
  for (const part of parts) {
    runRegion.set(part.runRegion, part.lo - lo);
    runOrder.set(part.runOrder, part.lo - lo);
  }
  const byRegion = regions.map((name, r) => {
    const pieces = parts.map((p) => p.regions[r]);
    const g = finishGroup(name, pieces);
    g.paired = pairedByRun(g.arms, (run) => runOrder[run - lo]);
    return g;
  });
  const overall = finishGroup('overall', parts.flatMap((p) => p.regions));
  overall.paired = {
    diffs: concat(Float64Array, byRegion.map((g) => g.paired.diffs)),
    h2First: concat(Float64Array, byRegion.map((g) => g.paired.h2First)),
    h3First: concat(Float64Array, byRegion.map((g) => g.paired.h3First)),
  };
  // Overall first, then the regions with the most runs; regions without any measured request are left out.
  const shown = byRegion.filter((g) => g.runs > 0).sort((a, b) => b.runs - a.runs || (a.name < b.name ? -1 : 1));
  return { metric, since: sinceIso, storedRuns, regions: shown.map((g) => g.name), groups: [overall, ...shown] };
}

function scanInWorker(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./scanRunsWorker.mjs', import.meta.url), { workerData });
    let result = null;
    worker.once('message', (m) => { result = m; });
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`report scan worker exited with code ${code}`))));
  });
}

// pieces: scanRuns() region results, in run order; their concatenation stays in run order.
function finishGroup(name, pieces) {
  const excludedCounts = new Float64Array(EXCLUSIONS.length);
  let runs = 0;
  let requests = 0;
  let completed = 0;
  for (const p of pieces) {
    runs += p.runs;
    requests += p.requests;
    completed += p.fallbackOk;
    p.excludedCounts.forEach((v, i) => { excludedCounts[i] += v; });
  }
  const excluded = Object.fromEntries(EXCLUSIONS.map((r, i) => [r, excludedCounts[i]]));
  const arms = {};
  for (const arm of ARMS) {
    const values = concat(Float64Array, pieces.map((p) => p[arm].values));
    const armRuns = concat(Int32Array, pieces.map((p) => p[arm].runs));
    arms[arm] = { values, runs: armRuns, n: values.length, nRuns: countDistinct(armRuns) };
  }
  return {
    name, runs, requests, excluded, arms,
    // Treatment requests that completed (result ok): over h3, or fallen back to another protocol.
    fallback: { completed, fallbacks: excluded.fallback, rate: completed ? excluded.fallback / completed : null },
  };
}

// Per run with usable samples in both arms: median(h3) - median(h2), also split by the run's order. Both arms are in run order.
function pairedByRun(arms, orderOf) {
  const a = sortedByRun(arms.h2);
  const b = sortedByRun(arms.h3);
  const diffs = [];
  const h2First = [];
  const h3First = [];
  let i = 0;
  let j = 0;
  while (i < a.runs.length && j < b.runs.length) {
    const ra = a.runs[i];
    const rb = b.runs[j];
    if (ra < rb) { while (i < a.runs.length && a.runs[i] === ra) i++; continue; }
    if (rb < ra) { while (j < b.runs.length && b.runs[j] === rb) j++; continue; }
    const i0 = i;
    const j0 = j;
    while (i < a.runs.length && a.runs[i] === ra) i++;
    while (j < b.runs.length && b.runs[j] === rb) j++;
    const d = median(b.values, j0, j) - median(a.values, i0, i);
    diffs.push(d);
    const order = orderOf(ra);
    if (order === 0) h2First.push(d);
    else if (order === 1) h3First.push(d);
  }
  return { diffs: Float64Array.from(diffs), h2First: Float64Array.from(h2First), h3First: Float64Array.from(h3First) };
}

// SQLite hands the rows over run by run (it walks runs by rowid); sort only if that ever stops being true.
function sortedByRun({ values, runs }) {
  let sorted = true;
  for (let k = 1; k < runs.length && sorted; k++) if (runs[k] < runs[k - 1]) sorted = false;
  if (sorted) return { values, runs };
  const idx = Uint32Array.from(runs.keys()).sort((x, y) => runs[x] - runs[y]);
  return { values: Float64Array.from(idx, (k) => values[k]), runs: Int32Array.from(idx, (k) => runs[k]) };
}

// The median of a run's few (≤ 50) values, values[from..to); the same as linear-interpolation quantile type 7 at p = 0.5.
// Insertion sort in a scratch array: a slice and a typed-array sort per run cost 0.2 s at 420k runs.
let scratch = new Float64Array(64);
function median(values, from, to) {
  const n = to - from;
  if (n > scratch.length) scratch = new Float64Array(n);
  const a = scratch;
  for (let k = 0; k < n; k++) {
    const v = values[from + k];
    let p = k;
    while (p > 0 && a[p - 1] > v) { a[p] = a[p - 1]; p--; }
    a[p] = v;
  }
  const m = n >> 1;
  return n % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

// Run ids are rowids: a byte per id between the smallest and the largest (a Set of 4 M ids cost 0.3 s here).
function countDistinct(runs) {
  if (runs.length === 0) return 0;
  let min = runs[0];
  let max = runs[0];
  for (let i = 1; i < runs.length; i++) {
    const r = runs[i];
    if (r < min) min = r;
    else if (r > max) max = r;
  }
  const seen = new Uint8Array(max - min + 1);
  let n = 0;
  for (let i = 0; i < runs.length; i++) {
    const k = runs[i] - min;
    if (seen[k] === 0) { seen[k] = 1; n++; }
  }
  return n;
}

function concat(Type, arrays) {
  const out = new Type(arrays.reduce((s, a) => s + a.length, 0));
  let at = 0;
  for (const a of arrays) { out.set(a, at); at += a.length; }
  return out;
}

/** '2024-05-01' or a full ISO date-time; '' means everything. Throws on anything else. */
export function normalizeSince(since) {
  if (since === undefined || since === null || since === '') return '';
  const d = new Date(since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(d.getTime())) throw new Error(`--since wants a date like 2024-05-01, got "${since}"`);
  return d.toISOString();
}
