// One pass over a range of stored runs (by rowid) and their measured requests: per region, the usable samples of each arm
// with their run ids, the exclusion counts by reason and the fallback denominator. readReportData() runs it over the whole
// table, split across worker threads. Speed matters (Dropbox's two weeks are 4.2 M requests): SQLite reduces each request
// to (run rowid, one small integer code, value) and hands it to a JavaScript function registered in SQLite; returning the
// rows as objects or arrays cost 2-4x more here.

/** The *_ms columns a report can be made of. */
export const METRICS = Object.freeze(['network_ms', 'queue_ms', 'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'fetch_ms']);

/** Why a measured request is not in its arm, in the order the table shows them. */
export const EXCLUSIONS = Object.freeze(['fallback', 'timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry',
  'aborted', 'missing_metric', 'other']);

// status codes: 0 usable, then 1 + the index in EXCLUSIONS.
const RESULT_STATUS = ['timing_unavailable', 'timeout', 'network_error', 'http_error', 'no_timing_entry', 'aborted'];
let sinkSerial = 0;

const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;

/**
 * db: a better-sqlite3 Database; metric: one of METRICS; sinceIso: '' or an ISO date-time; regions: the region names
 * (index = region code); lo..hi: the rowid range of runs to read.
 * Returns { lo, runRegion, runOrder, regions: [{runs, requests, excludedCounts, fallbackOk, h2: {values, runs}, h3: {...}}] }:
 * runRegion[rowid - lo] is the region index + 1 (0: run not selected), runOrder 0 h2-first, 1 h3-first, 2 other.
 * Every array is a typed array (transferable between threads). Within a region the samples are in run order.
 */
export function scanRuns(db, { metric, sinceIso, regions, lo, hi }) {
  if (!METRICS.includes(metric)) throw new Error(`unknown metric "${metric}"`);
  const regionCase = regions.length
    ? `CASE coalesce(region, 'unknown') ${regions.map((name, i) => `WHEN ${sqlString(name)} THEN ${i}`).join(' ')} ELSE 0 END` : '0';
  // Status of a measured request: the common case (ok over the arm's own protocol) is settled by the first comparisons.
  const status = `CASE WHEN q.result = 'ok' THEN
        CASE WHEN q.protocol = (CASE q.phase WHEN 'control' THEN 'h2' ELSE 'h3' END)
          THEN (CASE WHEN q.${metric} IS NULL THEN ${EXCLUSIONS.indexOf('missing_metric') + 1} ELSE 0 END)
          ELSE 1 END
      ELSE CASE q.result ${RESULT_STATUS.map((r, i) => `WHEN '${r}' THEN ${i + 2}`).join(' ')}
        ELSE ${EXCLUSIONS.indexOf('other') + 1} END
      END`;

  const span = Math.max(0, hi - lo + 1);
  const runRegion = new Uint8Array(span);
  const runOrder = new Uint8Array(span);
  const runSeen = new Uint8Array(span);
  const groups = regions.map(() => ({
    runs: 0, requests: 0, excludedCounts: new Float64Array(EXCLUSIONS.length), fallbackOk: 0,
    arm: [new GrowableSamples(), new GrowableSamples()],
  }));

  // SQLite calls these per row.
  const runSink = (runId, regionIdx, order) => {
    runRegion[runId - lo] = regionIdx + 1;
    runOrder[runId - lo] = order;
    return null;
  };
  // code = arm * 16 + status
  const requestSink = (runId, code, value) => {
    const k = runId - lo;
    const region = runRegion[k];
    if (region === 0) return null; // received before --since
    const g = groups[region - 1];
    if (runSeen[k] === 0) {
      runSeen[k] = 1;
      g.runs++;
    }
    const arm = code >> 4;
    const st = code & 15;
    g.requests++;
    // The fallback rate's denominator: treatment requests that completed, over whatever protocol.
    if (arm === 1 && st <= 1) g.fallbackOk++;
    if (st === 0) g.arm[arm].push(value, runId);
    else g.excludedCounts[st - 1]++;
    return null;
  };
  const serial = sinkSerial++;
  db.function(`h3probe_run_sink_${serial}`, { deterministic: false, directOnly: true }, runSink);
  db.function(`h3probe_request_sink_${serial}`, { deterministic: false, directOnly: true }, requestSink);
  db.prepare(`SELECT count(h3probe_run_sink_${serial}(rowid, ${regionCase},
      CASE run_order WHEN 'h2-first' THEN 0 WHEN 'h3-first' THEN 1 ELSE 2 END))
    FROM runs WHERE rowid BETWEEN ? AND ? AND received_at >= ?`).pluck().get(lo, hi, sinceIso);
  db.prepare(`SELECT count(h3probe_request_sink_${serial}(r.rowid, (q.phase = 'treatment') * 16 + ${status}, q.${metric}))
    FROM runs r JOIN requests q ON q.run_id = r.run_id
    WHERE r.rowid BETWEEN ? AND ? AND q.phase IN ('control', 'treatment')`).pluck().get(lo, hi);

  return {
    lo, runRegion, runOrder,
    regions: groups.map((g) => ({ runs: g.runs, requests: g.requests, excludedCounts: g.excludedCounts, fallbackOk: g.fallbackOk,
      h2: g.arm[0].finish(), h3: g.arm[1].finish() })),
  };
}

/** The typed arrays of a scanRuns() result, to transfer rather than copy between threads. */
export function transferList(result) {
  return [result.runRegion.buffer, result.runOrder.buffer,
    ...result.regions.flatMap((g) => [g.excludedCounts.buffer, g.h2.values.buffer, g.h2.runs.buffer, g.h3.values.buffer, g.h3.runs.buffer])];
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
