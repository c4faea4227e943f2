// `h3probe report [--store SPEC | --db FILE] [--since DATE] [--metric NAME] [--arms h2-h3|h2-h2|h3-h3] [--payload-bytes N] [--by GROUPING]
// [--min-network-runs N] [--html FILE | --no-html] [--json FILE] [--daily] [--method delta|bootstrap] [--confidence C]`: prints the table
// overall and per region (or browser, ...) for the runs of one arms mode (default h2-h3, the experiment; the others are
// A/A tests); with --html FILE it also writes the self-contained HTML report.
import { parseArgs } from 'node:util';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';
import { GROUP_BY } from '../report/readReportData.mjs';
import { DEFAULT_DB } from '../server/store.mjs';

// The metric a report is made of unless --metric names another: the network time, as Dropbox's.
const DEFAULT_METRIC = 'network_ms';
const help = (schema) => `usage: h3probe report [options]
  --store SPEC         sqlite:PATH, or clickhouse://[USER@]HOST[:PORT]/DATABASE[?secure=1] (docs/clickhouse.md: the report's
                       aggregates are computed inside ClickHouse; delta intervals only)
  --db FILE            the collector's SQLite database (default ${DEFAULT_DB}): --store sqlite:FILE
  --since DATE         only runs received at or after DATE (ISO 8601)
  --metric NAME        ${schema.metrics.map((m) => (m === DEFAULT_METRIC ? `${m} (default)` : m)).join(', ')}
  --arms MODE          h2-h3 (default, the experiment), h2-h2 or h3-h3 (A/A tests)
  --payload-bytes N    the runs whose arms fetched N bytes (config payloadBytes); default 0, the no-op
  --by GROUPING        split the runs by ${Object.keys(GROUP_BY).join(', ')} (default region; ClickHouse:
                       region, day or network)
  --min-network-runs N with --by network: show the networks with at least N runs, pool the rest as "other"
                       (default the fewest runs for an interval, 10)
  --daily              also print the daily series and its cumulative looks (fixed-horizon and anytime-valid
                       intervals; always in the HTML and JSON reports)
  --html FILE          also write the self-contained HTML report to FILE (none unless asked; npm run report
                       writes .h3probe/report.html, --no-html skips it)
  --json FILE          also write the whole report as JSON (format h3probe-report/3: verdict, groups, percentiles,
                       estimates, intervals, counts, exclusions)
  --method M           delta (default) or bootstrap intervals
  --confidence C       interval confidence (default ${schema.reportDefaults.confidence})`;

// A flag's number, or its text as given when it is none (the check that refuses it then quotes what the user typed).
const wholeNumber = (text) => (/^\d+$/.test(text) ? Number(text) : text);
const number = (text) => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

/** defaults: {db, html}, the paths used when the flags are absent (npm run report passes the dev stack's). */
export async function main(argv, defaults = {}) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: defaults.db ?? DEFAULT_DB },
      store: { type: 'string' },
      since: { type: 'string', default: '' },
      metric: { type: 'string', default: DEFAULT_METRIC },
      arms: { type: 'string', default: 'h2-h3' },
      'payload-bytes': { type: 'string', default: '0' },
      by: { type: 'string', default: 'region' },
      'min-network-runs': { type: 'string' },
      daily: { type: 'boolean', default: false },
      html: { type: 'string', default: defaults.html ?? '' },
      'no-html': { type: 'boolean', default: false },
      json: { type: 'string', default: '' },
      method: { type: 'string', default: 'delta' },
      confidence: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const core = await loadH3probeNode();
  if (args.help) return console.log(help(core.schema()));
  const { text, htmlPath, jsonPath } = await makeReport(core, {
    dbPath: args.db, store: args.store, since: args.since, metric: args.metric, arms: args.arms, by: args.by, method: args.method,
    payloadBytes: wholeNumber(args['payload-bytes']), ...(args.confidence !== undefined ? { confidence: number(args.confidence) } : {}),
    htmlPath: args['no-html'] ? null : args.html || null, jsonPath: args.json || null,
    ...(args.daily ? { daily: true } : {}),
    ...(args['min-network-runs'] !== undefined ? { minGroupRuns: wholeNumber(args['min-network-runs']) } : {}),
  });
  console.log(text);
  if (htmlPath) console.log(`\nHTML report: ${htmlPath}`);
  if (jsonPath) console.log(`JSON report: ${jsonPath}`);
}
