// The connection-setup view from the ClickHouse store: each selected run's cold HTTP/2 and HTTP/3 pre-warm sample is
// read from its cold-setup record in run_records (the core's cold_setup() applied when the beacon was stored,
// wasm/core/connection_setup.hpp), and the view's aggregates (counts, order statistics, sums at thresholds) are
// computed there; the inference is the core's (core.inferReport, the report's own), and the view is assembled as the
// SQLite one (connectionSetup.mjs). Runs stored before the record existed (setup_version 0) have their cold samples
// picked in SQL from the requests table: for them this file states the core's rule again (classify_measured() for
// "verified"), and web/test/unit/connectionSetup.test.mjs checks that both stores, with and without the records, give
// the same view on a database that meets every branch of it. One value per run and protocol: the sums the inference
// asks are counts of runs.
import { CLICKHOUSE_GROUP_BY, poolMoments, pooledGroupExpr } from './clickhouseAggregates.mjs';
import { assembleSetup, SETUP_ARMS, SETUP_PERCENTILES } from './connectionSetup.mjs';
import { inferInRounds } from './buildReport.mjs';
import { setupColumns } from '../server/clickhouseStore.mjs';
import { sqlString } from '../server/clickhouseRunSql.mjs';

const sqlArray = (xs) => `[${xs.map(sqlString).join(', ')}]`;
// A float64 into SQL exactly: its bytes in hex.
const float64 = (x) => { const b = Buffer.alloc(8); b.writeDoubleLE(x); return `reinterpretAsFloat64(unhex('${b.toString('hex')}'))`; };
const floats = (xs) => (xs.length ? `[${xs.map(float64).join(', ')}]` : 'emptyArrayFloat64()');
// Outcome codes, in the core's order (schema().setupOutcomes): cold, reused, unverified, absent.
const OUTCOME = { cold: 0, reused: 1, unverified: 2, absent: 3 };

/**
 * One row per selected run (arms h2-h3, received at or after since) with pre-warm requests: its group (grp), each
 * protocol's outcome code, the first HTTP/3-origin request's verdict (0 over h3, 1 over another protocol, 2 unknown),
 * and per protocol and metric an array of 0 or 1 value: the cold sample's.
 */
