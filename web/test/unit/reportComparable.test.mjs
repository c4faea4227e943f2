// Which runs the report reads, and what could bias its answer. When an instrument fault strikes one arm's origin and not
// the other's (a Timing-Allow-Origin missing on one origin), the runs it drops are chosen by that origin, and the
// verdict says so first, in the text, HTML and JSON reports, from SQLite and from ClickHouse alike; a clean, symmetric
// store, or one origin timing out (its requests stay in their arm), shows nothing of it. The rule is the core's
// (comparability.hpp, schema().limits.unequalExclusion*).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';
import { assertSameReport } from './sameReport.mjs';
import { doctorBeacon } from '../../cli/doctor.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-comparable-');
after(scratch.cleanup);
const { limits } = core.schema();

function sample(phase, idx, ms, extra = {}) {
  const protocol = phase === 'treatment' ? 'h3' : 'h2';
  return { phase, idx, origin: phase === 'treatment' ? 'h3' : 'h2', result: 'ok', http_status: 204, protocol, reused: true,
    network_ms: ms, queue_ms: 0.5, dns_ms: 0, connect_ms: 0, tls_ms: 0, request_ms: ms / 2, response_ms: 1, start_ms: 100,
    fetch_ms: ms + 1, ...extra };
}

// runs runs of 5 + 5 requests (values spread around 50 and 45 ms); bad(run, phase, k): the extra fields of that
// request (an exclusion), or null. Options: prefix of the run ids, region, outcome(run): how the run ended.
function store(runs, bad, { prefix = 'c', region = 'Europe', outcome = () => 'complete' } = {}) {
  return Array.from({ length: runs }, (_, i) => {
    const arm = (phase, base) => Array.from({ length: 5 }, (__, k) => sample(phase, k, base + ((7 * i + 3 * k) % 11), bad(i, phase, k) ?? {}));
    const ended = outcome(i);
    return { beacon: { schema: 'h3probe/1', run_id: `${prefix}${i}`, page_load_id: `pl-${prefix}${i}`, config_id: 'comparable', module_version: '0.1.0',
      order: i % 2 ? 'h3-first' : 'h2-first', arms: 'h2-h3', outcome: ended, error: ended === 'complete' ? '' : `run ${ended}`,
      samples: [sample('prewarm', 0, 300), ...arm('control', 50), ...arm('treatment', 45)] },
    meta: { receivedAt: '2024-05-01T12:00:00.000Z', region, country: region === 'Asia' ? 'JP' : 'DE' } };
  });
}

// n load_error beacons (the gate's: a sampled page load that could not load the run).
const loadErrors = (n) => Array.from({ length: n }, (_, i) => ({ beacon: { schema: 'h3probe/1', run_id: `le${i}`, page_load_id: `pl-le${i}`,
  config_id: 'comparable', outcome: 'load_error', reason: 'wasm_type', error: 'start: the .wasm answered 200 text/plain', samples: [] },
meta: { receivedAt: '2024-05-01T12:00:00.000Z', region: 'Europe', country: 'DE' } }));
const FALLBACK = { protocol: 'h2' };

const TAO = { result: 'timing_unavailable', network_ms: 0, protocol: '' };
const TIMEOUT = { result: 'timeout', network_ms: null, protocol: '' };
const CASES = {
  // The case: Timing-Allow-Origin missing on the HTTP/3 origin for 4 of 20 page loads: 20 of 100 requests.
  tao: store(20, (i, phase) => (phase === 'treatment' && i < 4 ? TAO : null)),
  // The HTTP/2 origin timing out for 2 of 20 page loads: 10 of 100.
  timeouts: store(20, (i, phase) => (phase === 'control' && i >= 18 ? TIMEOUT : null)),
  // The same exclusion in both arms, and one arm 5 requests worse at most: comparable.
  symmetric: store(20, (i, phase, k) => ((i < 3 && k === 0) || (phase === 'treatment' && i === 5 && k < 4) ? TAO : null)),
  // 3 runs past their deadline and 2 ended by an error, of 25: the runs still measured what they could.
  failed: store(25, () => null, { outcome: (i) => (i < 3 ? 'deadline' : i < 5 ? 'error' : 'complete') }),
  // HTTP/3 falling back to HTTP/2 for 2 of 5 requests in half of Asia's runs, never in Europe's.
  fallbackGap: [...store(20, () => null), ...store(20, (i, phase, k) => (phase === 'treatment' && i < 10 && k < 2 ? FALLBACK : null),
    { prefix: 'a', region: 'Asia' })],
  // 6 of 26 sampled page loads could not load the run.
  loadErrors: [...store(20, () => null), ...loadErrors(6)],
};

