// The report is total (a property test): stores of any shape the collector can write are generated from a seed and
// POSTed over HTTP to two real collectors, one on SQLite and one on a real ClickHouse, with the same headers and clock:
// 0 to a few hundred runs from clients whose X-Forwarded-For addresses and country headers make regions and networks
// vary (some unknown), browsers and versions, config ids, effective types, where the core ran, days, outcomes (complete,
// partial, error, load_error beacons, rejected and repeated beacons), payload and arms modes, one arm missing, every
// request excluded, both orders. Then `h3probe report` (its main(), which the command runs) goes over the option space
// on both stores: every option gives a report whose counts are the generator's, or a one-line reason naming the option
// at fault; never another error. Where both stores can make the report, the two are the same but for the time they were
// made. H3PROBE_REPORT_SEEDS ("1-40", "3,17") runs other seeds: `npm run test:report-seeds` (docs/testing.md).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, mock, test } from 'node:test';
import { main as reportMain } from '../../cli/report.mjs';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { CLICKHOUSE_GROUP_BY } from '../../server/clickhouseRunSql.mjs';
import { GROUP_BY } from '../../report/readReportData.mjs';
import { ARMS } from '../../report/makeReport.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';
import { mulberry32 } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { assertSameReport } from './sameReport.mjs';

/**
 * The seeds `npm test` runs: one store of each size class (seed % 5: up to 2 runs, 3-12, 13-40, 41-120, 121-400), the
 * last with a client per run and a run a day (more networks and days than a byte could number).
 */
const DEFAULT_SEEDS = [5, 6, 2, 88, 394];
/** Report option sets drawn per seed, beside the fixed ones (fixedOptions()). */
const DRAWS = 6;

const core = await loadH3probeNode();
const schema = core.schema();
const scratch = clickhouseLane('h3probe-anystore-');
after(scratch.cleanup);

/** "1-40" or "3,17,20-22" → [1, …, 40] / [3, 17, 20, 21, 22]. */
function parseSeeds(text) {
  return text.split(',').flatMap((part) => {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(`H3PROBE_REPORT_SEEDS: "${part}" is not a seed or a range of seeds`);
    const [lo, hi] = [Number(m[1]), Number(m[2] ?? m[1])];
    return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  });
}
const SEEDS = process.env.H3PROBE_REPORT_SEEDS ? parseSeeds(process.env.H3PROBE_REPORT_SEEDS) : DEFAULT_SEEDS;

// ---- the generator ------------------------------------------------------------------------------------------------

