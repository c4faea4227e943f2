// Writes a synthetic beacon database at Dropbox scale for the report benchmark: a heavy-tailed lognormal network time with
// a run-level random effect, a regional mix and latency scale after the Dropbox post (Europe ~2x, Asia ~3x North America;
// 25% Europe, 15% Asia), lossy runs where HTTP/2's head-of-line blocking delays every request of the arm but HTTP/3 only the
// request that lost a packet (so HTTP/3 wins in the tail), UDP-blocked runs whose treatment falls back to h2, and a few
// failures of each kind. Same schema as the collector's store, runs packed with the same function; deterministic for a
// given seed.
import fs from 'node:fs';
import { openStore } from '../server/store.mjs';
import { PACK_VERSION, packRun } from './runPack.mjs';

// 2: runs packed for the report (runPack.mjs), as the collector's store packs them.
export const GENERATOR_VERSION = 2;

// share of runs, median network time on a warm connection (ms), share of lossy runs, share of UDP-blocked runs, a country
export const REGION_MIX = Object.freeze([
  { region: 'North America', share: 0.55, medianMs: 60, lossy: 0.06, udpBlocked: 0.02, country: 'US' },
  { region: 'Europe', share: 0.25, medianMs: 120, lossy: 0.08, udpBlocked: 0.03, country: 'DE' },
  { region: 'Asia', share: 0.15, medianMs: 180, lossy: 0.14, udpBlocked: 0.05, country: 'JP' },
  { region: 'Central America', share: 0.02, medianMs: 100, lossy: 0.10, udpBlocked: 0.04, country: 'MX' },
  { region: 'South America', share: 0.015, medianMs: 160, lossy: 0.12, udpBlocked: 0.04, country: 'BR' },
  { region: 'Oceania', share: 0.008, medianMs: 200, lossy: 0.08, udpBlocked: 0.03, country: 'AU' },
  { region: 'Africa', share: 0.007, medianMs: 220, lossy: 0.15, udpBlocked: 0.06, country: 'ZA' },
]);

// Per measured request, before the latency draw (result, share).
const FAILURES = [['timing_unavailable', 0.002], ['timeout', 0.001], ['network_error', 0.001], ['http_error', 0.0005],
  ['no_timing_entry', 0.001], ['aborted', 0.0003]];
const COLUMNS = ['run_id', 'phase', 'idx', 'origin', 'result', 'http_status', 'protocol', 'reused', 'network_ms', 'queue_ms',
  'dns_ms', 'connect_ms', 'tls_ms', 'request_ms', 'response_ms', 'start_ms', 'fetch_ms'];

/**
 * Writes (or reuses, when a complete file with the same parameters exists) the database at path.
 * runs: page loads; perArm: requests per arm; days: span of received_at; order: 'random' | 'h2-first'.
 * Returns { path, reused, runs, measuredRequests, rows, seconds }.
 */