async function reports(name, items, options = {}) {
  const sqlitePath = path.join(scratch.tmp, `${name}.sqlite`);
  const sqlite = openStore(sqlitePath, core);
  const server = await scratch.fresh(name);
  const chSpec = `clickhouse://127.0.0.1:${server.httpPort}/${name}`;
  const ch = await openClickHouseStore(chSpec, core, { log: path.join(scratch.tmp, `${name}.ndjson`) });
  for (const { beacon, meta } of items) {
    const text = JSON.stringify(beacon);
    sqlite.insertBeacon(core.decodeBeacon(text), meta);
    await ch.queueBeacon(core.decodeBeacon(text), meta);
  }
  sqlite.close();
  await ch.flushed();
  await ch.close();
  const out = {};
  for (const [kind, source] of [['sqlite', { dbPath: sqlitePath }], ['clickhouse', { store: chSpec }]]) {
    const r = await makeReport(core, { ...source, ...options, htmlPath: path.join(scratch.tmp, `${name}-${kind}.html`), jsonPath: path.join(scratch.tmp, `${name}-${kind}.json`) });
    out[kind] = { text: r.text, html: fs.readFileSync(r.htmlPath, 'utf8'), json: JSON.parse(fs.readFileSync(r.jsonPath, 'utf8')) };
  }
  assertSameReport(out);
  return out.sqlite;
}

