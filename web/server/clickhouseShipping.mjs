// The collector's beacons into ClickHouse. A beacon is acknowledged once it is in a local log (beaconLog.mjs: fsynced,
// one fsync per event-loop turn); the log goes to ClickHouse in large batches, one INSERT per table about once a second,
// as ClickHouse wants its inserts. While ClickHouse cannot be reached the log grows, and it drains when ClickHouse
// answers again: nothing acknowledged is lost, and a beacon sent again after a failure or a crash is inserted once (rows
// a table already holds are left out: request rows by (run_id, phase, idx), the others by run_id).
import { openBeaconLog } from './beaconLog.mjs';
import { serverAllows } from './clickhouseConnection.mjs';
import { clickhouseRows } from './clickhouseRows.mjs';
import { RUNS, sqlString } from './clickhouseRunSql.mjs';
import { ensureClickHouseTables } from './clickhouseSchema.mjs';

const RETRY_MS = 500;
// How long closing the store (the collector's drain) waits for the log's last batches.
const CLOSE_SHIP_MS = 10_000;
// One batch per table about once a second (ClickHouse's advice: ~1 insert per second, of thousands of rows), or sooner
// when this many beacons wait (about 13 request rows each: the request batch stays one insert block of ClickHouse's,
// 1,048,576 rows, so that it goes in whole or not at all).
const FLUSH_MS = 1000;
const MAX_BATCH = 20_000;
const MAX_BATCH_BYTES = 256 * 1024 * 1024;
// Lines of a batch turned into insert bodies between two yields to the event loop (~2 MB, a few ms).
const SLICE_LINES = 300;
// Run_ids remembered to answer a client's retry as a duplicate at once (two generations of this many).
const RECENT_IDS = 100_000;

// A beacon as one line of the collector's log (beaconLog.mjs): its run_id, then its rows serialized for the insert
// (JSONEachRow), run, record, then each request.
export function logLine({ run, requests, record }) {
  return [run.run_id, JSON.stringify(run), JSON.stringify(record), ...requests.map((q) => JSON.stringify(q))].join('\t');
}

// A client's retry carries the run_id of the beacon it retries, usually within seconds: the run_ids acknowledged
// lately answer it as a duplicate at once. One older than that is still kept out of the tables when shipped.
function recentRunIds() {
  let recent = new Set();
  let older = new Set();
  return {
    has: (id) => recent.has(id) || older.has(id),
    add(id) {
      recent.add(id);
      if (recent.size >= RECENT_IDS) { older = recent; recent = new Set(); }
    },
    forget: (id) => recent.delete(id),
  };
}

// A batch's lines (their bytes): each one's run_id, and where each starts (then the batch's end).
function batchLines(bytes) {
  const starts = [];
  const ids = [];
  for (let at = 0; at < bytes.length;) {
    starts.push(at);
    // run_ids are ASCII: letters, digits, - and _ (the decoder's rule).
    ids.push(bytes.toString('latin1', at, bytes.indexOf(0x09, at)));
    at = bytes.indexOf(0x0a, at) + 1;
  }
  starts.push(bytes.length);
  return { starts, ids };
}

// What the tables already hold of these run_ids: the runs (a retry's), and when uncertain the request rows (their keys,
// and the runs some of whose rows are in) and the records; none of the latter two otherwise.
async function heldRows(client, ids, uncertain) {
  const inList = [...new Set(ids)].map(sqlString).join(',');
  const big = { settings: { max_query_size: String(64 * 1024 * 1024) } };
  const existing = async (table) => new Set((await client.json(`SELECT DISTINCT run_id FROM ${table} WHERE run_id IN (${inList})`, big))
    .map((r) => r.run_id));
  const existingRequests = async () => {
    const keys = new Set();
    const partial = new Set();
    for (const r of await client.json(`SELECT run_id, phase, idx FROM requests WHERE run_id IN (${inList})`, big)) {
      keys.add(`${r.run_id}\t${r.phase}\t${r.idx}`);
      partial.add(r.run_id);
    }
    return { keys, partial };
  };
  const none = new Set();
  const [inRuns, requests, records] = await Promise.all([existing('runs'),
    uncertain ? existingRequests() : { keys: none, partial: none }, uncertain ? existing('run_records') : none]);
  return { inRuns, requests, records };
}

