// The report end to end, as `npm run report`, `npm start` and the benchmark run it: read the store (SQLite in one pass,
// or ClickHouse's aggregates), compute the statistics in the WASM core, format the text table, optionally write the
// HTML page and the JSON; with the time each step took.
import fs from 'node:fs';
import path from 'node:path';
import { openStore } from '../server/store.mjs';
import { metricColumns } from '../server/clickhouseSchema.mjs';
import { sqlString } from '../server/clickhouseRunSql.mjs';
import { openStoreSpec, parseStoreSpec } from '../server/storeSpec.mjs';
import { normalizeSince, readReportData, checkPayloadBytes } from './readReportData.mjs';
import { addDailySeries, addSecondEstimand, assemble, buildReport, HEADLINE_ESTIMAND, inferFromSource, reportShape,
  SECOND_ESTIMAND } from './buildReport.mjs';
import { clickhouseAggregateSource, clickhouseReportFacts, queryRecorder, runRecordsOnce } from './clickhouseAggregates.mjs';
import { formatReport } from './formatReport.mjs';
import { DOCTOR_ID } from './doctorBeacon.mjs';
import { SETUP_ARMS } from './connectionSetup.mjs';
import { clickhouseConnectionSetup } from './clickhouseConnectionSetup.mjs';
import { renderReportHtml } from './renderReportHtml.mjs';

/** The arms modes a report can be made of, one at a time: the experiment, then the two A/A tests. */
export const ARMS = Object.freeze(['h2-h3', 'h2-h2', 'h3-h3']);
/** The JSON report's format name; a change that removes or renames a field gets a new number. */
export const REPORT_FORMAT = 'h3probe-report/3';

/**
 * core: from loadH3probeNode(). db: an open store's better-sqlite3 Database (openStore().db), or dbPath to open read-only
 * (openStore()'s readOnly), or store: a --store spec (sqlite:PATH, or clickhouse://HOST:PORT/DATABASE: the aggregates are
 * computed inside ClickHouse).
 * Options: metric, since, arms (one of ARMS: the runs of that mode only), payloadBytes (the runs of that payload mode
 * only, 0 the no-op), by (one of GROUP_BY: the groups; ClickHouse: CLICKHOUSE_GROUP_BY), minGroupRuns (by network: the
 * fewest runs of a shown network, readReportData.mjs), method, confidence, htmlPath (falsy: no HTML), jsonPath (falsy:
 * no JSON; the whole report as data, format REPORT_FORMAT), pages (the HTML page and the JSON text in the result as html
 * and json, as the files would hold them, no file written: the collector's /report), daily (the daily series as
 * report.daily; default: when HTML or JSON is made), readSummary (ClickHouse: false reads every value from run_records, not the value summary;
 * for bench:clickhouse), now (ClickHouse: the clock in ms, whose UTC day is read from run_records, not the summary;
 * default the time).
 * Resolves to { report, text, htmlPath, jsonPath, timings: {read, stats, format, html} (milliseconds; ClickHouse's read
 * is in stats), passes (ClickHouse: each query, { name, queryId, ms }) }.
 */
export async function makeReport(core, {
  db, dbPath, store, metric = 'network_ms', since = '', arms = 'h2-h3', payloadBytes = 0, by = 'region', method = 'delta', confidence,
  htmlPath = null, jsonPath = null, pages = false, daily = Boolean(htmlPath || jsonPath || pages), minGroupRuns, readSummary = true, now,
} = {}) {
  if (!ARMS.includes(arms)) throw new Error(`--arms must be one of ${ARMS.join(', ')}, got "${arms}"`);
  const schema = core.schema();
  const spec = store ? parseStoreSpec(store) : null;
  const shape = { method, confidence, cdf: Boolean(htmlPath || pages) };
  if (spec?.kind === 'clickhouse') {
    const ch = await openStoreSpec(spec, core, { readOnly: true });
    const t0 = performance.now();
    // Both estimands read run_records the same way: FINAL only while it holds a run twice (runRecordsOnce()).
    const checks = [];
    const records = await runRecordsOnce(queryRecorder(ch.client, checks));
    const options = { metric, since: normalizeSince(since), arms, payloadBytes, by, minGroupRuns, daily, readSummary, now, shape, records };
    const { report, passes } = await clickhouseReport(core, ch.client, { ...options, estimand: HEADLINE_ESTIMAND });
    passes.unshift(...checks);
    const second = await clickhouseReport(core, ch.client, { ...options, estimand: SECOND_ESTIMAND });
    addSecondEstimand(core, report, second.report);
    passes.push(...second.passes.map((p) => ({ ...p, name: `${SECOND_ESTIMAND} ${p.name}` })));
    return { ...finish(report, { read: 0, stats: performance.now() - t0 }, { htmlPath, jsonPath, pages }), passes };
  }
  const own = db ? null : openStore(spec?.path ?? dbPath, core, { readOnly: true });
  try {
    const t0 = performance.now();
    // One pass: the report's groups, the daily series' days and the connection-setup view's records together.
    const data = readReportData(db ?? own.db, schema, { metric, since, arms, payloadBytes, by, minGroupRuns, daily, setup: arms === SETUP_ARMS });
    const t1 = performance.now();
    // Both estimands from the same records (request_class.hpp): the headline, and where HTTP/3 worked beside it.
    const report = addSecondEstimand(core, buildReport(core, data, shape), buildReport(core, data, { ...shape, estimand: SECOND_ESTIMAND }));
    return finish(report, { read: t1 - t0, stats: performance.now() - t1 }, { htmlPath, jsonPath, pages });
  } finally {
    own?.close();
  }
}