describe('the verdict when the arms are not comparable', () => {
  test('the rule\'s thresholds are the core\'s', () => {
    assert.equal(limits.unequalExclusionShare, 0.05);
    assert.equal(limits.unequalExclusionMinRequests, 5);
  });

  test('Timing-Allow-Origin missing on the HTTP/3 origin for a fifth of the loads: NOT COMPARABLE first, with the fix', { timeout: 120_000 }, async () => {
    const r = await reports('tao', CASES.tao);
    const first = r.text.split('\n').find((l) => l.startsWith('verdict ('));
    assert.match(first, /: NOT COMPARABLE until fixed: an instrument fault on one arm's origin drops runs by what that origin does/);
    assert.match(first, /timing_unavailable \(its run dropped\) on 20 of 100 HTTP\/3 requests \(20\.0%\) and 0 of 100 HTTP\/2 \(0\.0%\): the HTTP\/3 origin's \/noop lacks Timing-Allow-Origin/);
    assert.match(first, /h3probe doctor checks the \/noop headers/);
    assert.doesNotMatch(r.text, /^may we stop\?/m, 'no stopping line from arms that are not comparable');
    assert.equal(r.json.verdict.comparable, false);
    assert.deepEqual(r.json.verdict.unequal, [{ class: 'timing_unavailable', control: 0, treatment: 20, control_requests: 100, treatment_requests: 100 }]);
    assert.match(r.html, /NOT COMPARABLE until fixed/);
    // The verdict is the first thing of the HTML's body.
    assert.ok(r.html.indexOf('NOT COMPARABLE') < r.html.indexOf('<table'), 'before any table');
    // One decision, one voice: HTTP/3 is 5 ms faster in these loads, yet no table, dot or stopping line claims it.
    assert.ok(r.json.groups[0].analysis.rows.some((x) => x.diff_ms < -2), 'a difference the tables would otherwise mark');
    for (const g of r.json.groups) {
      for (const x of g.analysis.rows) {
        assert.deepEqual([x.significant, x.discovery, x.significant_cs, x.not_comparable], [false, false, false, true]);
      }
    }
    assert.ok(r.json.verdict.percentiles.every((x) => x.verdict === 'not comparable' && x.stop.decided === null));
    const table = r.text.split('\n').filter((l) => /^p\d+ /.test(l));
    assert.ok(table.length >= 5);
    for (const l of table) assert.doesNotMatch(l, /\*/, `no significance mark: ${l}`);
    assert.doesNotMatch(r.html, /class="(sig|q sig|cs sig)"|data-mark="significant"/);
    assert.match(r.html, /data-mark="notComparable"/);
  });

  test('the HTTP/2 origin timing out for a tenth of the loads: its timeouts stay in its arm, slower than any finished request', { timeout: 120_000 }, async () => {
    const r = await reports('timeouts', CASES.timeouts);
    assert.doesNotMatch(r.text, /NOT COMPARABLE/);
    assert.equal(r.json.verdict.comparable, true);
    const overall = r.json.groups[0];
    assert.deepEqual(overall.arms, { h2: { n: 100, runs: 20 }, h3: { n: 100, runs: 20 } });
    // The top tenth of HTTP/2's requests did not finish: from p90 up no estimate, no Δ, no decision.
    assert.deepEqual(overall.analysis.rows.map((x) => [x.p, x.unfinished]), [[0.5, false], [0.75, false], [0.9, true], [0.95, true], [0.99, true]]);
    assert.match(r.text, /not estimable at p90, p95, p99 \(it reaches requests that did not finish\)/);
    assert.match(r.text, /^p99 +≥ unfinished +[\d.]+ /m);
  });

  test('the same exclusion in both arms, or a gap under the threshold: the verdict reads the Δ as usual', { timeout: 120_000 }, async () => {
    const r = await reports('symmetric', CASES.symmetric);
    assert.doesNotMatch(r.text, /NOT COMPARABLE/);
    assert.equal(r.json.verdict.comparable, true);
    assert.deepEqual(r.json.verdict.unequal, []);
    assert.match(r.text, /^may we stop\?/m);
    // Clean: nothing could bias it. The one caution left says how far 20 runs reach (p90 and up need more), and comes
    // after the answer's lines, not under its first.
    assert.deepEqual(r.json.verdict.bias, []);
    assert.deepEqual(r.json.verdict.cautions, ['20 runs are too few for intervals at p90, p95, p99']);
    assert.match(secondLine(r.text), /^where HTTP\/3 worked \(16 of 16 runs/);
    assert.match(r.text.split('\n')[r.text.split('\n').findIndex((l) => l.startsWith('verdict (')) + 2], /^counting every comparison/);
    assert.doesNotMatch(r.html, /class="caution">Caution: (?!20 runs are too few)/);
  });
});

// The verdict's lines after its first: what could bias it, each with its numbers, before any other line.
const secondLine = (text) => text.split('\n')[text.split('\n').findIndex((l) => l.startsWith('verdict (')) + 1];

describe('what could bias the answer leads the verdict', () => {
  test('the thresholds are the core\'s', () => {
    assert.deepEqual([limits.failedRunShare, limits.failedRunMinRuns, limits.loadErrorShare, limits.loadErrorMinLoads,
      limits.mainThreadShare, limits.mainThreadMinRuns, limits.fallbackGapShare, limits.fallbackGapMinRequests],
    [0.02, 5, 0.02, 5, 0.01, 1, 0.05, 5]);
  });

  test('5 of 25 runs failed or timed out: a caution right under the verdict\'s first line, with the numbers', { timeout: 120_000 }, async () => {
    const r = await reports('failed', CASES.failed);
    assert.equal(secondLine(r.text), 'CAUTION: 5 of 25 runs (20.0%) failed or timed out (error 2, deadline 3): a run that ends ' +
      'early loses the slowest page loads first, so the rest lean to faster networks (the run\'s error names why; h3probe doctor --browser runs the page)');
    assert.equal(r.json.verdict.comparable, true);
    assert.deepEqual(r.json.verdict.bias, [{ kind: 'failed_runs', n: 5, of: 25 }]);
    assert.deepEqual(r.json.outcomes, { complete: 20, deadline: 3, stopped: 0, error: 2, load_error: 0 });
    // SQLite counts them from its partial index of the runs that did not complete, not from every run row.
    const db = openStore(path.join(scratch.tmp, 'failed.sqlite'), core, { readOnly: true });
    const plan = db.db.prepare("EXPLAIN QUERY PLAN SELECT outcome, count(*) FROM runs WHERE outcome IN ('deadline', 'stopped', 'error') " +
      "AND received_at >= '' AND arms = 'h2-h3' GROUP BY outcome").all();
    db.close();
    assert.match(plan.map((p) => p.detail).join('; '), /runs_unfinished/);
    assert.equal(r.json.verdict.cautions[0], secondLine(r.text).slice('CAUTION: '.length));
    const caution = r.html.indexOf('5 of 25 runs (20.0%) failed or timed out');
    assert.ok(caution > 0 && caution < r.html.indexOf('<table'), 'in the HTML before any table');
  });

  test('a region whose HTTP/3 falls back far more often than the others\': named, with both rates', { timeout: 120_000 }, async () => {
    const r = await reports('fallbacks', CASES.fallbackGap);
    assert.equal(secondLine(r.text), 'CAUTION: region Asia: HTTP/3 fell back for 20 of 100 completed requests (20.0%), against 0 of 100 ' +
      '(0.0%) in the other regions: there HTTP/3 is measured only where it gets through (UDP blocked elsewhere), so its Δ is not the ' +
      'same users\' as in the others');
    assert.deepEqual(r.json.verdict.bias, [{ kind: 'fallback_gap', n: 20, of: 100, group: 'Asia', rest_n: 0, rest_of: 100 }]);
    assert.match(r.html, /<p class="caution">Caution: region Asia: HTTP\/3 fell back for 20 of 100/);
  });

  test('6 of 26 sampled page loads could not load the run: a caution with the reasons', { timeout: 120_000 }, async () => {
    const r = await reports('loaderrors', CASES.loadErrors);
    assert.match(secondLine(r.text), /^CAUTION: 6 of 26 sampled page loads \(23\.1%\) could not load the run \(wasm_type 6\): those users are in neither arm/);
    assert.deepEqual(r.json.verdict.bias, [{ kind: 'load_errors', n: 6, of: 26 }]);
  });
});

describe('counts that add up', () => {
  test('every stored run is in one count with its reason; the header, the verdict and overall agree; the doctor\'s test beacon is left out and named', { timeout: 120_000 }, async () => {
    const at = (day) => ({ receivedAt: `2024-05-0${day}T12:00:00.000Z`, region: 'Europe', country: 'DE' });
    const other = (id, fields) => ({ beacon: { ...store(1, () => null)[0].beacon, run_id: id, page_load_id: `pl-${id}`, ...fields }, meta: at(2) });
    const items = [...store(12, () => null).map((x) => ({ ...x, meta: at(2) })),
      // A run that ended before its first request, and the doctor's test beacon.
      { beacon: { schema: 'h3probe/1', run_id: 'early', page_load_id: 'pl-early', config_id: 'comparable', module_version: '0.1.0',
        order: 'h2-first', arms: 'h2-h3', outcome: 'error', error: 'stopped', samples: [] }, meta: at(2) },
      { beacon: doctorBeacon('0.1.0'), meta: { ...at(2), region: 'local', country: null } },
      // Not this report's: another payload mode, an A/A run, a load error, and two runs received before --since.
      other('big', { payload_bytes: 1000 }), other('aa', { arms: 'h2-h2', samples: other('x', {}).beacon.samples.map((x) => ({ ...x, origin: 'h2', protocol: 'h2' })) }),
      ...loadErrors(1).map((x) => ({ ...x, meta: at(2) })), { ...other('old1', {}), meta: at(1) }, { ...other('old2', {}), meta: at(1) }];
    const r = await reports('counts', items, { since: '2024-05-02' });
    const [first, second] = r.text.split('\n');
    assert.match(first, /^h3probe report: network_ms, 13 stored runs \(12 with a measured request, 1 without; complete 12, error 1\), 1 doctor test beacon left out received since 2024-05-02/);
    assert.equal(second, 'not read: 1 of other payload modes, 1 of arms h2-h2, 1 load errors (no run), 2 received before --since; 18 stored in all');
    assert.deepEqual(r.json.runCounts, { stored: 18, read: 13, otherPayloads: 1, otherArms: [{ arms: 'h2-h2', runs: 1 }], loadErrors: 1, beforeSince: 2 });
    const c = r.json.runCounts;
    assert.equal(c.read + c.otherPayloads + c.otherArms.reduce((n, a) => n + a.runs, 0) + c.loadErrors + c.beforeSince, c.stored);
    // The verdict's runs are the header's with a measured request, and overall's, which says so.
    assert.match(r.text, /^verdict \(12 runs,/m);
    assert.match(r.text, /^== overall: 12 runs \(every stored run read with a measured request\),/m);
    assert.equal(r.json.storedRuns, 13);
    assert.equal(r.json.testBeacons, 1);
    assert.equal(r.json.groups[0].runs, 12);
    assert.deepEqual(r.json.outcomes, { complete: 12, deadline: 0, stopped: 0, error: 1, load_error: 0 });
    // The doctor's beacon came from loopback: left out, it neither adds a region nor the loopback caution.
    assert.deepEqual(r.json.regions, ['Europe']);
    assert.match(r.html, /13 stored runs \(12 with a measured request, 1 without; complete 12, error 1\), 1 doctor test beacon left out/);
    assert.match(r.html, /not read: 1 of other payload modes, 1 of arms h2-h2, 1 load errors \(no run\), 2 received before --since; 18 stored in all/);
  });
});
