// Synthetic beacons at Dropbox scale, and a database of them written the way the collector writes one: each beacon's
// text goes through the C++ decoder and the store's group commit (store.queueBeacon), as on POST /beacon, minus HTTP.
// The model: a heavy-tailed lognormal network time with a run-level random effect, a regional mix and latency scale
// after the Dropbox post (Europe ~2x, Asia ~3x North America; 25% Europe, 15% Asia), lossy runs where HTTP/2's
// head-of-line blocking delays every request of the arm but HTTP/3 only the request that lost a packet (so HTTP/3 wins in
// the tail), UDP-blocked runs whose treatment falls back to h2, and a few failures of each kind. Deterministic for a seed.
import fs from 'node:fs';
import { openStore, storeLayout } from '../server/store.mjs';

// 3: written through the decoder and the store (whose version is part of the parameters too). 4: a browser per run.
// 5: cold QUIC connections in the pre-warm (the connection-setup view). 6: each run's cold-setup record stored.
const GENERATOR_VERSION = 6;

// The browser the collector would have named for a run (browserFor.mjs), by the run's number rather than a random draw so
// that every other value stays as earlier versions drew it: 7 in 10 Chromium, 2 Firefox, 1 WebKit.
const BROWSER_CYCLE = [...Array(7).fill(['chromium', 131]), ['firefox', 128], ['firefox', 128], ['webkit', 17]];

