// The connection-setup view from the ClickHouse store, mirroring the core's SetupView (wasm/core/connection_setup.cpp):
// each selected run's cold-setup record is in run_records (the core's cold_setup() applied when the beacon was stored,
// its columns setupColumns()), its cold values go through the report's own aggregate source and inference
// (clickhouseAggregates.mjs: per setup metric, one value per run and protocol), and this file adds the runs' outcome
// counts; the view is assembled as SQLite's (assembleSetup(), connectionSetup.mjs).
import { CLICKHOUSE_GROUP_BY, clickhouseAggregateSource, pooledGroupExpr, queryRecorder } from './clickhouseAggregates.mjs';
import { inferFromSource, reportShape } from './buildReport.mjs';
import { assembleSetup, SETUP_ARMS } from './connectionSetup.mjs';
import { setupColumns } from '../server/clickhouseSchema.mjs';
import { RUN_RECORDS, sqlString } from '../server/clickhouseRunSql.mjs';

/**
 * client: clickhouseClient(); core: loadH3probeNode(). Options: since (ISO or ''), by (one of CLICKHOUSE_GROUP_BY),
 * shown (the report source's shown values of a pooled grouping: the view pools the others, as the report does),
 * payloadBytes (the report's payload mode: the view reads the runs the report reads), confidence, passes (where the
 * queries are listed), records (run_records as the report reads it: runRecordsOnce()). Resolves to the view (assembleSetup()).
 */
export async function clickhouseConnectionSetup(client, core, {
  since = '', by = 'region', shown = {}, payloadBytes = 0, confidence, passes = [], records = RUN_RECORDS,
} = {}) {
  const schema = core.schema();
  const c = setupColumns(schema);
  const code = (name) => schema.setupOutcomes.findIndex((o) => o.name === name);
  // A run without a pre-warm request (both absent) is in no count.
  const where = `arms = ${sqlString(SETUP_ARMS)} AND payload_bytes = ${Number(payloadBytes)} AND received_at >= ${sqlString(since)}
    AND NOT (${c.outcome.h2} = ${code('absent')} AND ${c.outcome.h3} = ${code('absent')})`;
  // Per metric the core's samples: h2 = cold HTTP/2 values, h3 = cold HTTP/3 values (an unpaired metric: the HTTP/2
  // values again, as SetupView does).
  const value = (protocol, metric) => c.values.find((v) => v.protocol === protocol && v.metric === metric).name;
  const columns = schema.setupMetrics.map((m) => ({ C: value('h2', m.name), T: value(m.paired ? 'h3' : 'h2', m.name) }));
  const source = clickhouseAggregateSource(client, schema, { columns, single: true, from: records, where, classes: false, orders: false, sets: [by], shown, passes });
  const shape = reportShape(schema, { confidence, percentiles: schema.reportDefaults.seriesPercentiles });
  const { sets: [set], groups: byMetric } = await inferFromSource(core, source, columns.map(() => shape), 'the connection-setup view');

  // Per group the runs, those with both cold samples, and the runs by each protocol's outcome and by the first
  // HTTP/3-origin request's verdict, in the core's codes; overall's are the groups' summed.
  const groupExpr = shown[by] ? pooledGroupExpr(by, shown[by]) : CLICKHOUSE_GROUP_BY[by];
  const outcomes = ['h2', 'h3'].flatMap((p) => schema.setupOutcomes.map((o, k) => `countIf(${c.outcome[p]} = ${k}) AS ${p}_${o.name}`));
  const firsts = schema.setupFirstH3.map((name, k) => `countIf(${c.first} = ${k}) AS first_${name}`);
  const rows = await queryRecorder(client, passes)('setup-outcomes', `SELECT ${groupExpr} AS g, count() AS runs,
    countIf(${c.outcome.h2} = ${code('cold')} AND ${c.outcome.h3} = ${code('cold')}) AS paired, ${[...outcomes, ...firsts].join(', ')}
    FROM ${records} WHERE ${where} GROUP BY g`);
  const n = (x) => Number(x ?? 0);
  const counts = (r) => ({
    runs: n(r.runs), paired: n(r.paired),
    outcomes: Object.fromEntries(['h2', 'h3'].map((p) => [p, Object.fromEntries(schema.setupOutcomes.map((o) => [o.name, n(r[`${p}_${o.name}`])]))])),
    firstH3: Object.fromEntries(schema.setupFirstH3.map((name) => [name, n(r[`first_${name}`])])),
  });
  const overall = {};
  for (const r of rows) for (const [f, x] of Object.entries(r)) if (f !== 'g') overall[f] = (overall[f] ?? 0) + Number(x);
  const byName = new Map(rows.map((r) => [r.g, counts(r)]));
  const view = ['overall', ...set.groups].map((name, i) => ({ name, ...(i === 0 ? counts(overall) : byName.get(name)),
    metrics: Object.fromEntries(schema.setupMetrics.map((m, k) => [m.name, { analysis: byMetric[k][i].analysis, paired: byMetric[k][i].paired }])) }));
  return assembleSetup(schema, view);
}