function pairsSql(schema, { selected, groupExpr, old }) {
  const servers = Object.keys(schema.serverProtocols);
  const seen = `transform(server_protocol, ${sqlArray(servers)}, ${sqlArray(servers.map((s) => schema.serverProtocols[s]))}, '')`;
  // classify_measured(): result ok, the protocol named and the origin's own, the origin's Server-Timing agreeing or silent.
  const verified = `(result = 'ok' AND protocol != '' AND protocol = origin AND (${seen} = '' OR ${seen} = protocol))`;
  const fallback = `(result = 'ok' AND protocol != '' AND protocol != origin)`;
  // Each pre-warm request as (idx, origin, verified, fallback, reused: 0 new, 1 reused, 2 unknown, connect, tls, network).
  const row = `(idx, origin, toUInt8(${verified}), toUInt8(${fallback}), toUInt8(ifNull(reused, 2)), ifNull(connect_ms, nan), ifNull(tls_ms, nan), ifNull(network_ms, nan))`;
  const t = (x, k) => `tupleElement(${x}, ${k})`;
  const perOrigin = (o) => {
    const rows = `arrayFilter(x -> ${t('x', 2)} = '${o}', rows)`;
    const cold = `arrayFilter(x -> ${t('x', 3)} = 1 AND ${t('x', 5)} = 0, ${rows})`;
    const value = (k) => `arrayFilter(v -> NOT isNaN(v), arrayMap(x -> ${t('x', k)}, arraySlice(${cold}, 1, 1)))`;
    return [`multiIf(length(${cold}) > 0, ${OUTCOME.cold}, arrayExists(x -> ${t('x', 3)} = 1 AND ${t('x', 5)} = 1, ${rows}), ${OUTCOME.reused}, `
      + `length(${rows}) > 0, ${OUTCOME.unverified}, ${OUTCOME.absent}) AS ${o}_outcome`,
    // In the core's metric order, as the records' columns: UNION ALL pairs the columns by position.
    ...schema.setupMetrics.map((m) => `${value({ connect_ms: 6, tls_ms: 7, network_ms: 8 }[m.name])} AS ${o}_${m.name}`)];
  };
  const firstH3 = `arrayFilter(x -> ${t('x', 2)} = 'h3', rows)`;
  const c = setupColumns(schema);
  const fromRecord = (p) => [`${c.outcome[p]} AS ${p}_outcome`,
    ...schema.setupMetrics.map((m) => `${c.values.find((v) => v.protocol === p && v.metric === m.name).name} AS ${p}_${m.name}`)];
  // The runs' cold-setup records (the core's rule, applied at ingest); a run without a pre-warm request (both absent) is
  // in no count. Then, when there are any (`old`), the runs stored before the record, from their pre-warm requests.
  const records = `SELECT ${groupExpr} AS grp, ${fromRecord('h2').join(', ')}, ${fromRecord('h3').join(', ')}, ${c.first} AS first_h3
  FROM run_records WHERE ${selected} AND ${c.version} != 0 AND NOT (${c.outcome.h2} = ${OUTCOME.absent} AND ${c.outcome.h3} = ${OUTCOME.absent})`;
  if (!old) return records;
  return `${records}
  UNION ALL
  SELECT grp, ${perOrigin('h2').join(', ')}, ${perOrigin('h3').join(', ')},
    multiIf(length(${firstH3}) = 0, 2, ${t(`${firstH3}[1]`, 3)} = 1, 0, ${t(`${firstH3}[1]`, 4)} = 1, 1, 2) AS first_h3
  FROM (SELECT run_id, ${groupExpr} AS grp FROM run_records WHERE ${selected} AND ${c.version} = 0)
  ANY INNER JOIN (SELECT run_id, arraySort(x -> ${t('x', 1)}, groupArray(${row})) AS rows FROM requests
    WHERE phase = 'prewarm' GROUP BY run_id) USING run_id`;
}

// Whether any selected run was stored before its cold-setup record.
async function hasOldRuns(client, schema, selected) {
  const [{ n }] = await client.json(`SELECT count() AS n FROM run_records WHERE ${selected} AND ${setupColumns(schema).version} = 0`);
  return Number(n) > 0;
}

/**
 * client: clickhouseClient(); core: loadH3probeNode(). Options: since (ISO or ''), by (one of CLICKHOUSE_GROUP_BY),
 * shown (a pooled grouping's shown values, as the report's groups: the others are OTHER_GROUP), payloadBytes (the
 * report's payload mode: the view reads the runs the report reads), confidence. Resolves to the view (assembleSetup()).
 */