// The insert bodies per table (lists of Buffers) of the lines keep marks, less the rows held (heldRows()). The lines
// are turned into bodies a slice at a time, yielding to the event loop between slices, so that a second's batch never
// holds up the answers.
async function insertBodies(bytes, { starts, ids }, keep, held) {
  const bodies = { runs: [], requests: [], run_records: [] };
  for (let first = 0; first < ids.length; first += SLICE_LINES) {
    const last = Math.min(ids.length, first + SLICE_LINES);
    const lines = bytes.toString('utf8', starts[first], starts[last]).split('\n');
    const out = { runs: [], requests: [], run_records: [] };
    for (let i = first; i < last; i++) {
      if (!keep[i]) continue;
      const parts = lines[i - first].split('\t');
      out.runs.push(parts[1]);
      if (!held.records.has(ids[i])) out.run_records.push(parts[2]);
      const some = held.requests.partial.has(ids[i]);
      for (let k = 3; k < parts.length; k++) {
        // Only a run some of whose rows are in is parsed, to find which.
        if (some) {
          const q = JSON.parse(parts[k]);
          if (held.requests.keys.has(`${ids[i]}\t${q.phase}\t${q.idx}`)) continue;
        }
        out.requests.push(parts[k]);
      }
    }
    for (const [table, rows] of Object.entries(out)) if (rows.length > 0) bodies[table].push(Buffer.from(`${rows.join('\n')}\n`));
    await new Promise((r) => setImmediate(r));
  }
  return bodies;
}

// The store's inserts. prepare(): the settings they are sent with, asked of the server once. insertBatch(bytes,
// uncertain): one batch of log lines into the three tables, request rows and records first, the run rows last (a run
// row is the mark that its beacon is in, which a later check trusts); resolves to the number of beacons inserted. Rows
// of a run_id already in runs are left out (a retry), and when uncertain those already in each table: a record by its
// run_id, a request row by its (run_id, phase, idx), since an insert cut off midway may have committed some of its
// blocks and not others. Before that check, any insert of this store whose outcome is unknown is stopped on the server
// (KILL QUERY … SYNC), so that none lands after it.
function batchInserter(client, target) {
  // The query_ids of this store's inserts not known to have ended (a failure, a timeout): stopped before a retry's check.
  const unsettled = new Set();
  const insertTag = Date.now().toString(36);
  let inserts = 0;
  // One block per insert where the server would cut a body into several (parallel parsing, ClickHouse ≥ 20.x).
  let insertSettings = null;
  const insert = async (table, bodies) => {
    if (bodies[table].length === 0) return;
    const queryId = `h3probe-insert-${process.pid}-${insertTag}-${++inserts}-${table}`;
    unsettled.add(queryId);
    await client.insertChunks(table, bodies[table], { queryId, settings: insertSettings });
    unsettled.delete(queryId);
  };
  return {
    async prepare() {
      if (insertSettings) return;
      const { known } = await serverAllows(client);
      insertSettings = {
        ...(known('input_format_parallel_parsing') ? { input_format_parallel_parsing: '0' } : {}),
        // Replicated tables drop a block equal to one of the last ones inserted; the store's own check keeps each row
        // once (a retried batch differs from the first), and two beacons' equal value-summary blocks are not one.
        ...(target.cluster && known('insert_deduplicate') ? { insert_deduplicate: '0' } : {}),
      };
    },
    async insertBatch(bytes, uncertain) {
      const lines = batchLines(bytes);
      if (uncertain && unsettled.size) {
        await client.query(`KILL QUERY WHERE query_id IN (${[...unsettled].map(sqlString).join(', ')}) SYNC`);
        unsettled.clear();
      }
      const held = await heldRows(client, lines.ids, uncertain);
      const seen = new Set();
      const keep = lines.ids.map((id) => !held.inRuns.has(id) && !seen.has(id) && seen.add(id));
      const bodies = await insertBodies(bytes, lines, keep, held);
      await Promise.all([insert('requests', bodies), insert('run_records', bodies)]);
      await insert('runs', bodies);
      return keep.filter(Boolean).length;
    },
  };
}