// What a browser sends: Chromium's client hints, Firefox's, Safari's and WebKitGTK's User-Agent, a bot's, none.
const BROWSER_HEADERS = [
  { 'sec-ch-ua': '"Chromium";v="131", "Not_A Brand";v="24", "Google Chrome";v="131"' },
  { 'sec-ch-ua': '"Chromium";v="120", "Microsoft Edge";v="120"' },
  { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
  { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; rv:115.0) Gecko/20100101 Firefox/115.0' },
  { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' },
  { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/2.50 Safari/605.1.15' },
  { 'user-agent': 'curl/8.5.0' },
  {},
];
// Country headers a CDN in front of the collector may set (XX and T1: no country; ZZ: none known).
const COUNTRY_HEADERS = ['DE', 'JP', 'BR', 'US', 'au', 'XX', 'T1', 'ZZ'];
// Config ids: plain, non-ASCII, with SQL's quote and backslash, empty, the longest (64 bytes).
const CONFIG_IDS = ['default', 'cfg-b', 'été-2024', "q'uote\\", '', 'x'.repeat(64)];
const EFFECTIVE_TYPES = ['4g', '3g', '2g', 'slow-2g', '', undefined];
// A request's results (wasm/core/sample.hpp); the decoder refuses any other.
const RESULTS = ['ok', 'http_error', 'network_error', 'timeout', 'aborted', 'no_timing_entry', 'timing_unavailable', 'redirected', 'cache_hit'];
const PAYLOAD_MODES = [0, 1024, 131072];

/**
 * A store's beacons for a seed: { posts: [{body (text), headers, at (ms since the epoch), status (the collector's answer
 * expected)}], runs: [{runId, arms, payloadBytes, receivedAt, outcome, reason, runContext}] (the runs the store must hold: each
 * accepted run_id once, as first received), start and end (ms: the first and last beacon's time), payloadModes,
 * armsModes, clients (how many), days (on which runs were received) }.
 */
function randomStore(seed) {
  const rand = mulberry32(seed * 7919 + 17);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const chance = (p) => rand() < p;
  const sizes = [[0, 2], [3, 12], [13, 40], [41, 120], [121, 400]][seed % 5];
  const count = int(...sizes);

  // Clients: each an address behind the local proxy (loopback: no X-Forwarded-For), maybe a country header, a browser;
  // some send most of the store's beacons.
  const octet = () => int(0, 255);
  const address = () => pick([
    () => null,  // the proxy itself: loopback, region local, no network
    () => `10.${octet()}.${octet()}.${octet()}`,  // private: region unknown, no network
    () => `${int(1, 223)}.${octet()}.${octet()}.${octet()}`,  // anywhere: the tables name its country and network, or not
    () => `${int(1, 223)}.${octet()}.${octet()}.${octet()}`,
    () => `2a0${int(0, 9)}:${int(0, 0xffff).toString(16)}::${int(1, 0xffff).toString(16)}`,
  ])();
  // Mostly a few clients, each with many runs; now and then one per run (as many networks as runs).
  const clients = Array.from({ length: chance(0.15) ? Math.max(1, count) : int(1, 8) }, () => {
    const xff = address();
    return { headers: { ...(xff ? { 'x-forwarded-for': xff } : {}), ...(chance(0.25) ? { 'cf-ipcountry': pick(COUNTRY_HEADERS) } : {}),
      ...pick(BROWSER_HEADERS) }, weight: rand() ** 2 + 0.01 };
  });
  const totalWeight = clients.reduce((s, c) => s + c.weight, 0);
  const client = () => {
    let u = rand() * totalWeight;
    return clients.find((c) => (u -= c.weight) < 0) ?? clients.at(-1);
  };
  const configs = Array.from({ length: int(1, 3) }, () => pick(CONFIG_IDS));
  const payloadModes = chance(0.5) ? [0] : [0, pick(PAYLOAD_MODES.slice(1))];
  // The experiment, with an A/A test beside it now and then; a few stores hold an A/A test only (a team's first).
  const armsModes = chance(0.1) ? [pick(ARMS.slice(1))] : ['h2-h3', ...ARMS.slice(1).filter(() => chance(0.3))];

  // Days: from a start in the past over 0 to 600 days (a store older than 250 days had more days than the report's
  // groups could number), or up to now (today's cells are read raw from ClickHouse).
  const dayMs = 86_400_000;
  const end = chance(0.3) ? Date.now() - int(0, 3_600_000) : Date.UTC(2025, int(0, 11), int(1, 28), int(0, 23));
  const span = pick([0, 0.2, 1, 3, 10, 10, 600]);
  // Over a long span, half the stores get a run a day (a small site over most of a year).
  const daily = span === 600 && chance(0.5);
  const start = daily ? Math.floor(end / dayMs - count) * dayMs : end - span * dayMs;
  const times = Array.from({ length: count }, (_, i) => (daily ? start + i * dayMs + int(0, dayMs - 1) : Math.floor(start + rand() * (end - start))))
    .sort((a, b) => a - b);

  const round = (v) => Math.round(v * 10) / 10;
  const ms = (median) => {
    const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    // Rounded to a tenth, so ties are common; now and then a value at an extreme.
    if (chance(0.01)) return pick([0, 0.1, 599_990]);
    return round(Math.min(599_990, median * Math.exp(0.6 * z)));
  };
  function sample(phase, idx, origin, { arm, median, excluded }) {
    let result = 'ok';
    if (excluded || chance(0.1)) result = pick(RESULTS.filter((r) => r !== 'ok'));
    const timed = ['ok', 'http_error', 'redirected', 'cache_hit'].includes(result);
    // The protocol used: the origin's mostly; a fallback to h2, none, or another now and then.
    let protocol = origin;
    if (result === 'network_error' || result === 'timeout' || result === 'timing_unavailable') protocol = '';
    else if (chance(0.06)) protocol = pick(['h2', '', 'http/1.1', 'h3']);
    const network = timed ? ms(median) : result === 'timing_unavailable' ? 0 : null;
    const part = (f) => (network === null ? null : round(network * f));
    return {
      phase, idx, origin, result, http_status: result === 'http_error' ? pick([404, 500, 503]) : timed ? (arm === 'payload' ? 200 : 204) : 0,
      protocol, ...(chance(0.05) ? { server_protocol: pick(['HTTP/1.1', 'HTTP/2.0', 'HTTP/3.0', 'HTTP/9']) } : {}),
      reused: phase !== 'prewarm' && chance(0.9), network_ms: network, queue_ms: part(0.05), dns_ms: part(0),
      connect_ms: phase === 'prewarm' ? part(0.4) : part(0), tls_ms: chance(0.05) ? null : part(phase === 'prewarm' ? 0.2 : 0),
      request_ms: part(0.8), response_ms: part(0.15), start_ms: int(0, 5000), fetch_ms: network === null ? null : round(network + 0.5),
      ...(chance(0.8) ? { body_bytes: 0 } : {}),
    };
  }

  const posts = [];
  const runs = [];
  const sent = [];  // accepted bodies, for repeats
  times.forEach((at, i) => {
    const from = client();
    const runId = `s${seed}-r${i}`;
    const kind = pick(['complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'partial', 'error', 'load_error', 'invalid', 'repeat']);
    if (kind === 'repeat' && sent.length) {
      // A beacon sent again (a client's retry, a proxy's replay), later and from another client: stored once, as first.
      posts.push({ body: pick(sent), headers: client().headers, at, status: 204 });
      return;
    }
    const context = { page_origin: 'https://app.example.com', ...(chance(0.9) ? { effective_type: pick(EFFECTIVE_TYPES) } : {}),
      rtt_ms: int(0, 3000), downlink_mbps: int(0, 100), save_data: chance(0.1), visible_throughout: kind !== 'partial' || chance(0.3),
      module_load_ms: int(1, 500), timer_resolution_ms: pick([0.005, 0.1, 1]), ...(chance(0.8) ? { run_context: pick(['worker', 'worker', 'main']) } : {}) };
    if (context.effective_type === undefined) delete context.effective_type;
    // A run on the main thread says why it left the Worker (an older module's does not).
    if (context.run_context === 'main' && chance(0.8)) context.worker_fallback = pick(schema.workerFallbackReasons).name;
    let beacon;
    if (kind === 'load_error') {
      beacon = { schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${runId}`, config_id: pick(configs), outcome: 'load_error',
        reason: pick(schema.loadErrorReasons).name, error: 'start: the .wasm answered 200 text/plain', run_ms: int(1, 900), sample_rate: 1,
        context: { page_origin: context.page_origin }, samples: [],
        // The gate knows no arms; a beacon that gives them anyway is stored in that arms mode, with no request.
        ...(chance(0.15) ? { arms: pick(ARMS) } : {}) };
    } else {
      const arms = pick(armsModes);
      const payloadBytes = pick(payloadModes);
      const median = pick([20, 60, 150, 400]);
      const excluded = chance(0.08);  // every request excluded
      const [h2Arm, h3Arm] = [arms.slice(0, 2), arms.slice(3)];
      const missing = chance(0.1) ? pick(['control', 'treatment']) : null;  // one arm with no request at all
      // Five requests an arm, as the module sends; fewer in a partial run; now and then a config's many more.
      const perArm = kind === 'partial' ? int(0, 3) : chance(0.03) ? int(6, 60) : int(1, 5);
      const samples = [];
      const prewarm = int(0, 3);
      for (let k = 0; k < prewarm; k++) samples.push(sample('prewarm', k, k === 2 ? 'h2' : 'h3', { median: median * 3 }));
      for (const [phase, origin] of [['control', h2Arm], ['treatment', h3Arm]]) {
        if (phase === missing) continue;
        for (let k = 0; k < perArm; k++) {
          samples.push(sample(phase, k, origin, { median: median * (phase === 'treatment' ? 0.95 : 1), excluded, arm: payloadBytes ? 'payload' : 'noop' }));
        }
      }
      beacon = { schema: 'h3probe/1', run_id: runId, page_load_id: `pl-${runId}`, config_id: pick(configs), module_version: '0.1.0',
        order: pick(['h2-first', 'h3-first']), arms,
        outcome: kind === 'partial' ? pick(['deadline', 'stopped']) : kind === 'error' ? 'error' : 'complete',
        error: kind === 'error' ? 'the run failed' : '', run_ms: int(10, 30_000), sample_rate: pick([1, 0.5, 0.01]),
        // Absent in a beacon of a module older than the payload mode: the no-op.
        ...(payloadBytes || chance(0.8) ? { payload_bytes: payloadBytes } : {}),
        // No context (an old module), and fields of a newer module, which the decoder drops.
        ...(chance(0.95) ? { context } : {}), errors: kind === 'error' ? ['glue: something failed'] : [], samples,
        ...(chance(0.1) ? { future_field: { nested: [1, 'two'] } } : {}) };
      if (kind === 'invalid') {
        // Refused by the decoder (400): stored nowhere.
        beacon = pick([{ ...beacon, schema: 'h3probe/0' }, { ...beacon, arms: 'h1-h2' }, { ...beacon, samples: {} }, { ...beacon, order: undefined }]);
      }
    }
    const body = JSON.stringify(beacon);
    if (kind === 'invalid') {
      posts.push({ body, headers: from.headers, at, status: 400 });
      return;
    }
    posts.push({ body, headers: from.headers, at, status: 204 });
    sent.push(body);
    runs.push({ runId, arms: beacon.arms ?? '', payloadBytes: beacon.payload_bytes ?? 0, receivedAt: new Date(at).toISOString(),
      outcome: beacon.outcome, reason: beacon.reason ?? null, runContext: beacon.context?.run_context ?? '' });
  });
  return { posts, runs, end: times.at(-1) ?? end, start, payloadModes, armsModes, clients: clients.length,
    days: new Set(runs.map((r) => r.receivedAt.slice(0, 10))).size };
}

// ---- the stores ---------------------------------------------------------------------------------------------------

// Two collectors, one per store, each with the test's clock; every beacon POSTed to both, with its headers, at its time.
async function fill(store, chStore, posts) {
  let clock = 0;
  const collectors = [await startCollector({ port: 0, store, core, rateLimit: 0, now: () => clock }),
    await startCollector({ port: 0, store: chStore, core, rateLimit: 0, now: () => clock })];
  try {
    for (const p of posts) {
      clock = p.at;
      const answers = await Promise.all(collectors.map((c) => fetch(`http://127.0.0.1:${c.port}/beacon`,
        { method: 'POST', headers: { 'content-type': 'text/plain', ...p.headers }, body: p.body })
        .then(async (res) => `${res.status} ${await res.text()}`)));
      for (const a of answers) assert.equal(Number(a.slice(0, 3)), p.status, `${a}\n${p.body.slice(0, 300)}`);
    }
  } finally {
    for (const c of collectors) await c.close();
  }
}

// ---- the report's options -----------------------------------------------------------------------------------------

// An option's values that the command must refuse, each with the reason's words.
const INVALID = {
  by: [['browser_major', /^--by must be one of/]],
  arms: [['h3-h2', /^--arms must be one of/]],
  metric: [['ttfb_ms', /^unknown metric "ttfb_ms"/]],
  method: [['jackknife', /^--method must be one of/]],
  since: [['yesterday', /^--since wants a date/], ['2025-13-45', /^--since wants a date/]],
  'payload-bytes': [['abc', /^--payload-bytes must be/], [String(schema.limits.maxPayloadBytes + 1), /^--payload-bytes must be/]],
  'min-network-runs': [['0', /^--min-network-runs wants/], ['many', /^--min-network-runs wants/]],
  confidence: [['1.5', /^--confidence must be/], ['x', /^--confidence must be/]],
};

/**
 * One set of report options, drawn: {by, arms, metric, method, since, payloadBytes, minNetworkRuns, confidence, daily,
 * html, json, invalid: [option, value, reason] | null}. store: the generator's store (its days and payload modes).
 */
function drawOptions(rand, store) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const chance = (p) => rand() < p;
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  const o = {
    by: pick(Object.keys(GROUP_BY)), arms: chance(0.6) ? 'h2-h3' : pick(ARMS), metric: chance(0.6) ? 'network_ms' : pick(schema.metrics),
    method: chance(0.8) ? 'delta' : 'bootstrap',
    // Everything, a day, the middle of the span, a run's own time (at or after it: that run is in), another time zone's
    // way of writing a time, a day past every run.
    since: pick(['', '', day(store.start), day(store.end), new Date(store.start + (store.end - store.start) / 2).toISOString(),
      store.runs.length ? pick(store.runs).receivedAt : '', `${day(store.end)}T01:30:00+02:00`, '2099-01-01']),
    payloadBytes: pick([...store.payloadModes, 0, 4096]), minNetworkRuns: pick([null, 1, 2, 1000]), confidence: pick([null, null, 0.9, 0.5]),
    daily: chance(0.3), html: chance(0.5), json: chance(0.7), invalid: null,
  };
  if (chance(0.2)) {
    const option = pick(Object.keys(INVALID));
    const [value, reason] = pick(INVALID[option]);
    o.invalid = [option, value, reason];
  }
  return o;
}

// The fixed option sets every seed runs: the defaults, the young store's network split, the network split with every
// network shown, every output with the daily series, the last payload and arms modes, a since past every run.
function fixedOptions(store) {
  const base = { by: 'region', arms: 'h2-h3', metric: 'network_ms', method: 'delta', since: '', payloadBytes: 0, minNetworkRuns: null,
    confidence: null, daily: false, html: false, json: true, invalid: null };
  return [
    base,
    { ...base, by: 'network', minNetworkRuns: 1000, daily: true, html: true },
    { ...base, by: 'network', minNetworkRuns: 1 },
    { ...base, by: 'day', html: true, metric: 'tls_ms' },
    { ...base, payloadBytes: store.payloadModes.at(-1), arms: store.armsModes.at(-1), by: 'browser_version' },
    { ...base, since: '2099-01-01', by: 'config', html: true },
  ];
}

function argvOf(o, dir, tag) {
  const argv = ['--by', o.by, '--arms', o.arms, '--metric', o.metric, '--method', o.method, '--payload-bytes', String(o.payloadBytes)];
  if (o.since) argv.push('--since', o.since);
  if (o.minNetworkRuns !== null) argv.push('--min-network-runs', String(o.minNetworkRuns));
  if (o.confidence !== null) argv.push('--confidence', String(o.confidence));
  if (o.daily) argv.push('--daily');
  argv.push(...(o.html ? ['--html', path.join(dir, `${tag}.html`)] : ['--no-html']));
  if (o.json) argv.push('--json', path.join(dir, `${tag}.json`));
  if (o.invalid) {
    const at = argv.indexOf(`--${o.invalid[0]}`);
    if (at >= 0) argv[at + 1] = o.invalid[1];
    else argv.push(`--${o.invalid[0]}`, o.invalid[1]);
  }
  return argv;
}

// The reasons a set of options may be refused with on a store (none: the report must come out).
function reasonsFor(o, storeKind) {
  const reasons = [];
  const invalid = o.invalid?.[0];
  // --min-network-runs is read only by the split by network.
  if (o.invalid && (invalid !== 'min-network-runs' || o.by === 'network')) reasons.push(o.invalid[2]);
  if (storeKind === 'clickhouse' && !Object.hasOwn(CLICKHOUSE_GROUP_BY, invalid === 'by' ? o.invalid[1] : o.by)) {
    reasons.push(/^--by \S+: the ClickHouse store splits by /);
  }
  if (storeKind === 'clickhouse' && invalid !== 'method' && o.method === 'bootstrap') reasons.push(/bootstrap needs every value/);
  return reasons;
}

/**
 * Runs the report command's main() with argv (its text captured, as the command prints it); resolves to
 * {text, html, json} (null when not written) or {error} (the message the command would print after "h3probe report:").
 */
async function runReport(argv, dir, tag) {
  const log = mock.method(console, 'log', () => {});
  try {
    await reportMain(argv);
    const read = (ext, parse) => (argv.includes(path.join(dir, `${tag}.${ext}`)) ? parse(fs.readFileSync(path.join(dir, `${tag}.${ext}`), 'utf8')) : null);
    return { text: log.mock.calls[0].arguments[0], html: read('html', (t) => t), json: read('json', JSON.parse) };
  } catch (err) {
    return { error: err, message: err.message };
  } finally {
    log.mock.restore();
  }
}

// What the generator's store holds for a set of options: the runs of the arms and payload mode received since (and of
// those, the runs on the main thread), and the load_error beacons received since (every arms mode).
function expected(store, o) {
  const since = o.since ? new Date(o.since).toISOString() : '';
  const inPeriod = store.runs.filter((r) => r.receivedAt >= since);
  const loadErrors = inPeriod.filter((r) => r.outcome === 'load_error').length;
  const mode = inPeriod.filter((r) => r.arms === o.arms && r.payloadBytes === o.payloadBytes);
  return { storedRuns: mode.length, loadErrors, mainThread: mode.filter((r) => r.runContext === 'main').length,
    stored: store.runs.length, beforeSince: store.runs.length - inPeriod.length,
    loadErrorsNoArms: inPeriod.filter((r) => r.outcome === 'load_error' && r.arms === '').length };
}

// The header's runs with a measured request (all of them when it names no split), as the text's first line says.
const headerMeasured = (first, storedRuns) => Number((/\(([\d,]+) with a measured request/.exec(first)?.[1] ?? String(storedRuns)).replaceAll(',', ''));

function checkReport(out, o, store, where) {
  const want = expected(store, o);
  assert.ok(typeof out.text === 'string' && out.text.startsWith(`h3probe report: ${o.metric}, ${want.storedRuns} stored run`),
    `${where}: the text's first line names the stored runs (${want.storedRuns}):\n${out.text?.split('\n')[0]}`);
  if (o.html) assert.match(out.html, /^<!doctype html>[^]*<\/html>\n?$/i, `${where}: a whole HTML page`);
  // The header and the verdict agree: the verdict's runs are the header's with a measured request.
  const verdictRuns = /^verdict \(([\d,]+) runs,/m.exec(out.text);
  assert.ok(verdictRuns, `${where}: a verdict line`);
  assert.equal(Number(verdictRuns[1].replaceAll(',', '')), headerMeasured(out.text.split('\n')[0], want.storedRuns),
    `${where}: the verdict's runs are the header's with a measured request:\n${out.text.split('\n')[0]}\n${verdictRuns[0]}`);
  if (!out.json) return;
  const { json } = out;
  // Every stored run in one count with its reason, the parts adding up to the store's runs.
  const c = json.runCounts;
  assert.deepEqual([c.stored, c.read, c.loadErrors, c.beforeSince], [want.stored, want.storedRuns, want.loadErrorsNoArms, want.beforeSince], `${where}: runCounts`);
  assert.equal(c.read + c.otherPayloads + c.otherArms.reduce((n, a) => n + a.runs, 0) + c.loadErrors + c.beforeSince, c.stored, `${where}: the counts add up`);
  assert.equal(json.verdict.runs, json.groups[0].runs, `${where}: the verdict's runs are overall's`);
  assert.equal(json.storedRuns, want.storedRuns, `${where}: storedRuns`);
  assert.equal(json.loadErrors.total, want.loadErrors, `${where}: load errors`);
  const [overall, ...groups] = json.groups;
  assert.equal(overall.name, 'overall', where);
  // Every split is a partition: each run in one group.
  assert.equal(groups.reduce((s, g) => s + g.runs, 0), overall.runs, `${where}: the groups' runs add up to overall's`);
  assert.ok(overall.runs <= json.storedRuns, `${where}: runs with a measured request are stored runs`);
  if (json.daily) assert.equal(json.daily.days.reduce((s, d) => s + d.runs, 0), overall.runs, `${where}: the days' runs add up`);
  if (o.by === 'network' && o.minNetworkRuns === 1000) {
    assert.deepEqual(groups.map((g) => g.name), overall.runs ? ['other'] : [], `${where}: every network pooled as other`);
  }
  if (o.by === 'network' && o.minNetworkRuns === 1) assert.ok(!groups.some((g) => g.name === 'other'), `${where}: no network pooled`);
  if (json.mainThread) {
    const { main, byReason } = json.mainThread;
    assert.equal(main, want.mainThread, `${where}: runs on the main thread`);
    assert.equal(byReason.reduce((s, r) => s + r.n, 0), main, `${where}: the main thread's reasons add up`);
  }
}

// ---- the test -----------------------------------------------------------------------------------------------------

describe('the report of any store the collector can write (property test)', { concurrency: false }, () => {
  let server;
  before(async () => {
    server = await scratch.fresh('anystore');
  });

  for (const seed of SEEDS) {
    test(`seed ${seed}: every option gives the report or a one-line reason, the same from SQLite and ClickHouse`, { timeout: 300_000 }, async (t) => {
      const store = randomStore(seed);
      const dir = fs.mkdtempSync(path.join(scratch.tmp, `seed${seed}-`));
      const sqlitePath = path.join(dir, 'beacons.sqlite');
      const chSpec = `clickhouse://127.0.0.1:${server.httpPort}/anystore_${seed}`;
      const sqlite = openStore(sqlitePath, core);
      const ch = await openClickHouseStore(chSpec, core, { log: path.join(dir, 'clickhouse-log.ndjson') });
      try {
        await fill(sqlite, ch, store.posts);
        await ch.flushed();
      } finally {
        sqlite.close();
        await ch.close();
      }

      const tally = { reports: 0, withRuns: 0, refused: 0, compared: 0 };
      const rand = mulberry32(seed);
      const sets = [...fixedOptions(store), ...Array.from({ length: DRAWS }, () => drawOptions(rand, store))];
      for (const [i, o] of sets.entries()) {
        const out = {};
        for (const [kind, source] of [['sqlite', ['--store', `sqlite:${sqlitePath}`]], ['clickhouse', ['--store', chSpec]]]) {
          const tag = `${i}-${kind}`;
          const argv = [...source, ...argvOf(o, dir, tag)];
          const where = `seed ${seed}, h3probe report ${argv.join(' ')}`;
          const r = await runReport(argv, dir, tag);
          const reasons = reasonsFor(o, kind);
          if (r.error) {
            assert.ok(reasons.length, `${where}: refused, though every option is valid: ${r.error.stack}`);
            assert.ok(!r.message.includes('\n'), `${where}: a one-line reason, not:\n${r.message}`);
            assert.ok(reasons.some((re) => re.test(r.message)), `${where}: refused for another reason than ${reasons.join(' or ')}: ${r.error.stack}`);
            // Nothing of an SQL error or a bug in the words either.
            assert.ok(!/syntax error|DB::Exception|Code: \d+|is not a function|of undefined|of null|NaN/.test(r.message), `${where}: ${r.message}`);
            tally.refused++;
          } else {
            tally.reports++;
            assert.deepEqual(reasons, [], `${where}: a report, where the command should refuse`);
            checkReport(r, o, store, where);
            if (expected(store, o).storedRuns) tally.withRuns++;
            out[kind] = r;
          }
        }
        if (out.sqlite && out.clickhouse) {
          assertSameReport(out, undefined, `seed ${seed}, option set ${i} (${JSON.stringify(o)}): `);
          tally.compared++;
        }
      }
      t.diagnostic(`seed ${seed}: ${store.runs.length} stored runs of ${store.posts.length} beacons from ${store.clients} clients ` +
        `on ${store.days} days; ${tally.reports} reports (${tally.withRuns} of stored runs), ` +
        `${tally.refused} refusals, ${tally.compared} option sets the same from both stores`);
      // The fixed sets by region, network (twice) and day are reports of both stores.
      assert.ok(tally.compared >= 4, JSON.stringify(tally));
      // The command itself, as a user runs it: a report, and a refusal on one line of stderr with exit code 2.
      const cli = (argv) => execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report', ...argv],
        { encoding: 'utf8', stdio: 'pipe' });
      assert.match(cli(['--store', chSpec, '--no-html', '--by', 'network', '--min-network-runs', '1000']), /^h3probe report: network_ms, /);
      try {
        cli(['--store', `sqlite:${sqlitePath}`, '--no-html', '--since', 'yesterday']);
        assert.fail('--since yesterday was taken');
      } catch (err) {
        assert.equal(err.status, 2);
        assert.equal(err.stderr, 'h3probe report: --since wants a date like 2024-05-01, got "yesterday"\n');
      }
    });
  }
});
