// Compare like with like: fallbacks, timeouts and cut-short requests that go with each run's network, as they do in the
// field, never fake a difference. A generator of this file's own (runs on a good or a bad network; on a bad one HTTP/3
// may be marked broken, so every treatment request falls back, and requests may time out or be cut short), stored
// through the collector's store (the C++ decoder and the SQLite or ClickHouse store), read by the report users run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { formatReport } from '../../report/formatReport.mjs';
import { mulberry32 } from '../../synthetic/syntheticBeacons.mjs';
import { clickhouseLane } from '../chdb/lane.mjs';
import { assertSameReport } from './sameReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseLane('h3probe-likewithlike-');
after(scratch.cleanup);

/**
 * Beacons of `runs` runs, 5 requests per arm. A run's network is bad with probability 0.2 (its level about 4 times the
 * good one's, with a heavier spread); on a bad network HTTP/3 is broken for half the runs (every treatment request goes
 * over h2: about 10 % of treatment requests fall back), a request times out with probability 0.03, fails (a network
 * error) with probability 0.02, and the run's last request is cut short with probability 0.05. Both arms draw from the same process (an A/A test: the true Δ is 0
 * everywhere) but where HTTP/3 is used and `h3Factor` scales it. fallbacks: false keeps every request on its arm's
 * protocol, the same times. Times in tenths of a millisecond: ClickHouse 18.16 parses a longer decimal a bit off (31.798
 * as 31.798000000000002), and the stores are compared bit for bit. Returns { beacons, fallbacks: treatment requests
 * that fell back }.
 */
function networkBoundRuns({ seed, runs, h3Factor = 1, fallbacks = true }) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const beacons = [];
  let fellBack = 0;
  for (let i = 0; i < runs; i++) {
    const bad = rand() < 0.2;
    const level = bad ? 120 * Math.exp(0.6 * normal()) : 30 * Math.exp(0.3 * normal());
    const broken = bad && rand() < 0.5;
    const order = rand() < 0.5 ? 'h2-first' : 'h3-first';
    const samples = [];
    for (const [phase, origin] of [['control', 'h2'], ['treatment', 'h3']]) {
      for (let k = 0; k < 5; k++) {
        const overH3 = origin === 'h3' && !(broken && fallbacks);
        const ms = level * Math.exp((bad ? 0.4 : 0.1) * normal()) * (overH3 ? h3Factor : 1);
        const timedOut = bad && rand() < 0.03;
        const cut = bad && k === 4 && rand() < 0.05;
        const failed = bad && rand() < 0.02;
        const result = timedOut ? 'timeout' : cut ? 'aborted' : failed ? 'network_error' : 'ok';
        const protocol = overH3 ? 'h3' : 'h2';
        if (origin === 'h3' && !overH3 && result === 'ok') fellBack++;
        samples.push(result === 'ok'
          ? { phase, idx: k, origin, result, http_status: 204, protocol, reused: true, network_ms: Math.round(10 * ms) / 10 }
          : { phase, idx: k, origin, result, http_status: 0, protocol: '' });
      }
    }
    beacons.push({ schema: 'h3probe/1', run_id: `r${seed}-${i}`, page_load_id: `pl${seed}-${i}`, config_id: 'like', module_version: '0.1.0',
      order, arms: 'h2-h3', outcome: 'complete', error: '', samples });
  }
  return { beacons, fallbacks: fellBack };
}

const meta = { receivedAt: '2026-12-01T12:00:00.000Z', region: 'Europe', country: 'DE' };

function sqliteStore(file, beacons) {
  const st = openStore(file, core);
  st.db.transaction(() => {
    for (const b of beacons) {
      const decoded = core.decodeBeacon(JSON.stringify(b));
      assert.ok(decoded.ok, decoded.error);
      st.insertBeacon(decoded, meta);
    }
  })();
  return st;
}

const overallRows = (r) => r.groups[0].analysis.rows;
const plainText = (r) => formatReport(r);
const byP = (rows, p) => rows.find((x) => x.p === p);