// Runs pass() at once, then again flushMs after each pass began (retryMs after one that failed: failed(err)) until
// stop(). now(): a pass now (or right after the one in flight), resolving when that pass ends.
function passLoop(pass, { flushMs, retryMs, failed }) {
  let stopped = false;
  let timer = null;
  let running = null;
  let wake = null;
  function tick() {
    timer = null;
    const started = Date.now();
    running = pass().then(() => flushMs, (err) => {
      failed(err);
      return retryMs;
    }).then((delay) => {
      running = null;
      if (wake) { const w = wake; wake = null; w(); }
      if (!stopped) timer = setTimeout(tick, Math.max(0, delay - (Date.now() - started)));
    });
  }
  timer = setTimeout(tick, 0);
  return {
    now: () => new Promise((resolve) => {
      if (running) { const prev = wake; wake = () => { prev?.(); resolve(); }; return; }
      clearTimeout(timer);
      tick();
      wake = resolve;
    }),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

// Ships the log to target's tables through client, a pass per tick of passLoop(): each pass seals the log's current
// segment and ships every sealed line, in batches of at most maxBatch beacons. The tables are made (and the runs they
// hold counted) when ClickHouse first answers, here if it does now. Resolves to { shipping (its figures: stats,
// lastError, base: the runs in ClickHouse when first reached, pendingHere: beacons acknowledged since opening and not
// yet shipped), now(), stop() }.
async function startShipping(schema, target, client, log, { retryMs, flushMs, maxBatch }) {
  const shipping = {
    stats: { logged: 0, inserted: 0, duplicates: 0, batches: 0, failures: 0 }, lastError: null, base: null, pendingHere: 0,
    // Whether the next batch may hold rows a table already has (the first after opening, the first after a failure).
    uncertain: true,
  };
  const firstSegment = log.seal();  // segments from here on hold only this process's beacons
  const reach = async () => {
    await ensureClickHouseTables(schema, target);
    // Each run once, a run another collector also wrote included (RUNS: FINAL, a merge of the run_id-sorted parts).
    shipping.base ??= Number((await client.json(`SELECT count() AS n FROM ${RUNS}`))[0].n);
  };
  try {
    await reach();
  } catch (err) {
    // The log takes beacons while ClickHouse is away; the tables are made when it answers.
    if (!err.unreachable) {
      log.close();
      throw err;
    }
    shipping.lastError = err.message;
  }
  const inserter = batchInserter(client, target);
  const { stats } = shipping;
  const loop = passLoop(async () => {
    if (shipping.base === null) await reach();
    await inserter.prepare();
    log.sealIfCaughtUp();
    for (let batch; (batch = log.take(maxBatch, MAX_BATCH_BYTES));) {
      const fresh = await inserter.insertBatch(batch.bytes, shipping.uncertain);
      log.shipped(batch);
      shipping.uncertain = false;
      stats.batches++;
      stats.inserted += fresh;
      stats.duplicates += batch.count - fresh;
      if (batch.segment >= firstSegment) shipping.pendingHere -= batch.count;
      shipping.base += fresh;
    }
    shipping.lastError = null;
  }, { flushMs, retryMs, failed: (err) => {
    shipping.uncertain = true;
    stats.failures++;
    shipping.lastError = err.message;
  } });
  return { shipping, now: loop.now, stop: loop.stop };
}

/**
 * The collector's side of a ClickHouse store: beacons into the log at logFile (made or reopened: what an earlier
 * process left in it is shipped too) and the log into target's tables through client, once every flushMs (default
 * 1 s: ClickHouse wants about one insert per second per table, of thousands of rows) or when maxBatch beacons wait,
 * one INSERT per table. While ClickHouse cannot be reached or refuses a batch, the log grows and the batch is tried
 * again every retryMs. Resolves to the store's methods that take and ship beacons: queueBeacon, insertBeacon,
 * countRuns, checkWritable, state, flushed, close.
 */
export async function shipBeaconLog(schema, target, client, logFile, { retryMs = RETRY_MS, flushMs = FLUSH_MS, maxBatch = MAX_BATCH } = {}) {
  const log = openBeaconLog(logFile);
  const { shipping, now, stop } = await startShipping(schema, target, client, log, { retryMs, flushMs, maxBatch });
  const { stats } = shipping;
  const recent = recentRunIds();
  let closed = false;
  let closing = null;
  const enqueue = async (decoded, meta) => {
    if (closed) throw new Error('store closed');
    const id = decoded.run.run_id;
    if (recent.has(id)) return { duplicate: true };
    recent.add(id);
    const rows = clickhouseRows(schema, decoded, { ...meta, receivedAt: meta.receivedAt ?? new Date().toISOString() });
    try {
      await log.append(logLine(rows));
    } catch (err) {
      recent.forget(id);
      throw new Error(`the beacon log failed: ${err.message}`);
    }
    stats.logged++;
    shipping.pendingHere++;
    return { duplicate: false };
  };
  return {
    /**
     * decoded: core.decodeBeacon()'s {run, requests}; meta: {receivedAt, region, country, asn, asOrg, browser,
     * browserMajor}. Resolves {duplicate} once logged.
     */
    queueBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    insertBeacon: (decoded, meta = {}) => enqueue(decoded, meta),
    /** Runs in ClickHouse when it was first reached plus those shipped or acknowledged since. */
    countRuns: () => (shipping.base ?? 0) + shipping.pendingHere,
    /** Writable while the log is; says whether ClickHouse takes the batches and how much waits in the log. */
    checkWritable: () => {
      const failed = log.failed();
      return { ok: !closed && !failed, ...(failed ? { error: `beacon log: ${failed.message}` } : {}),
        clickhouse: shipping.lastError ? `failing: ${shipping.lastError}` : 'ok', logBytes: log.backlog().bytes };
    },
    state: () => ({ ...stats, ...log.backlog(), lastError: shipping.lastError }),
    /** Resolves once every acknowledged beacon is in ClickHouse (or rejects after timeoutMs). */
    async flushed(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await now();
        if (log.backlog().bytes === 0 && !shipping.lastError) return;
        if (Date.now() > deadline) throw new Error(`ClickHouse store not flushed after ${timeoutMs} ms: ${shipping.lastError}`);
        await new Promise((r) => setTimeout(r, Math.min(retryMs, 200)));
      }
    },
    /**
     * Takes no more beacons and ships what the log holds, for at most CLOSE_SHIP_MS (what ClickHouse does not take by
     * then stays in the log for the next start with the same log file). Resolves to { unshipped: the acknowledged beacons
     * left in the log, logFiles: the files that hold them, lastError }.
     */
    async close() {
      if (closed) return closing;
      closed = true;
      stop();
      closing = (async () => {
        await new Promise((r) => setImmediate(r));  // the appends of this turn
        let timeout;
        const deadline = new Promise((r) => { timeout = setTimeout(r, CLOSE_SHIP_MS); });
        // Twice: a pass after a failure ships the sealed segments, the next one the segment written meanwhile.
        await Promise.race([now().then(() => (shipping.lastError || log.backlog().bytes === 0 ? null : now())), deadline]);
        clearTimeout(timeout);
        log.close();
        const { beacons, files } = log.remaining();
        return { unshipped: beacons, logFiles: files, lastError: shipping.lastError };
      })();
      return closing;
    },
  };
}
