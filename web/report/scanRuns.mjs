// One pass over a range of stored runs (by rowid) and their measured requests: per region, the usable samples of each arm
// with their run ids, the exclusion counts by reason and the fallback denominator. readReportData() runs it over the whole
// table, split across worker threads. Speed matters (Dropbox's two weeks are 4.2 M requests).
// Fast path (metric network_ms, every selected run packed when stored, see runPack.mjs): one row per run, its samples and
// counts read from the runs row's BLOBs. Otherwise the row scan: SQLite reduces each request to (run rowid, one small
// integer code, value) and hands it to a JavaScript function registered in SQLite; returning the rows as objects or arrays
// cost 2-4x more here. Both give the same result (tested).

import { EXCLUSIONS, PACK_VERSION, PACKED_METRIC, statusSql, unpackCounts } from './runPack.mjs';

export { EXCLUSIONS };

/** The *_ms columns a report can be made of. */
export const METRICS = Object.freeze(['network_ms', 'queue_ms', 'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'fetch_ms']);

let sinkSerial = 0;

const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;

/**
 * db: a better-sqlite3 Database; metric: one of METRICS; sinceIso: '' or an ISO date-time; regions: the region names
 * (index = region code); lo..hi: the rowid range of runs to read.
 * Returns { lo, runRegion, runOrder, regions: [{runs, requests, excludedCounts, fallbackOk, h2: {values, runs}, h3: {...}}] }:
 * runRegion[rowid - lo] is the region index + 1 (0: run not selected), runOrder 0 h2-first, 1 h3-first, 2 other.
 * Every array is a typed array (transferable between threads). Within a region the samples are in run order.
 */
export function scanRuns(db, { metric, sinceIso, regions, lo, hi, packed = true }) {
  if (!METRICS.includes(metric)) throw new Error(`unknown metric "${metric}"`);
  if (packed && metric === PACKED_METRIC && allPacked(db, { sinceIso, lo, hi })) return scanPacked(db, { sinceIso, regions, lo, hi });
  const regionCase = regions.length
    ? `CASE coalesce(region, 'unknown') ${regions.map((name, i) => `WHEN ${sqlString(name)} THEN ${i}`).join(' ')} ELSE 0 END` : '0';
  const status = statusSql(metric);
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

/** Whether every run in the range received at or after sinceIso was packed (by this PACK_VERSION) when stored. */
export function allPacked(db, { sinceIso, lo, hi }) {
  const columns = new Set(db.prepare('PRAGMA table_info(runs)').all().map((c) => c.name));
  if (!['packed_version', 'h2_network', 'h3_network', 'packed_counts'].every((c) => columns.has(c))) return false;
  return db.prepare(`SELECT count(*) FROM runs WHERE rowid BETWEEN ? AND ? AND received_at >= ?
    AND (packed_version IS NOT ? OR h2_network IS NULL OR h3_network IS NULL OR packed_counts IS NULL)`)
    .pluck().get(lo, hi, sinceIso, PACK_VERSION) === 0;
}

// The fast path: the same result as the row scan, from the packed runs rows alone.
function scanPacked(db, { sinceIso, regions, lo, hi }) {
  const span = Math.max(0, hi - lo + 1);
  const runRegion = new Uint8Array(span);
  const runOrder = new Uint8Array(span);
  const groups = regions.map(() => ({
    runs: 0, requests: 0, excludedCounts: new Float64Array(EXCLUSIONS.length), fallbackOk: 0,
    arm: [new GrowableSamples(), new GrowableSamples()],
  }));
  const regionIndex = new Map(regions.map((name, i) => [name, i]));
  const stmt = db.prepare(`SELECT rowid, coalesce(region, 'unknown'),
      CASE run_order WHEN 'h2-first' THEN 0 WHEN 'h3-first' THEN 1 ELSE 2 END, h2_network, h3_network, packed_counts
    FROM runs WHERE rowid BETWEEN ? AND ? AND received_at >= ? ORDER BY rowid`).raw();
  for (const [runId, region, order, h2, h3, countsBlob] of stmt.iterate(lo, hi, sinceIso)) {
    const r = regionIndex.get(region) ?? 0;
    runRegion[runId - lo] = r + 1;
    runOrder[runId - lo] = order;
    const counts = unpackCounts(countsBlob);
    if (counts.requests === 0) continue;
    const g = groups[r];
    g.runs++;
    g.requests += counts.requests;
    g.fallbackOk += counts.fallbackOk;
    for (let i = 0; i < EXCLUSIONS.length; i++) g.excludedCounts[i] += counts.excluded[i];
    g.arm[0].pushBlob(h2, runId);
    g.arm[1].pushBlob(h3, runId);
  }
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

  // A little-endian Float64 BLOB of values, all of one run.
  pushBlob(blob, run) {
    const n = blob.length >> 3;
    for (let i = 0; i < n; i++) this.push(blob.readDoubleLE(i * 8), run);
  }

  finish() {
    return { values: this.values.slice(0, this.length), runs: this.runs.slice(0, this.length) };
  }
}