describe('compare like with like', () => {
  const dir = fs.mkdtempSync(path.join(scratch.tmp, 'sqlite-'));

  test('A/A with 10 % fallback on bad networks: the headline is the same runs\' without fallbacks, and claims nothing', async () => {
    const withFallbacks = networkBoundRuns({ seed: 1, runs: 4000 });
    const without = networkBoundRuns({ seed: 1, runs: 4000, fallbacks: false });
    const share = withFallbacks.fallbacks / (4000 * 5);
    assert.ok(share > 0.08 && share < 0.12, `fallback share ${share}`);
    assert.equal(without.fallbacks, 0);
    const a = sqliteStore(path.join(dir, 'fallbacks.sqlite'), withFallbacks.beacons);
    const b = sqliteStore(path.join(dir, 'without.sqlite'), without.beacons);
    try {
      const r = (await makeReport(core, { db: a.db, daily: true })).report;
      const plain = (await makeReport(core, { db: b.db })).report;
      for (const [i, x] of overallRows(r).entries()) {
        const y = overallRows(plain)[i];
        // As assigned, a fallback's time stays in its arm: the same values, so the same Δ and the same decision as the
        // same runs without any fallback (within its SE; here exactly).
        assert.ok(x.unfinished || Math.abs(x.diff_ms - y.diff_ms) <= x.se_ms, `p${x.p * 100}: ${x.diff_ms} against ${y.diff_ms} (se ${x.se_ms})`);
        assert.equal(x.significant, y.significant, `p${x.p * 100}`);
        // An A/A Δ far from 0 in its own SEs would be a broken interval, not chance (P(|z| > 4) is 6e-5).
        assert.ok(x.unfinished || Math.abs(x.diff_ms) <= 4 * x.se_ms, `p${x.p * 100}: ${x.diff_ms} ms, se ${x.se_ms}`);
      }
      assert.match(r.verdict.text, /^verdict \(4,000 runs/);
      assert.doesNotMatch(r.verdict.text, /NOT COMPARABLE/);
      assert.deepEqual(r.verdict.fdr.survivors, plain.verdict.fdr.survivors);
      // Where HTTP/3 worked: both arms of the same runs, about 90 % of them less those with a timeout or a cut.
      assert.ok(r.h3Worked.runs > 0.8 * 4000 && r.h3Worked.runs < 0.9 * 4000, `${r.h3Worked.runs} runs where HTTP/3 worked`);
      assert.match(r.verdict.text, /\nwhere HTTP\/3 worked \([\d,]+ of 4,000 runs, [\d.]+%; both arms of those runs, 95% CI\): p50 /);
      for (const row of overallRows(r.h3Worked)) {
        assert.ok(row.unfinished || Math.abs(row.diff_ms) <= 4 * row.se_ms, `where it worked, p${row.p * 100}: ${row.diff_ms} ms, se ${row.se_ms}`);
      }
      // The fallbacks and the requests that did not finish are counted where they happened, not dropped; a paired
      // difference needs both medians among finished requests.
      const g = r.groups[0];
      assert.ok(Math.abs(g.paired.mean) < 5, `paired mean ${g.paired.mean}`);
      assert.ok(g.paired.n <= 4000 && g.paired.n > 3900, `${g.paired.n} paired differences`);
      assert.equal(g.arms.h3.n + g.arms.h2.n, 4000 * 10);
      assert.equal(g.excluded.fallback, withFallbacks.fallbacks);
      assert.ok(g.excluded.timeout > 0 && g.excluded.aborted > 0);
      // The failures in each arm's failure rate, compared by run: the same in both arms of an A/A test.
      assert.equal(g.failures.failed_h2 + g.failures.failed_h3, g.excluded.network_error);
      assert.ok(g.failures.failed_h2 > 0 && g.failures.failed_h3 > 0);
      assert.equal(g.failures.runs, 4000);
      const failureSe = (g.failures.ci[1] - g.failures.ci[0]) / (2 * 1.959964);
      assert.ok(Math.abs(g.failures.diff) <= 4 * failureSe, `failure Δ ${g.failures.diff}, interval ${g.failures.ci}`);
      assert.match(plainText(r), /^failed \(network or HTTP error\): HTTP\/2 [\d.]+% \([\d,]+ of 20,000\), HTTP\/3 [\d.]+% \([\d,]+ of 20,000\); Δ [-+][\d.]+ points \[[-+][\d.]+, \+[\d.]+\]$/m);
    } finally {
      a.close();
      b.close();
    }
  });

  // At most 5 % in expectation; 6 of 40 is where the count of a 5 % rate ends 99.7 % of the time (binomial). The rule
  // before this claimed a difference in nearly every replicate of this generator.
  test('A/A replicates claim a difference after Benjamini–Hochberg in about 5 % of reports, not more', async (t) => {
    let claimed = 0;
    const replicates = 40;
    for (let seed = 100; seed < 100 + replicates; seed++) {
      const st = sqliteStore(path.join(dir, `aa${seed}.sqlite`), networkBoundRuns({ seed, runs: 600 }).beacons);
      try {
        const r = (await makeReport(core, { db: st.db })).report;
        if (r.verdict.fdr.survivors.length > 0) claimed++;
      } finally {
        st.close();
      }
    }
    assert.ok(claimed <= 6, `${claimed} of ${replicates} A/A reports claimed a difference`);
    t.diagnostic(`${claimed} of ${replicates} A/A reports claimed a difference after Benjamini–Hochberg`);
  });

  test('where HTTP/3 worked, its estimate is the effect there; the headline counts the users who could not get it', async () => {
    // HTTP/3 20 % faster wherever it is used: -20 % at every percentile of the runs where it worked.
    const st = sqliteStore(path.join(dir, 'effect.sqlite'), networkBoundRuns({ seed: 7, runs: 4000, h3Factor: 0.8 }).beacons);
    try {
      const r = (await makeReport(core, { db: st.db })).report;
      for (const p of [0.5, 0.9, 0.95]) {
        const w = byP(overallRows(r.h3Worked), p);
        const half = (w.ci_pct[1] - w.ci_pct[0]) / 2;
        assert.ok(Math.abs(w.diff_pct + 20) <= 1.5 * half, `p${p * 100}: ${w.diff_pct} % where it worked, ±${half}`);
        assert.ok(w.significant);
        // The headline holds the fallback runs too (no gain there): its effect is smaller than where HTTP/3 worked.
        assert.ok(byP(overallRows(r), p).diff_pct > w.diff_pct - half, `p${p * 100}`);
      }
      assert.match(r.verdict.text, /HTTP\/3 faster at p50/);
    } finally {
      st.close();
    }
  });

  test('both stores give the same two estimands, cell for cell', { timeout: 300_000 }, async () => {
    const { beacons } = networkBoundRuns({ seed: 3, runs: 1500 });
    const server = await scratch.fresh('likewithlike');
    const sqlitePath = path.join(dir, 'both.sqlite');
    sqliteStore(sqlitePath, beacons).close();
    const chSpec = `clickhouse://127.0.0.1:${server.httpPort}/likewithlike`;
    const ch = await openClickHouseStore(chSpec, core, { log: path.join(dir, 'clickhouse-log.ndjson') });
    try {
      for (const b of beacons) await ch.insertBeacon(core.decodeBeacon(JSON.stringify(b)), meta);
      await ch.flushed();
    } finally {
      await ch.close();
    }
    const out = {};
    for (const [kind, store] of [['sqlite', `sqlite:${sqlitePath}`], ['clickhouse', chSpec]]) {
      const { text, html, json } = await makeReport(core, { store, pages: true });
      out[kind] = { text, html, json: JSON.parse(json) };
    }
    assertSameReport(out);
    const { json } = out.clickhouse;
    assert.equal(json.estimand, 'as_assigned');
    assert.equal(json.h3Worked.estimand, 'h3_worked');
    assert.ok(json.h3Worked.runs > 0 && json.h3Worked.runs < json.h3Worked.of);
  });
});