// The report from ClickHouse: the report's source (its metric's columns; the report's groups and the daily series'
// days from the same passes), the daily series' looks (a source of their own, on the same counts), the
// connection-setup view; the same report object as SQLite's. Resolves to { report, passes }.
async function clickhouseReport(core, client, { metric, since, arms, payloadBytes, by, minGroupRuns, daily, readSummary, now, shape, estimand, records }) {
  const schema = core.schema();
  const m = metricColumns(schema).find((c) => c.metric === metric);
  if (!m) throw new Error(`unknown metric "${metric}"; one of ${schema.metrics.join(', ')}`);
  checkPayloadBytes(payloadBytes, schema);
  const mode = `arms = ${sqlString(arms)} AND payload_bytes = ${Number(payloadBytes)}`;
  // A run's values are the headline estimand's (a run outside it holds none: stored_run.hpp); another estimand reads
  // the values of its runs only (the core's bit in run_records.estimands), every one from run_records: the value
  // summary holds every run's.
  const headline = estimand === HEADLINE_ESTIMAND;
  const bit = schema.estimands.find((e) => e.name === estimand)?.bit;
  const only = (x, none) => `if(bitAnd(estimands, ${bit}) != 0, ${x}, ${none}) AS e_${x}`;
  const from = headline ? records : `(SELECT *, ${only(m.control, 'emptyArrayFloat64()')}, ${only(m.treatment, 'emptyArrayFloat64()')},
    ${only(m.missing, 'toUInt8(0)')} FROM ${records})`;
  const column = (x) => (headline ? x : `e_${x}`);
  // The doctor's test beacon is in no count (doctorBeacon.mjs); it holds no value, so the value summary has none of it.
  const common = { columns: [{ C: column(m.control), T: column(m.treatment), missing: column(m.missing) }], from, estimandBit: bit,
    where: `${mode} AND received_at >= ${sqlString(since)} AND run_id != ${sqlString(DOCTOR_ID)}`,
    summary: headline ? `${mode} AND metric = ${sqlString(metric)}` : null, readSummary, now };
  const passes = [];
  const source = clickhouseAggregateSource(client, schema, { ...common, sets: daily ? [by, 'day'] : [by], minGroupRuns, passes });
  const reportOf = reportShape(schema, { ...shape, estimand });
  const seriesOf = reportShape(schema, { ...shape, estimand, cdf: false, percentiles: schema.reportDefaults.seriesPercentiles });
  if (shape.method !== 'delta') throw new Error('--method bootstrap needs every value: use the SQLite store, or --method delta');
  const { sets, groups } = await inferFromSource(core, source, [reportOf, ...(daily ? [seriesOf] : [])], 'the report');
  const facts = await clickhouseReportFacts(queryRecorder(client, passes), { since, arms, payloadBytes, records });
  const report = assemble(core, { ...sets[0], ...facts, metric, since, arms, payloadBytes }, groups[0], reportOf);
  const setupPasses = [];
  report.connectionSetup = arms === SETUP_ARMS && headline ? await clickhouseConnectionSetup(client, core, { since, by, payloadBytes,
    confidence: reportOf.confidence, shown: sets[0].shown, passes: setupPasses, records }) : null;
  passes.push(...setupPasses.map((p) => ({ ...p, name: `setup ${p.name}` })));
  if (daily) {
    // The cumulative looks: a run in its day and every later day, so a grouping of its own (one more set of passes).
    const lookPasses = [];
    const looks = clickhouseAggregateSource(client, schema, { ...common, sets: ['day'], cumulative: true, countsFrom: source, passes: lookPasses });
    const lookShape = reportShape(schema, { ...shape, estimand, method: 'delta', cdf: false });
    const { groups: [cumulative] } = await inferFromSource(core, looks, [{ ...lookShape, options: { ...lookShape.options, cumulative: true } }],
      'the daily series');
    const days = assemble(core, { ...sets[1], metric, since, arms }, groups[1], seriesOf);
    addDailySeries(report, schema.reportDefaults.seriesPercentiles, days.groups.slice(1), cumulative.slice(1));
    passes.push(...lookPasses.map((p) => ({ ...p, name: `cumulative ${p.name}` })));
  }
  return { report, passes };
}

// Text, HTML and JSON of a report, the same from either store.
function finish(report, timings, { htmlPath, jsonPath, pages }) {
  const t2 = performance.now();
  const text = formatReport(report);
  const t3 = performance.now();
  const html = htmlPath || pages ? renderReportHtml(report) : null;
  const json = jsonPath || pages ? `${JSON.stringify({ format: REPORT_FORMAT, generatedAt: new Date().toISOString(), ...report }, null, 1)}\n` : null;
  if (htmlPath) {
    fs.mkdirSync(path.dirname(path.resolve(htmlPath)), { recursive: true });
    fs.writeFileSync(htmlPath, html);
  }
  if (jsonPath) {
    fs.mkdirSync(path.dirname(path.resolve(jsonPath)), { recursive: true });
    fs.writeFileSync(jsonPath, json);
  }
  const t4 = performance.now();
  return { report, text, htmlPath: htmlPath ? path.resolve(htmlPath) : null, jsonPath: jsonPath ? path.resolve(jsonPath) : null,
    ...(pages ? { html, json } : {}), timings: { ...timings, format: t3 - t2, html: t4 - t3 } };
}
