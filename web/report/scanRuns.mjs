// One pass over a range of stored runs (by rowid) and their measured requests: per region, the usable samples of each arm
// with their run ids, the exclusion counts by reason and the fallback denominator. readReportData() runs it over the whole
// table, split across worker threads. Speed matters (Dropbox's two weeks are 4.2 M requests).
// Fast path (metric network_ms, every selected run packed when stored, see runPack.mjs): one row per run, its samples and
// counts read from the runs row's BLOBs. Otherwise the row scan: SQLite reduces each request to (run rowid, one small
// integer code, value) and hands it to a JavaScript function registered in SQLite; returning the rows as objects or arrays
// cost 2-4x more here. Both give the same result (tested).

import { COUNTS_LENGTH, EXCLUSIONS, PACK_VERSION, PACKED_METRIC, statusSql } from './runPack.mjs';

export { EXCLUSIONS };

/** The *_ms columns a report can be made of. */
export const METRICS = Object.freeze(['network_ms', 'queue_ms', 'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'fetch_ms']);

let sinkSerial = 0;

const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;

/**
 * db: a better-sqlite3 Database; metric: one of METRICS; sinceIso: '' or an ISO date-time; regions: the region names
 * (index = region code); lo..hi: the rowid range of runs to read; packed: true (read the packed runs rows if every
 * selected run has them), false (the row scan) or 'checked' (the caller knows every selected run is packed).
 * Returns { lo, runRegion, runOrder, regions: [{runs, requests, excludedCounts, fallbackOk, h2: {values, runs}, h3: {...}}] }:
 * runRegion[rowid - lo] is the region index + 1 (0: run not selected), runOrder 0 h2-first, 1 h3-first, 2 other.
 * Every array is a typed array (transferable between threads). Within a region the samples are in run order.
 */
export function scanRuns(db, { metric, sinceIso, regions, lo, hi, packed = true }) {
  if (!METRICS.includes(metric)) throw new Error(`unknown metric "${metric}"`);
  const regionCase = regions.length
    ? `CASE coalesce(region, 'unknown') ${regions.map((name, i) => `WHEN ${sqlString(name)} THEN ${i}`).join(' ')} ELSE 0 END` : '0';
  if (packed && metric === PACKED_METRIC && LITTLE_ENDIAN && (packed === 'checked' || allPacked(db, { sinceIso, lo, hi }))) {
    return scanPacked(db, { sinceIso, regions, lo, hi, regionCase });
  }
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
  // The store writes the four columns together.
  return db.prepare(`SELECT count(*) FROM runs WHERE rowid BETWEEN ? AND ? AND received_at >= ? AND packed_version IS NOT ?`)
    .pluck().get(lo, hi, sinceIso, PACK_VERSION) === 0;
}

// The fast path: the same result as the row scan, from the packed runs rows alone. Handing SQLite's BLOBs to JavaScript
// costs a Buffer each (3 per run: slower than the row scan itself at 420k runs), so SQLite concatenates a chunk of runs
// into one hex string instead: per run a 12-byte header (rowid, region code * 4 + order; big-endian, from printf; zero
// padding) then its counts (52 bytes) and samples BLOBs as stored (little-endian), so that every run's samples start
// 8-byte aligned and are copied as Float64Array slices. One string per PACKED_CHUNK runs.
const PACKED_CHUNK = 16384;
const HEADER_BYTES = 12;
/** The fast path reads the little-endian BLOBs through typed arrays, in the host's byte order. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
function scanPacked(db, { sinceIso, regions, lo, hi, regionCase }) {
  const span = Math.max(0, hi - lo + 1);
  const runRegion = new Uint8Array(span);
  const runOrder = new Uint8Array(span);
  const groups = regions.map(() => ({
    runs: 0, requests: 0, excludedCounts: new Float64Array(EXCLUSIONS.length), fallbackOk: 0,
    arm: [new GrowableSamples(), new GrowableSamples()],
  }));
  const stmt = db.prepare(`SELECT group_concat(printf('%08x%08x00000000', rowid,
      (${regionCase}) * 4 + CASE run_order WHEN 'h2-first' THEN 0 WHEN 'h3-first' THEN 1 ELSE 2 END)
      || hex(packed_counts) || hex(h2_network) || hex(h3_network), '')
    FROM (SELECT rowid, region, run_order, h2_network, h3_network, packed_counts FROM runs
      WHERE rowid BETWEEN ? AND ? AND received_at >= ? ORDER BY rowid)`).pluck();
  const recordHead = HEADER_BYTES + COUNTS_LENGTH * 4;
  for (let from = lo; from <= hi; from += PACKED_CHUNK) {
    const hex = stmt.get(from, Math.min(hi, from + PACKED_CHUNK - 1), sinceIso);
    if (!hex) continue;
    let buf = Buffer.from(hex, 'hex');
    if (buf.byteOffset % 8 !== 0) buf = Buffer.from(Uint8Array.prototype.slice.call(buf).buffer);
    const i32 = new Int32Array(buf.buffer, buf.byteOffset, buf.length >> 2);
    const f64 = new Float64Array(buf.buffer, buf.byteOffset, buf.length >> 3);
    let at = 0;
    while (at < buf.length) {
      const runId = buf.readUInt32BE(at);
      const code = buf.readUInt32BE(at + 4);
      const r = code >> 2;
      runRegion[runId - lo] = r + 1;
      runOrder[runId - lo] = code & 3;
      const c = (at + HEADER_BYTES) >> 2;
      const requests = i32[c];
      const n2 = i32[c + 2];
      const n3 = i32[c + 3];
      const g = groups[r];
      if (requests > 0) {
        g.runs++;
        g.requests += requests;
        g.fallbackOk += i32[c + 1];
        for (let i = 0; i < EXCLUSIONS.length; i++) g.excludedCounts[i] += i32[c + 4 + i];
      }
      at += recordHead;
      if (n2 > 0) g.arm[0].pushMany(f64, at >> 3, n2, runId);
      at += n2 * 8;
      if (n3 > 0) g.arm[1].pushMany(f64, at >> 3, n3, runId);
      at += n3 * 8;
    }
    // The sample counts in packed_counts must match the BLOBs' lengths, or every run after would be misread.
    if (at !== buf.length) throw new Error(`packed runs from rowid ${from} do not match their counts`);
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
    if (this.length === this.values.length) this.grow();
    this.values[this.length] = value;
    this.runs[this.length] = run;
    this.length++;
  }

  // n values from a Float64Array at start, all of one run.
  pushMany(source, start, n, run) {
    while (this.length + n > this.values.length) this.grow();
    this.values.set(source.subarray(start, start + n), this.length);
    this.runs.fill(run, this.length, this.length + n);
    this.length += n;
  }

  grow() {
    const values = new Float64Array(this.values.length * 2);
    values.set(this.values);
    const runs = new Int32Array(this.values.length * 2);
    runs.set(this.runs);
    this.values = values;
    this.runs = runs;
  }

  finish() {
    return { values: this.values.slice(0, this.length), runs: this.runs.slice(0, this.length) };
  }
}