export function writeSyntheticDb(path, { runs = 420_000, perArm = 5, days = 14, seed = 1, order = 'random', start = '2022-12-15' } = {}) {
  const params = JSON.stringify({ v: GENERATOR_VERSION, pack: PACK_VERSION, runs, perArm, days, seed, order, start });
  if (fs.existsSync(path)) {
    const store = openStore(path);
    const meta = store.db.prepare("SELECT value FROM bench_meta WHERE key = 'params'").pluck();
    let same = false;
    try { same = meta.get() === params; } catch { same = false; }
    store.close();
    if (same) return { path, reused: true, runs, measuredRequests: runs * perArm * 2, rows: runs * (perArm * 2 + 3), seconds: 0 };
  }
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path + suffix, { force: true });

  const t0 = performance.now();
  const store = openStore(path);
  const { db } = store;
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE bench_meta (key TEXT PRIMARY KEY, value TEXT)');
  const insertRun = db.prepare(`INSERT INTO runs (run_id, page_load_id, config_id, module_version, run_order, outcome, error,
    received_at, region, country, packed_version, h2_network, h3_network, packed_counts)
    VALUES (?, ?, 'bench', '0.1.0', ?, 'complete', '', ?, ?, ?, ?, ?, ?, ?)`);
  const perRun = perArm * 2 + 3;
  const rowPlaceholders = `(${COLUMNS.map(() => '?').join(', ')})`;
  const insertRequests = db.prepare(`INSERT INTO requests (${COLUMNS.join(', ')}) VALUES
    ${Array.from({ length: perRun }, () => rowPlaceholders).join(', ')}`);

  const rand = mulberry32(seed);
  const normal = () => {
    // Box–Muller; one of the pair is enough here.
    const u = 1 - rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  const cumulative = [];
  let acc = 0;
  for (const r of REGION_MIX) cumulative.push((acc += r.share));
  const startMs = Date.parse(`${start}T00:00:00Z`);
  const spanMs = days * 86_400_000;
  const rowValues = new Array(perRun * COLUMNS.length);

  const write = db.transaction(() => {
    for (let i = 0; i < runs; i++) {
      const u = rand();
      let k = cumulative.findIndex((c) => u < c);
      if (k < 0) k = REGION_MIX.length - 1;
      const reg = REGION_MIX[k];
      const runId = `bench-${String(i).padStart(8, '0')}`;
      const runOrder = order === 'random' ? (rand() < 0.5 ? 'h2-first' : 'h3-first') : order;
      const receivedAt = new Date(startMs + Math.floor((i / runs) * spanMs)).toISOString();
      const packRows = [];

      const runEffect = 0.4 * normal();
      const lossy = rand() < reg.lossy;
      const udpBlocked = rand() < reg.udpBlocked;
      // One retransmission timeout-like stall on the HTTP/2 connection holds every stream behind it.
      const h2Stall = lossy && rand() < 0.6 ? reg.medianMs * (1 + 2 * -Math.log(1 - rand())) : 0;
      let p = 0;
      const row = (phase, idx, origin, protocol, ms, result = 'ok', connectMs = 0) => {
        const failed = result !== 'ok';
        const network = failed && result !== 'http_error' ? null : ms;
        const values = [runId, phase, idx, origin, result, result === 'http_error' ? 503 : failed ? null : 204, protocol,
          connectMs > 0 ? 0 : 1, network, network === null ? null : 0.1, network === null ? null : 0,
          network === null ? null : connectMs, network === null ? null : connectMs * 0.6,
          network === null ? null : (network - connectMs - 0.1) * 0.9, network === null ? null : (network - connectMs - 0.1) * 0.1,
          1000 + idx, network === null ? null : network + 0.8];
        for (const v of values) rowValues[p++] = v;
        packRows.push({ phase, idx, result, protocol, network_ms: network });
      };
      const base = reg.medianMs;
      row('prewarm', 0, 'h3', 'h2', base * 3 * Math.exp(runEffect), 'ok', base * 2);
      row('prewarm', 1, 'h3', udpBlocked ? 'h2' : 'h3', base * Math.exp(runEffect));
      row('prewarm', 2, 'h2', 'h2', base * 3 * Math.exp(runEffect), 'ok', base * 2);
      for (const arm of ['control', 'treatment']) {
        const h3 = arm === 'treatment';
        for (let j = 0; j < perArm; j++) {
          let ms = (h3 && !udpBlocked ? 0.96 : 1) * base * Math.exp(runEffect + 0.35 * normal());
          if (h3 && !udpBlocked) {
            if (lossy && rand() < 0.15) ms += base * (1 + 2 * -Math.log(1 - rand()));
          } else {
            ms += h2Stall;
          }
          let result = 'ok';
          let f = rand();
          for (const [name, share] of FAILURES) {
            if (f < share) { result = name; break; }
            f -= share;
          }
          const protocol = result === 'timing_unavailable' || result === 'timeout' || result === 'network_error' ? ''
            : h3 && !udpBlocked ? 'h3' : 'h2';
          row(arm, j, h3 ? 'h3' : 'h2', protocol, Math.round(ms * 10) / 10, result);
        }
      }
      const pack = packRun(packRows);
      insertRun.run(runId, `pl-${i}`, runOrder, receivedAt, reg.region, reg.country, pack.packed_version, pack.h2_network,
        pack.h3_network, pack.packed_counts);
      insertRequests.run(rowValues);
    }
    db.prepare("INSERT INTO bench_meta VALUES ('params', ?)").run(params);
  });
  write();
  store.close();
  return { path, reused: false, runs, measuredRequests: runs * perArm * 2, rows: runs * perRun, seconds: (performance.now() - t0) / 1000 };
}

// A small, fast, seedable PRNG (Tommy Ettinger's mulberry32), enough for synthetic data.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