export async function clickhouseConnectionSetup(client, core, {
  since = '', by = 'region', shown = null, payloadBytes = 0, confidence = 0.95,
} = {}) {
  const schema = core.schema();
  if (!Object.hasOwn(CLICKHOUSE_GROUP_BY, by)) throw new Error(`--by ${by}: the ClickHouse store splits by ${Object.keys(CLICKHOUSE_GROUP_BY).join(' or ')}`);
  // A pooled split (network) pools the values the report did not show, as the report does.
  const groupExpr = shown ? pooledGroupExpr(by, shown) : CLICKHOUSE_GROUP_BY[by];
  const selected = `arms = ${sqlString(SETUP_ARMS)} AND payload_bytes = ${Number(payloadBytes)} AND received_at >= ${sqlString(since)}`;
  // Every run twice: in its group, and in overall (group '').
  const old = await hasOldRuns(client, schema, selected);
  const runs = `(${pairsSql(schema, { selected, groupExpr, old })})`;
  // Every setup metric at once: each query below reads the runs once for all of them. Per metric the core's samples:
  // h2 = cold HTTP/2 values, h3 = cold HTTP/3 values (tls_ms: the HTTP/2 values again), and the paired differences
  // h3 - h2 of the runs with both.
  const metrics = schema.setupMetrics.map((m) => {
    const C = `h2_${m.name}`;
    const T = m.paired ? `h3_${m.name}` : C;
    return { name: m.name, C, T, S: [C, T, `if(length(${C}) = 1 AND length(${T}) = 1, [${T}[1] - ${C}[1]], emptyArrayFloat64())`],
      both: `(length(${C}) = 1 AND length(${T}) = 1)` };
  });
  // Per group the runs by outcome and, per metric, each sample's size and the paired differences' mean and variance
  // (varSampStable: see clickhouseAggregates.mjs); overall's (g '') are the groups' summed, the moments pooled.
  const outcomeCounts = (o) => Object.entries(OUTCOME).map(([name, code]) => `countIf(${o}_outcome = ${code}) AS ${o}_${name}`).join(', ');
  const perGroup = await client.json(`SELECT grp AS g, count() AS runs, countIf(h2_outcome = ${OUTCOME.cold} AND h3_outcome = ${OUTCOME.cold}) AS paired,
    ${outcomeCounts('h2')}, ${outcomeCounts('h3')},
    countIf(first_h3 = 0) AS over_h3, countIf(first_h3 = 1) AS over_other, countIf(first_h3 = 2) AS first_unknown,
    ${metrics.map(({ S, C, T, both }, mi) => `${S.map((x, k) => `sum(length(${x})) AS n${mi}_${k}`).join(', ')},
    avgIf(${T}[1] - ${C}[1], ${both}) AS mean${mi}, varSampStableIf(${T}[1] - ${C}[1], ${both}) AS var${mi}`).join(',\n    ')}
    FROM ${runs} GROUP BY g ORDER BY g`);
  const overall = { g: '' };
  for (const r of perGroup) {
    for (const [f, x] of Object.entries(r)) if (f !== 'g' && !/^(mean|var)\d+$/.test(f)) overall[f] = (overall[f] ?? 0) + Number(x);
  }
  metrics.forEach((_, mi) => {
    [, overall[`mean${mi}`], overall[`var${mi}`]] = poolMoments(perGroup.map((r) => [Number(r[`n${mi}_2`]),
      r[`mean${mi}`] === null ? null : Number(r[`mean${mi}`]), r[`var${mi}`] === null ? null : Number(r[`var${mi}`])]));
  });
  const counts = perGroup.length ? [overall, ...perGroup] : [];
  const names = counts.map((r) => r.g).filter((g) => g !== '');
  const index = (g) => (g === '' ? 0 : names.indexOf(g) + 1);
  const groups = [{ name: 'overall' }, ...names.map((name) => ({ name }))].map((gr) => ({ ...gr, runs: 0, paired: 0,
    outcomes: { h2: {}, h3: {} }, firstH3: { over_h3: 0, over_other: 0, unknown: 0 }, metrics: {} }));
  for (const r of counts) {
    const gr = groups[index(r.g)];
    Object.assign(gr, { runs: Number(r.runs), paired: Number(r.paired),
      firstH3: { over_h3: Number(r.over_h3), over_other: Number(r.over_other), unknown: Number(r.first_unknown) } });
    for (const o of ['h2', 'h3']) for (const name of Object.keys(OUTCOME)) gr.outcomes[o][name] = Number(r[`${o}_${name}`]);
  }
  for (const gr of groups) for (const o of ['h2', 'h3']) for (const name of Object.keys(OUTCOME)) gr.outcomes[o][name] ??= 0;

  const options = { method: 'delta', confidence, percentiles: Float64Array.from(SETUP_PERCENTILES) };
  for (const m of metrics) {
    m.aggregates = { groups: groups.map((gr) => ({ name: gr.name, runs: 0, requests: 0, missing_metric: 0,
      classes: [schema.requestClasses.map(() => 0), schema.requestClasses.map(() => 0)], runs_paired: 0,
      samples: [0, 1, 2].map(() => ({ n: 0, runs: 0, stats: [], below: [] })), diffs: [0, null, null],
      diffs_h2_first: [0, null, null], diffs_h3_first: [0, null, null], cross: [] })) };
  }
  for (const r of counts) {
    metrics.forEach((m, mi) => {
      const a = m.aggregates.groups[index(r.g)];
      a.samples.forEach((x, k) => { x.n = Number(r[`n${mi}_${k}`]); x.runs = x.n; });
      a.runs_paired = a.samples[2].n;
      a.diffs = [a.samples[2].n, a.samples[2].n ? Number(r[`mean${mi}`]) : null, a.samples[2].n >= 2 ? Number(r[`var${mi}`]) : null];
    });
  }
  const values = new Map();  // distinctValues(), read in the first round that needs it
  const inferred = await inferInRounds(core, 'the connection-setup view', metrics.map((m) => ({ aggregates: m.aggregates, options })),
    (needsList) => fill(client, { runs, values }, names, metrics, needsList));
  inferred.forEach((list, mi) => list.forEach((g, i) => { groups[i].metrics[metrics[mi].name] = { analysis: g.analysis, paired: g.paired }; }));
  return assembleSetup(schema, groups);
}

