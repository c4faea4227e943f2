// Reads the stored runs and requests for the report in one pass: per group (overall and each region) the usable samples of
// each arm as typed arrays with their run ids, exclusion counts by reason, run counts and the per-run paired differences.
// Speed matters (Dropbox's two weeks are 4.2 M requests): SQLite reduces each request to (run rowid, one small integer code,
// value) and hands them to a JavaScript function registered in SQLite; returning rows as objects or arrays cost 2-4x more.

/** The *_ms columns a report can be made of. */
export const METRICS = Object.freeze(['network_ms', 'queue_ms', 'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'fetch_ms']);

/** Why a measured request is not in its arm, in the order the table shows them. */
export const EXCLUSIONS = Object.freeze(['fallback', 'timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry',
  'aborted', 'missing_metric', 'other']);

export const ORDERS = Object.freeze(['h2-first', 'h3-first']);
export const ARMS = Object.freeze(['h2', 'h3']);

// status codes: 0 usable, then 1 + the index in EXCLUSIONS.
const RESULT_STATUS = ['timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry', 'aborted'];
let sinkSerial = 0;

/**
 * db: a better-sqlite3 Database. Options: metric (one of METRICS), since (ISO date or date-time: runs received at or after it).
 * Returns { metric, since, regions: [names], groups: [overall, ...by region] } where a group is
 *   { name, runs, requests, excluded: {reason: n}, arms: {h2: {values, runs, n, nRuns}, h3: {...}},
 *     fallback: {completed, fallbacks, rate}, paired: {diffs, h2First, h3First} }
 * values are Float64Array, runs Int32Array (the SQLite rowid of the run); paired.diffs is, per run with both arms usable,
 * median(h3) - median(h2) of that run's samples; h2First/h3First split those by the run's recorded order.
 * A run counts when it has at least one control or treatment request.
 */
export function readReportData(db, { metric = 'network_ms', since = '' } = {}) {
  if (!METRICS.includes(metric)) throw new Error(`unknown metric "${metric}"; one of ${METRICS.join(', ')}`);
  const sinceIso = normalizeSince(since);
  const regions = db.prepare(`SELECT DISTINCT coalesce(region, 'unknown') FROM runs WHERE received_at >= ? ORDER BY 1`)
    .pluck().all(sinceIso);
  const maxRun = db.prepare('SELECT coalesce(max(rowid), 0) FROM runs').pluck().get();
  const regionCase = regions.length
    ? `CASE coalesce(region, 'unknown') ${regions.map((name, i) => `WHEN ${sqlString(name)} THEN ${i}`).join(' ')} END` : '0';
  // Status of a measured request: the common case (ok over the arm's own protocol) is decided by the first comparisons.
  const status = `CASE WHEN q.result = 'ok' THEN
        CASE WHEN q.protocol = (CASE q.phase WHEN 'control' THEN 'h2' ELSE 'h3' END)
          THEN (CASE WHEN q.${metric} IS NULL THEN ${EXCLUSIONS.indexOf('missing_metric') + 1} ELSE 0 END)
          ELSE 1 END
      ELSE CASE q.result ${RESULT_STATUS.map((r, i) => `WHEN '${r}' THEN ${i + 2}`).join(' ')}
        ELSE ${EXCLUSIONS.indexOf('other') + 1} END
      END`;

  const groups = [{ name: 'overall' }, ...regions.map((name) => ({ name }))].map((g) => ({
    ...g, runs: 0, requests: 0, excludedCounts: new Float64Array(EXCLUSIONS.length), fallbackOk: 0,
    arm: [new GrowableSamples(), new GrowableSamples()],
  }));
  if (regions.length > 250) throw new Error(`too many distinct regions (${regions.length})`);
  // Per run (indexed by rowid): region + 1 (0: not in the selection) and order (0 h2-first, 1 h3-first, 2 other).
  const runRegion = new Uint8Array(maxRun + 1);
  const runOrder = new Uint8Array(maxRun + 1);
  const runSeen = new Uint8Array(maxRun + 1);

  // SQLite calls these per row; rows never become JavaScript objects.
  const runSink = (runId, regionIdx, order) => {
    runRegion[runId] = regionIdx + 1;
    runOrder[runId] = order;
    return null;
  };
  // code = arm * 16 + status
  const requestSink = (runId, code, value) => {
    const region = runRegion[runId];
    if (region === 0) return null; // received before --since
    const overall = groups[0];
    const regional = groups[region];
    if (runSeen[runId] === 0) {
      runSeen[runId] = 1;
      overall.runs++;
      regional.runs++;
    }
    const arm = code >> 4;
    const st = code & 15;
    overall.requests++;
    regional.requests++;
    if (arm === 1 && st <= 1) {
      // The fallback rate's denominator: treatment requests that completed, over whatever protocol.
      overall.fallbackOk++;
      regional.fallbackOk++;
    }
    if (st === 0) {
      overall.arm[arm].push(value, runId);
      regional.arm[arm].push(value, runId);
    } else {
      overall.excludedCounts[st - 1]++;
      regional.excludedCounts[st - 1]++;
    }
    return null;
  };
  const serial = sinkSerial++;
  db.function(`h3probe_run_sink_${serial}`, { deterministic: false, directOnly: true }, runSink);
  db.function(`h3probe_request_sink_${serial}`, { deterministic: false, directOnly: true }, requestSink);
  db.prepare(`SELECT count(h3probe_run_sink_${serial}(rowid, ${regionCase},
      CASE run_order WHEN 'h2-first' THEN 0 WHEN 'h3-first' THEN 1 ELSE 2 END))
    FROM runs WHERE received_at >= ?`).pluck().get(sinceIso);
  db.prepare(`SELECT count(h3probe_request_sink_${serial}(r.rowid, (q.phase = 'treatment') * 16 + ${status}, q.${metric}))
    FROM runs r JOIN requests q ON q.run_id = r.run_id
    WHERE q.phase IN ('control', 'treatment')`).pluck().get();

  const finished = groups.map((g) => finishGroup(g));
  const paired = pairedByRun(finished[0].arms, runRegion, runOrder, regions.length);
  finished.forEach((g, i) => { g.paired = paired[i]; });
  // Overall first, then the regions with the most runs; regions without any measured request are left out.
  const byRegion = finished.slice(1).filter((g) => g.runs > 0).sort((a, b) => b.runs - a.runs || (a.name < b.name ? -1 : 1));
  return { metric, since: sinceIso, storedRuns: db.prepare('SELECT count(*) FROM runs WHERE received_at >= ?').pluck().get(sinceIso),
    regions: byRegion.map((g) => g.name), groups: [finished[0], ...byRegion] };
}

// Per run with usable samples in both arms: median(h3) - median(h2); overall and split by region, each also by order.
function pairedByRun(arms, runRegion, runOrder, nRegions) {
  const a = sortedByRun(arms.h2);
  const b = sortedByRun(arms.h3);
  const out = Array.from({ length: nRegions + 1 }, () => ({ diffs: [], h2First: [], h3First: [] }));
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
    const d = median(b.values.slice(j0, j)) - median(a.values.slice(i0, i));
    for (const g of [out[0], out[runRegion[ra]]]) {
      g.diffs.push(d);
      if (runOrder[ra] === 0) g.h2First.push(d);
      else if (runOrder[ra] === 1) g.h3First.push(d);
    }
  }
  return out.map((g) => ({ diffs: Float64Array.from(g.diffs), h2First: Float64Array.from(g.h2First), h3First: Float64Array.from(g.h3First) }));
}

// SQLite hands the rows over run by run (it scans runs by rowid); sort only if that ever stops being true.
function sortedByRun({ values, runs }) {
  let sorted = true;
  for (let k = 1; k < runs.length && sorted; k++) if (runs[k] < runs[k - 1]) sorted = false;
  if (sorted) return { values, runs };
  const idx = Uint32Array.from(runs.keys()).sort((x, y) => runs[x] - runs[y]);
  return { values: Float64Array.from(idx, (k) => values[k]), runs: Int32Array.from(idx, (k) => runs[k]) };
}

function finishGroup(g) {
  const excluded = Object.fromEntries(EXCLUSIONS.map((r, i) => [r, g.excludedCounts[i]]));
  const fallbacks = excluded.fallback;
  const arms = {};
  ARMS.forEach((name, i) => {
    const { values, runs } = g.arm[i].finish();
    arms[name] = { values, runs, n: values.length, nRuns: countDistinct(runs) };
  });
  return {
    name: g.name,
    runs: g.runs,
    requests: g.requests,
    excluded,
    arms,
    // Treatment requests that completed (result ok): over h3, or fallen back to another protocol.
    fallback: { completed: g.fallbackOk, fallbacks, rate: g.fallbackOk ? fallbacks / g.fallbackOk : null },
  };
}

// The median of a run's few (≤ 50) values; the same as linear-interpolation quantile type 7 at p = 0.5.
function median(a) {
  a.sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

function countDistinct(runs) {
  const seen = new Set();
  let n = 0;
  for (let i = 0; i < runs.length; i++) {
    // Runs come in order, so comparing with the previous one settles almost every row without the set.
    if (i > 0 && runs[i] === runs[i - 1]) continue;
    if (!seen.has(runs[i])) { seen.add(runs[i]); n++; }
  }
  return n;
}

const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;

/** '2024-05-01' or a full ISO date-time; '' means everything. Throws on anything else. */
export function normalizeSince(since) {
  if (since === undefined || since === null || since === '') return '';
  const d = new Date(since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(d.getTime())) throw new Error(`--since wants a date like 2024-05-01, got "${since}"`);
  return d.toISOString();
}

// A Float64Array of values with an Int32Array of run ids beside it, doubling when full.
class GrowableSamples {
  constructor(capacity = 1024) {
    this.values = new Float64Array(capacity);
    this.runs = new Int32Array(capacity);
    this.length = 0;
  }

  push(value, run) {
    if (this.length === this.values.length) {
      const values = new Float64Array(this.length * 2);
      values.set(this.values);
      const runs = new Int32Array(this.length * 2);
      runs.set(this.runs);
      this.values = values;
      this.runs = runs;
    }
    this.values[this.length] = value;
    this.runs[this.length] = run;
    this.length++;
  }

  finish() {
    return { values: this.values.slice(0, this.length), runs: this.runs.slice(0, this.length) };
  }
}
