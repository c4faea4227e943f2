// The report end to end, as `npm run report`, `npm start` and the benchmark run it: read SQLite, compute the statistics in
// the WASM core, format the text table, optionally write the HTML page; with the time each step took.
import fs from 'node:fs';
import path from 'node:path';
import { peer } from '../server/peer.mjs';
import { normalizeSince, readReportData } from './readReportData.mjs';
import { buildReport, buildReportsFromAggregates, PERCENTILES } from './buildReport.mjs';
import { clickhouseAggregateSource, queryRecorder } from './clickhouseAggregates.mjs';
import { openStoreSpec, parseStoreSpec } from '../server/storeSpec.mjs';
import { formatReport } from './formatReport.mjs';
import { connectionSetupFromData, readSetupData, SETUP_ARMS } from './connectionSetup.mjs';
import { clickhouseConnectionSetup } from './clickhouseConnectionSetup.mjs';
import { renderReportHtml } from './renderReportHtml.mjs';
import { verdict } from './verdict.mjs';

/** The arms modes a report can be made of, one at a time: the experiment, then the two A/A tests. */
export const ARMS = Object.freeze(['h2-h3', 'h2-h2', 'h3-h3']);
/** The JSON report's format name; a change that removes or renames a field gets a new number. */
export const REPORT_FORMAT = 'h3probe-report/3';
/** The percentiles of the daily series: the body and the tail Dropbox reported. Its cumulative looks hold every
 * percentile of the report (PERCENTILES), whose stopping line the verdict reads; the tables and charts show these. */
export const DAILY_PERCENTILES = Object.freeze([0.5, 0.9, 0.95]);

/**
 * core: from loadH3probeNode(). db: an open better-sqlite3 Database, or dbPath to open read-only, or store: a --store spec
 * (sqlite:PATH, or clickhouse://HOST:PORT/DATABASE: the aggregates are computed inside ClickHouse).
 * Options: metric, since, arms (one of ARMS: the runs of that mode only), payloadBytes (the runs of that payload mode
 * only, 0 the no-op), by (one of GROUP_BY: the groups; ClickHouse: CLICKHOUSE_GROUP_BY), minGroupRuns (by network: the
 * fewest runs of a shown network, readReportData.mjs), method, confidence, htmlPath (falsy: no HTML), jsonPath (falsy:
 * no JSON; the whole report as
 * data, format REPORT_FORMAT), daily (the daily series as report.daily; default: when HTML or JSON is written),
 * readSummary (ClickHouse: false reads every value from run_records, not the value summary; for bench:clickhouse), now
 * (ClickHouse: the clock in ms, whose UTC day is read from run_records, not the summary; default the time).
 * Resolves to { report, text, htmlPath, timings: {read, stats, setup, format, html} } (milliseconds; setup: the
 * connection-setup view, SQLite only).
 */
export async function makeReport(core, {
  db, dbPath, store, metric = 'network_ms', since = '', arms = 'h2-h3', payloadBytes = 0, by = 'region', method = 'delta', confidence = 0.95,
  htmlPath = null, jsonPath = null, daily = Boolean(htmlPath || jsonPath), minGroupRuns, readSummary = true, now,
} = {}) {
  if (!ARMS.includes(arms)) throw new Error(`--arms must be one of ${ARMS.join(', ')}, got "${arms}"`);
  const spec = store ? parseStoreSpec(store) : null;
  if (spec?.kind === 'sqlite') dbPath = spec.path;
  if (spec?.kind === 'clickhouse') {
    const ch = await openStoreSpec(spec, core, { readOnly: true });
    const t0 = performance.now();
    // One source for the report and its daily series: each pass reads the table once for both groupings.
    const source = clickhouseAggregateSource(ch.client, core.schema(), { metric, since: normalizeSince(since), arms,
      payloadBytes, minGroupRuns, sets: daily ? [by, 'day'] : [by], readSummary, now });
    const [report, byDay] = await buildReportsFromAggregates(core, source, { metric, since: normalizeSince(since), arms, method, confidence },
      [{ cdf: Boolean(htmlPath) }, ...(daily ? [{ percentiles: DAILY_PERCENTILES }] : [])]);
    if (daily) {
      // The cumulative looks: a run in its day and every later day, so a grouping of its own (one more set of passes).
      const looks = clickhouseAggregateSource(ch.client, core.schema(), { metric, since: normalizeSince(since), arms,
        payloadBytes, sets: ['day'], cumulative: true, readSummary, now, countsFrom: source });
      const [cumulative] = await buildReportsFromAggregates(core, looks, { metric, since: normalizeSince(since), arms, method: 'delta', confidence },
        [{ percentiles: PERCENTILES, cumulative: true }]);
      report.daily = dailySeries(byDay, cumulative);
      report.verdict = verdict(report);
      source.passes.push(...looks.passes.map((p) => ({ ...p, name: `cumulative ${p.name}` })));
    }
    // The connection-setup view's queries are listed with the passes.
    const setupPass = queryRecorder(ch.client, source.passes);
    report.connectionSetup = arms === SETUP_ARMS
      ? await clickhouseConnectionSetup({ json: (sql) => setupPass('setup', sql) }, core, { since: normalizeSince(since), by, payloadBytes, confidence,
        // The pooling's shown values, not the report's groups: a network shown without a measured request has no group
        // there, and its runs' cold connections are still its own, as SQLite's view has them.
        shown: source.shown(by) })
      : null;
    const t2 = performance.now();
    return { ...finish(report, { read: 0, stats: t2 - t0 }, { htmlPath, jsonPath }), passes: source.passes };
  }
  let own = null;
  if (!db) {
    if (!dbPath || !fs.existsSync(dbPath)) throw new Error(`no database at ${dbPath}: run "npm start" first or pass --db FILE`);
    const Database = peer('better-sqlite3', 'the report');
    own = new Database(dbPath, { readonly: true, fileMustExist: true });
  }
  try {
    const t0 = performance.now();
    const data = readReportData(db ?? own, core.schema(), { metric, since, arms, payloadBytes, by, minGroupRuns });
    const t1 = performance.now();
    const report = buildReport(core, data, { method, confidence, cdf: Boolean(htmlPath) });
    const ts = performance.now();
    // The connection-setup view, from the cold-setup records of the experiment's runs (connectionSetup.mjs).
    report.connectionSetup = arms === SETUP_ARMS
      ? connectionSetupFromData(core, readSetupData(db ?? own, core.schema(), { since: data.since, by, groups: data.groups, payloadBytes }),
        data.groups, { confidence })
      : null;
    const setup = performance.now() - ts;
    if (daily) {
      const byDay = readReportData(db ?? own, core.schema(), { metric, since, arms, payloadBytes, by: 'day' });
      report.daily = dailySeries(buildReport(core, byDay, { method, confidence, percentiles: DAILY_PERCENTILES }),
        buildReport(core, byDay, { method: 'delta', confidence, percentiles: PERCENTILES, cumulative: true }));
      report.verdict = verdict(report);
    }
    const t2 = performance.now();
    return finish(report, { read: t1 - t0, stats: t2 - t1 - setup, setup }, { htmlPath, jsonPath });
  } finally {
    own?.close();
  }
}