// share of runs, median network time on a warm connection (ms), share of lossy runs, share of UDP-blocked runs, a country
const REGION_MIX = Object.freeze([
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

/**
 * Yields { beacon, meta } for runs page loads: the beacon object a page would send and the collector's meta (receivedAt
 * spread over days from start, region, country). perArm: requests per arm; order: 'random' | 'h2-first'.
 * networks: [{asn, org, share, udpBlocked}] (shares in hundredths, adding up to 1): run i is on the network that holds
 * i % 100 in the cumulative shares, so each network gets exactly its share of every 100 runs; meta gets its asn and
 * asOrg, and on a udpBlocked network every HTTP/3 request falls back to h2. Without networks, meta has none.
 * arms: 'h2-h3' (the experiment) or an A/A mode ('h2-h2', 'h3-h3'): every request then asks for that one protocol and gets
 * it, on the same draws.
 */
export function* syntheticBeacons({
  runs = 420_000, perArm = 5, days = 14, seed = 1, order = 'random', start = '2022-12-15', networks = null, arms = 'h2-h3',
} = {}) {
  const aa = arms === 'h2-h3' ? null : arms.split('-')[0];
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
  const round = (v) => Math.round(v * 10) / 10;

  for (let i = 0; i < runs; i++) {
    const u = rand();
    let k = cumulative.findIndex((c) => u < c);
    if (k < 0) k = REGION_MIX.length - 1;
    const reg = REGION_MIX[k];
    const runOrder = order === 'random' ? (rand() < 0.5 ? 'h2-first' : 'h3-first') : order;
    const runEffect = 0.4 * normal();
    const lossy = rand() < reg.lossy;
    const network = networks && networkAt(networks, i % 100);
    const udpBlocked = rand() < reg.udpBlocked || Boolean(network?.udpBlocked);
    // One retransmission timeout-like stall on the HTTP/2 connection holds every stream behind it.
    const h2Stall = lossy && rand() < 0.6 ? reg.medianMs * (1 + 2 * -Math.log(1 - rand())) : 0;
    const samples = [];
    const sample = (phase, idx, origin, protocol, ms, result = 'ok', connectMs = 0) => {
      const timed = result === 'ok' || result === 'http_error';
      const network = timed ? round(ms) : null;
      samples.push({
        phase, idx, origin, result, http_status: result === 'http_error' ? 503 : timed ? 204 : 0, protocol,
        reused: timed ? connectMs === 0 : null, network_ms: network, queue_ms: timed ? 0.1 : null, dns_ms: timed ? 0 : null,
        connect_ms: timed ? round(connectMs) : null, tls_ms: timed ? round(connectMs * 0.6) : null,
        request_ms: timed ? round(Math.max(0, network - connectMs - 0.1) * 0.9) : null,
        response_ms: timed ? round(Math.max(0, network - connectMs - 0.1) * 0.1) : null,
        start_ms: 1000 + samples.length, fetch_ms: timed ? round(network + 0.8) : null,
      });
    };
    const base = reg.medianMs;
    // The pre-warm's new connections (the report's connection-setup view): TCP+TLS takes two round trips, QUIC one. A
    // returning user (every third run, UDP open) remembers Alt-Svc, so the first request is QUIC and the second rides
    // it; otherwise the first goes over TCP and the second opens QUIC. Drawn without the random stream, so every other
    // value stays what it was.
    const setup = Math.exp(runEffect);
    if (!udpBlocked && i % 3 === 0) {
      sample('prewarm', 0, 'h3', 'h3', base * 2 * setup, 'ok', base * setup);
      sample('prewarm', 1, 'h3', 'h3', base * setup);
    } else {
      sample('prewarm', 0, 'h3', 'h2', base * 3 * setup, 'ok', base * 2);
      sample('prewarm', 1, 'h3', udpBlocked ? 'h2' : 'h3', base * (udpBlocked ? 1 : 2) * setup, 'ok', udpBlocked ? 0 : base * setup);
    }
    sample('prewarm', 2, 'h2', 'h2', base * 3 * Math.exp(runEffect), 'ok', base * 2);
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
        sample(arm, j, h3 ? 'h3' : 'h2', protocol, ms, result);
      }
    }
    const runId = `bench-${String(i).padStart(8, '0')}`;
    yield {
      beacon: { schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${i}`, config_id: 'bench', module_version: '0.1.0',
        order: runOrder, arms, outcome: 'complete', error: '', run_ms: 400, sample_rate: 1,
        context: { page_origin: 'https://app.example.com', effective_type: '4g', rtt_ms: base, downlink_mbps: 10,
          save_data: false, visible_throughout: true, module_load_ms: 20, timer_resolution_ms: 0.1 },
        errors: [], samples: aa ? samples.map((s) => ({ ...s, origin: aa, protocol: s.protocol && aa })) : samples },
      meta: { receivedAt: new Date(startMs + Math.floor((i / runs) * spanMs)).toISOString(), region: reg.region, country: reg.country,
        browser: BROWSER_CYCLE[i % 10][0], browserMajor: BROWSER_CYCLE[i % 10][1],
        ...(network ? { asn: network.asn, asOrg: network.org } : {}) },
    };
  }
}

/**
 * A network mix for syntheticBeacons({networks}) as the tests use it: two large networks (one blocking UDP), one AS
 * without a name, clients without a network, and two small networks (5 runs of every 100 between them).
 */
export const EXAMPLE_NETWORKS = Object.freeze([
  { asn: 15169, org: 'Google LLC', share: 0.4 },
  { asn: 13335, org: 'Cloudflare, Inc.', share: 0.25, udpBlocked: true },
  { asn: 64500, org: null, share: 0.2 },
  { asn: null, org: null, share: 0.1 },
  { asn: 64501, org: 'Small Net A', share: 0.03 },
  { asn: 64502, org: 'Small Net B', share: 0.02 },
]);

// The network holding slot (0-99) of the cumulative shares.
function networkAt(networks, slot) {
  let acc = 0;
  for (const n of networks) if (slot < Math.round((acc += n.share) * 100)) return n;
  throw new Error(`the networks' shares add up to ${acc}, not 1`);
}

// Beacons handed to the store per event-loop turn: the collector's group commit sees a few at a time under load.
const BATCH = 200;

/**
 * Writes (or reuses, when a complete file with the same parameters exists) a database of syntheticBeacons(options) at
 * path, each beacon as JSON text through core.decodeBeacon() and store.queueBeacon(). core: loadH3probeNode().
 * Resolves to { path, reused, runs, measuredRequests, seconds }.
 */
export async function writeSyntheticDb(path, core, options = {}) {
  const { runs = 420_000, perArm = 5 } = options;
  const params = JSON.stringify({ v: GENERATOR_VERSION, store: storeLayout(core.schema()), ...options, runs, perArm });
  const result = { path, runs, measuredRequests: runs * perArm * 2 };
  if (fs.existsSync(path)) {
    let same = false;
    try {
      // A file of another store version or layout is refused: it is written again.
      const store = openStore(path, core, { readOnly: true });
      try { same = store.db.prepare("SELECT value FROM bench_meta WHERE key = 'params'").pluck().get() === params; } finally { store.close(); }
    } catch { same = false; }
    if (same) return { ...result, reused: true, seconds: 0 };
  }
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path + suffix, { force: true });

  const t0 = performance.now();
  const store = openStore(path, core);
  let pending = [];
  for (const { beacon, meta } of syntheticBeacons(options)) {
    const decoded = core.decodeBeacon(JSON.stringify(beacon));
    if (!decoded.ok) throw new Error(`synthetic beacon ${beacon.run_id} rejected: ${decoded.error}`);
    pending.push(store.queueBeacon(decoded, meta));
    if (pending.length === BATCH) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  // Written last: a file without it (an interrupted run) is never reused.
  store.db.exec('CREATE TABLE bench_meta (key TEXT PRIMARY KEY, value TEXT)');
  store.db.prepare("INSERT INTO bench_meta VALUES ('params', ?)").run(params);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  return { ...result, reused: false, seconds: (performance.now() - t0) / 1000 };
}

/** A small, fast, seedable PRNG (Tommy Ettinger's mulberry32), enough for synthetic data: () → [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