// The number of leading i in [0, n) for which holds(i), holds being true then false along i (a binary search).
function countWhile(n, holds) {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Every metric's, group's and sample's distinct values with their counts, into `into` (key `${metric index}/${group
// index}/${sample}` → { v: the values ascending, below: the values before each, and after the last }): one GROUP BY
// over the runs (not a sort of every value); overall's are the groups' summed.
async function distinctValues(client, runs, names, metrics, into) {
  // An unpaired metric's h3 sample is its h2 sample again, and its differences are zeros, one per value.
  const unrolled = metrics.flatMap((m, mi) => (m.T === m.C ? [0] : [0, 1, 2]).map((s) => `arrayMap(x -> (toUInt8(${mi}), toUInt8(${s}), x), ${m.S[s]})`));
  const rows = await client.json(`SELECT grp, t.1 AS mi, t.2 AS s, t.3 AS v, count() AS c
    FROM (SELECT grp, arrayJoin(arrayConcat(${unrolled.join(', ')})) AS t FROM ${runs}) GROUP BY grp, mi, s, v`);
  const lists = new Map();
  const add = (key, v, c) => {
    if (!lists.has(key)) lists.set(key, new Map());
    const list = lists.get(key);
    list.set(v, (list.get(v) ?? 0) + c);
  };
  for (const r of rows) {
    const v = Number(r.v);
    const c = Number(r.c);
    add(`${r.mi}/${r.grp === '' ? 0 : names.indexOf(r.grp) + 1}/${r.s}`, v, c);
    add(`${r.mi}/0/${r.s}`, v, c);
  }
  for (const [key, list] of lists) {
    const v = Float64Array.from([...list.keys()].sort((a, b) => a - b));
    const below = new Float64Array(v.length + 1);
    v.forEach((x, i) => { below[i + 1] = below[i] + list.get(x); });
    into.set(key, { v, below });
    const [mi, gi] = key.split('/');
    if (key.endsWith('/0') && metrics[mi].T === metrics[mi].C) {
      into.set(`${mi}/${gi}/1`, { v, below });
      into.set(`${mi}/${gi}/2`, { v: Float64Array.of(0), below: Float64Array.of(0, below[v.length]) });
    }
  }
}

// Adds the order statistics, the sums at thresholds and the cross sums that each metric's needs ask, per group, for
// every metric at once: the ranks and the sums at a threshold from the distinct values (read once), the cross sums
// in one query. runs: one row per run (its group grp).
async function fill(client, { runs, values }, names, metrics, needsList) {
  const perGroup = (list, pick) => {
    const by = new Map();
    for (const item of list) {
      const g = item[0];
      if (!by.has(g)) by.set(g, []);
      by.get(g).push(pick(item));
    }
    return by;
  };
  const index = (g) => (g === '' ? 0 : names.indexOf(g) + 1);
  const asked = metrics.map((m, mi) => ({ ...m, mi, needs: needsList[mi] })).filter((m) => m.needs);
  if (values.size === 0 && asked.some((m) => m.needs.ranks.length || m.needs.below.length)) await distinctValues(client, runs, names, metrics, values);
  const empty = { v: new Float64Array(0), below: new Float64Array(1) };
  for (const { mi, name, needs, aggregates } of asked) {
    for (const [gi, s, rank] of needs.ranks) {
      // The value of rank r (0-based): the first whose values before it and its own pass r.
      const { v, below } = values.get(`${mi}/${gi}/${s}`) ?? empty;
      const lo = countWhile(v.length, (i) => below[i + 1] <= rank);
      if (lo === v.length) throw new Error(`the connection-setup view: rank ${rank} is outside sample ${s} of group ${gi} (${name})`);
      aggregates.groups[gi].samples[s].stats.push([rank, v[lo]]);
    }
    for (const [gi, s, q] of needs.below) {
      // One value per run: S_i is 0 or 1 and N_i is 1, so sum S_i = sum S_i^2 = sum S_i N_i, and sum N_i^2 = n.
      const { v, below } = values.get(`${mi}/${gi}/${s}`) ?? empty;
      const lo = countWhile(v.length, (i) => v[i] <= q);
      aggregates.groups[gi].samples[s].below.push([q, below[lo], below[lo], below[lo], below[v.length]]);
    }
  }
  const crossed = asked.filter((m) => m.needs.cross.length).map((m) => ({ m, q2: perGroup(m.needs.cross, (c) => c[1]), q3: perGroup(m.needs.cross, (c) => c[2]) }));
  if (crossed.length) {
    // Each run once, with its group's thresholds (picked from a list by the group's index: multiIf over the groups
    // built every group's list for every row) and overall's (the same for every run); overall's sums are the groups'.
    const own = (by) => `[${names.map((_, i) => floats(by.get(i + 1) ?? [])).join(', ')}][indexOf(${sqlArray(names)}, grp)]`;
    const columns = crossed.flatMap(({ m: { mi, S, both }, q2, q3 }) => [['g', own(q2), own(q3)], ['o', floats(q2.get(0) ?? []), floats(q3.get(0) ?? [])]]
      .map(([tag, qa, qb]) => {
        const cross = (cond) => `sumForEach(arrayMap((a, b) -> toUInt64(${both} AND ${cond}), ${qa}, ${qb}))`;
        return `${cross(`${S[0]}[1] <= a AND ${S[1]}[1] <= b`)} AS ss${mi}${tag}, ${cross(`${S[0]}[1] <= a`)} AS sn${mi}${tag},
      ${cross(`${S[1]}[1] <= b`)} AS ns${mi}${tag}`;
      }).concat(`countIf(${both}) AS nn${mi}`));
    const rows = await client.json(`SELECT grp, ${columns.join(',\n      ')} FROM ${runs} GROUP BY grp`);
    for (const { m: { mi, aggregates }, q2, q3 } of crossed) {
      const overall = (q2.get(0) ?? []).map(() => [0, 0, 0]);
      let nn = 0;
      for (const r of rows) {
        const gi = index(r.grp);
        (q2.get(gi) ?? []).forEach((qa, k) => aggregates.groups[gi].cross.push([qa, q3.get(gi)[k], Number(r[`ss${mi}g`][k]),
          Number(r[`sn${mi}g`][k]), Number(r[`ns${mi}g`][k]), Number(r[`nn${mi}`])]));
        overall.forEach((o, k) => ['ss', 'sn', 'ns'].forEach((f, i) => { o[i] += Number(r[`${f}${mi}o`][k]); }));
        nn += Number(r[`nn${mi}`]);
      }
      (q2.get(0) ?? []).forEach((qa, k) => aggregates.groups[0].cross.push([qa, q3.get(0)[k], ...overall[k], nn]));
    }
  }
}