// Δ at DAILY_PERCENTILES per day received, each day a group of its own with its own intervals. report: the same report
// grouped by day (either store). cumulative (optional): the report whose day groups hold every run received up to the
// end of that day (buildReport's cumulative option): each day then also carries that look, with the fixed-horizon
// interval beside the anytime-valid one (the confidence sequence, valid however often the series is read), and the
// sequence's stopping line as the core marked it over the looks (the verdict reads the last look's).
function dailySeries(report, cumulative = null) {
  const lookGroups = cumulative?.groups.slice(1) ?? [];
  const looks = new Map(lookGroups.map((g) => [g.name, g]));
  const lookDays = lookGroups.map((g) => g.name);
  return {
    percentiles: [...DAILY_PERCENTILES],
    days: report.groups.slice(1).map((g) => ({ day: g.name, runs: g.runs, rows: (g.analysis?.rows ?? []).map((x) => ({
      p: x.p, diff_ms: x.diff_ms, diff_pct: x.diff_pct, ci_ms: x.ci_ms, ci_pct: x.ci_pct, ci_pct_unbounded: x.ci_pct_unbounded,
      significant: x.significant })),
    ...(looks.has(g.name) ? { cumulative: cumulativeLook(looks.get(g.name), lookDays) } : {}) })),
  };
}

// One look of the cumulative series: the runs so far and, per percentile, Δ with both intervals and their marks, and
// the stopping line (cs_decided_look named by its day among lookDays, the looks in order).
function cumulativeLook(g, lookDays) {
  return { runs: g.runs, rows: (g.analysis?.rows ?? []).map((x) => ({
    p: x.p, diff_ms: x.diff_ms, diff_pct: x.diff_pct, ci_ms: x.ci_ms, ci_pct: x.ci_pct, ci_pct_unbounded: x.ci_pct_unbounded,
    cs_ms: x.cs_ms, cs_pct: x.cs_pct, cs_pct_unbounded: x.cs_pct_unbounded, significant: x.significant,
    significant_cs: x.significant_cs, cs_runs_needed: x.cs_runs_needed, cs_days_needed: x.cs_days_needed,
    cs_decided_look: x.cs_decided_look, cs_decided_day: x.cs_decided_look === null ? null : lookDays[x.cs_decided_look] ?? null,
    cs_decided_side: x.cs_decided_side, cs_conflict: x.cs_conflict })) };
}

// Text, HTML and JSON of a report, the same from either store.
function finish(report, timings, { htmlPath, jsonPath }) {
  const t2 = performance.now();
  const text = formatReport(report);
  const t3 = performance.now();
  if (htmlPath) {
    fs.mkdirSync(path.dirname(path.resolve(htmlPath)), { recursive: true });
    fs.writeFileSync(htmlPath, renderReportHtml(report));
  }
  if (jsonPath) {
    fs.mkdirSync(path.dirname(path.resolve(jsonPath)), { recursive: true });
    fs.writeFileSync(jsonPath, `${JSON.stringify({ format: REPORT_FORMAT, generatedAt: new Date().toISOString(), ...report }, null, 1)}\n`);
  }
  const t4 = performance.now();
  return { report, text, htmlPath: htmlPath ? path.resolve(htmlPath) : null, jsonPath: jsonPath ? path.resolve(jsonPath) : null,
    timings: { ...timings, format: t3 - t2, html: t4 - t3 } };
}
