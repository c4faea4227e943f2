// `npm run bench:clickhouse -- [--sizes 1e6,1e7,1e8] [--template 50000] [--repeat 3] [--raw-repeat 1] [--sqlite-max 1e6]
// [--server URL [--analyst USER:PASSWORD]] [--secure]`: the report computed inside ClickHouse (web/report/clickhouseAggregates.mjs) at 1 M, 10 M and 100 M
// measured requests, the text report and the one with HTML and JSON (and its daily series), each pass's time and rows
// read from ClickHouse's own statistics (system.query_log), with the SQLite report of the same size beside it where
// that is affordable to write. Each report is made as users get it (the values read from the value summary run_values
// where it holds them exactly) and, --raw-repeat times, with every value read from run_records (readSummary: false), on
// the same data.
//
// How the data goes in: a template of --template synthetic runs (web/synthetic/syntheticBeacons.mjs) goes through the real
// path: each beacon's text through the C++ decoder, then the ClickHouse store's log and batched inserts (the
// collector's rows, clickhouseRows()). Each size is then ClickHouse's own bulk insert (INSERT … SELECT) of copies of the
// template's run_records rows, every column as the collector wrote it, the run_id made unique per copy and, from the
// second copy on, every value of every metric perturbed (a factor per run and copy, e^±0.4, and one per value, ±10 %,
// from a hash of the run_id, the copy and the value's place; rounded to 0.1 ms as the generator's are): distinct runs
// with realistic distinct values, not the same runs repeated. The runs and requests tables, which the report never
// reads, are not copied. The materialized view fills the value summary as the copies go in, as it does for the
// collector's inserts. The server runs under .h3probe/clickhouse/bench and keeps the data for the next run; --server
// uses a running one instead. --secure: the server speaks only TLS and every user has a password (the writer's and the
// reports' URL carries user, password and the CA, as a team runs it; inserts gzip'd), data under .h3probe/clickhouse/
// bench-secure: run it beside a plain run to see what TLS, a password and gzip cost.
//
// Each report is made again as a read-only analyst (a user whose profile is readonly=1: no setting may be sent, so every
// query must fit the server's max_query_size), which must come out the same; the bench's own server has such a user,
// a --server one names it with --analyst. Where a size is one copy of the template (--template equal to the size's
// runs), the template's database (every table through the collector's path) holds the SQLite report's beacons, and the
// analyst's text report of it must be SQLite's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureCerts } from '../stack/certs.mjs';
import { planClickHouse, startClickHouse } from '../launch/clickhouse.mjs';
import { stateDir } from '../stack/paths.mjs';
import { syntheticBeacons, writeSyntheticDb } from '../synthetic/syntheticBeacons.mjs';
import { clickhouseClient, connectionOf, parseClickHouseUrl } from '../server/clickhouseConnection.mjs';
import { clickhouseTables, ensureClickHouseTables, metricColumns } from '../server/clickhouseSchema.mjs';
import { openClickHouseStore } from '../server/clickhouseStore.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1e6,1e7,1e8' },
    template: { type: 'string', default: '50000' },
    repeat: { type: 'string', default: '3' },
    'raw-repeat': { type: 'string', default: '1' },
    'sqlite-max': { type: 'string', default: '1e6' },
    server: { type: 'string' },  // http://HOST:PORT of a running server (its data stays)
    analyst: { type: 'string' },  // with --server: USER:PASSWORD of a readonly=1 user there
    secure: { type: 'boolean', default: false },
    tiny: { type: 'boolean', default: false }, // npm test: the same path at a size that finishes in seconds
  },
});
if (args.tiny) Object.assign(args, { sizes: '1e4,2e4', template: '1000', repeat: '1', 'sqlite-max': '2e4' });
const sizes = args.sizes.split(',').map(Number);
const templateRuns = Number(args.template);
const repeat = Math.max(1, Number(args.repeat));
const rawRepeat = Math.max(0, Number(args['raw-repeat']));
const perRun = 10;  // 5 + 5 measured requests per synthetic run
const ms = (v) => `${Math.round(v).toLocaleString('en-US')} ms`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const count = (n) => Number(n).toLocaleString('en-US');

const core = await loadH3probeNode();
const schema = core.schema();
let server = null;
if (args.secure && args.server) throw new Error('--secure starts a server of its own: not with --server');
const WRITER_PASSWORD = 'bench-writer:p@ss';
const ANALYST_PASSWORD = 'bench-analyst';
let certs = null;
if (args.analyst && !args.server) throw new Error('--analyst names a user of a --server: the bench\'s own server has its analyst');
if (!args.server) {
  // The tiny run keeps off the full run's data, the secure run off the plain one's.
  const plan = await planClickHouse(`bench${args.secure ? '-secure' : ''}${args.tiny ? '-tiny' : ''}`);
  certs = args.secure ? await ensureCerts() : null;
  const users = { writer: { password: WRITER_PASSWORD }, analyst: { password: ANALYST_PASSWORD, readonly: true } };
  server = await startClickHouse(plan, args.secure ? { tls: certs, users } : { users });
}
const serverUrl = args.server ?? server.url;
const host = new URL(serverUrl).host;
const tlsParams = () => `?secure=1&ca=${encodeURIComponent(certs.certPath)}`;
// The store URL of database db, as its users write it: the writer's, and the read-only analyst's (null: none).
const storeUrl = (db) => (args.server ? `clickhouse://${host}/${db}`
  : `clickhouse://writer:${encodeURIComponent(WRITER_PASSWORD)}@${host}/${db}${args.secure ? tlsParams() : ''}`);
const analyst = args.server ? args.analyst : `analyst:${ANALYST_PASSWORD}`;
const analystUrl = (db) => (analyst ? `clickhouse://${analyst.split(':').map(encodeURIComponent).join(':')}@${host}/${db}${
  args.secure ? tlsParams() : ''}` : null);
const admin = clickhouseClient(server?.admin ?? serverUrl, { timeoutMs: 3_600_000 });
console.log(`ClickHouse ${(await admin.query('SELECT version()')).trim()} at ${serverUrl}${server ? `, data in ${server.dir}` : ''}` +
  `${args.secure ? ' (TLS only, user and password, gzip\'d inserts)' : ''}`);
console.log(`machine: ${os.availableParallelism()} cores, load average ${load()}`);

// Each pass of a report as ClickHouse measured it: its query_log row (type 2: finished), by query_id.
async function passFigures(passes) {
  await admin.query('SYSTEM FLUSH LOGS');
  const ids = passes.map((p) => `'${p.queryId}'`).join(', ');
  // cpu: user + system time of all the query's threads (its wall time on a loaded machine is mostly waiting for a core).
  const event = (name) => `ProfileEvents.Values[indexOf(ProfileEvents.Names, '${name}')]`;
  const logged = new Map((await admin.json(`SELECT query_id, query_duration_ms AS ms, read_rows, read_bytes, result_rows,
    memory_usage, intDiv(${event('UserTimeMicroseconds')} + ${event('SystemTimeMicroseconds')}, 1000) AS cpu
    FROM system.query_log WHERE type = 2 AND query_id IN (${ids})`)).map((r) => [r.query_id, r]));
  return passes.map((p) => ({ ...p, log: logged.get(p.queryId) ?? null }));
}

function printPasses(label, passes) {
  console.log(`  ${label}, per pass (Node's wall time; ClickHouse's query_duration_ms, CPU time, read_rows, read_bytes, result_rows, memory_usage):`);
  for (const p of passes) {
    const l = p.log;
    console.log(`    ${p.name.padEnd(12)} ${ms(p.ms).padStart(10)}  ${l ? `${ms(l.ms).padStart(10)} ${`${ms(l.cpu)} cpu`.padStart(14)}  ` +
      `${count(l.read_rows).padStart(12)} rows  ${mib(l.read_bytes).padStart(9)}  ${count(l.result_rows).padStart(9)} out  ${mib(l.memory_usage).padStart(8)}`
      : '(not in query_log)'}`);
  }
  const sum = (f) => passes.reduce((a, p) => a + Number(f(p) ?? 0), 0);
  console.log(`    ${'all'.padEnd(12)} ${ms(sum((p) => p.ms)).padStart(10)}  ${ms(sum((p) => p.log?.ms)).padStart(10)} ` +
    `${`${ms(sum((p) => p.log?.cpu))} cpu`.padStart(14)}  ${count(sum((p) => p.log?.read_rows)).padStart(12)} rows`);
}

// The value summary's rows, active parts and bytes on disk in database db.
async function summaryFigures(db) {
  const [r] = await admin.json(`SELECT sum(rows) AS rows, count() AS parts, sum(bytes) AS bytes FROM system.parts
    WHERE database = '${db}' AND table = 'run_values' AND active`);
  return { rows: Number(r.rows), parts: Number(r.parts), bytes: Number(r.bytes) };
}

// The values of a metric column of copy k: each run's factor and each value's, from hashes (the template is copy 0).
function perturbed(column) {
  const runFactor = "exp((cityHash64(run_id, k, 'run') % 10001) / 12500 - 0.4)";
  return `if(k = 0, ${column}, arrayMap((x, i) -> round(x * ${runFactor} * (0.9 + (cityHash64(run_id, k, i, '${column}') % 2001) / 10000), 1),
    ${column}, arrayEnumerate(${column})))`;
}

try {
  // 1. The template through the real path.
  const templateDb = `bench_template_${templateRuns}`;
  const logFile = path.join(stateDir, `bench-clickhouse-template-${process.pid}.ndjson`);
  const template = await openClickHouseStore(storeUrl(templateDb), core, { log: logFile });
  const have = Number((await template.client.query('SELECT count() FROM run_records')).trim());
  if (have !== templateRuns) {
    for (const t of ['runs', 'requests', 'run_records']) await template.client.query(`TRUNCATE TABLE ${t}`);
    const t0 = performance.now();
    let pending = [];
    for (const { beacon, meta } of syntheticBeacons({ runs: templateRuns, seed: 1 })) {
      pending.push(template.queueBeacon(core.decodeBeacon(JSON.stringify(beacon)), meta));
      if (pending.length === 500) { await Promise.all(pending); pending = []; }
    }
    await Promise.all(pending);
    // A large template's log takes minutes to ship once every beacon is in it.
    await template.flushed(30 * 60_000);
    const s = (performance.now() - t0) / 1000;
    console.log(`template: ${count(templateRuns)} runs through decoder + ClickHouse store in ${s.toFixed(1)} s ` +
      `(${Math.round(templateRuns / s)} beacons/s, batched inserts)`);
  } else {
    console.log(`template: ${count(templateRuns)} runs (reused)`);
  }
  await template.close();
  for (const f of fs.readdirSync(stateDir)) if (f.startsWith(path.basename(logFile))) fs.rmSync(path.join(stateDir, f));

  const columns = clickhouseTables(schema).find(([name]) => name === 'run_records')[1].map((c) => c.split(' ')[0]);
  const valueColumns = new Set(metricColumns(schema).flatMap((m) => [m.control, m.treatment]));
  const rows = [];
  for (const size of sizes) {
    const runs = Math.round(size / perRun);
    if (runs % templateRuns) throw new Error(`${size} measured requests is not a whole number of template copies (${templateRuns * perRun} each)`);
    const copies = runs / templateRuns;
    const db = `bench_${templateRuns}_${runs}`;
    const target = parseClickHouseUrl(storeUrl(db));
    await ensureClickHouseTables(schema, target);
    const client = clickhouseClient(connectionOf(target), { database: db, timeoutMs: 3_600_000 });
    let stored = Number((await client.query('SELECT count() FROM run_records')).trim());
    let loadS = null;
    let insertS = null;
    let optimizeS = null;
    let summaryBefore = null;
    if (stored !== runs) {
      for (const t of ['run_records', 'run_values']) await client.query(`TRUNCATE TABLE ${t}`);
      const t0 = performance.now();
      const select = columns.map((c) => (c === 'run_id' ? "concat(run_id, '-', toString(k)) AS run_id"
        : valueColumns.has(c) ? `${perturbed(c)} AS ${c}` : c)).join(', ');
      // In slices of 10 copies: one INSERT … SELECT per slice keeps each insert's memory small.
      for (let from = 0; from < copies; from += 10) {
        const to = Math.min(copies, from + 10);
        await client.query(`INSERT INTO run_records (${columns.join(', ')}) SELECT ${select} FROM ${templateDb}.run_records
          ARRAY JOIN arrayMap(x -> x + ${from}, range(${to - from})) AS k`,
        { timeoutMs: 3_600_000 });
      }
      insertS = (performance.now() - t0) / 1000;
      await client.query('OPTIMIZE TABLE run_records FINAL', { timeoutMs: 3_600_000 });
      loadS = (performance.now() - t0) / 1000;
      summaryBefore = await summaryFigures(db);
      const t1 = performance.now();
      await client.query('OPTIMIZE TABLE run_values FINAL', { timeoutMs: 3_600_000 });
      optimizeS = (performance.now() - t1) / 1000;
      stored = Number((await client.query('SELECT count() FROM run_records')).trim());
    }
    const disk = Number((await admin.query(`SELECT sum(bytes) FROM system.parts WHERE database = '${db}' AND table = 'run_records' AND active`)).trim());
    const distinct = Number((await client.query('SELECT uniqExact(v) FROM run_records ARRAY JOIN network_ms_control AS v')).trim());
    console.log(`${size.toExponential(0)} measured requests: ${count(stored)} runs${loadS ? `, bulk-loaded in ${loadS.toFixed(1)} s` : ', reused'}, ` +
      `${mib(disk)} on disk, ${count(distinct)} distinct HTTP/2 network_ms values; load ${load()}`);
    if (loadS) console.log(`  bulk load: INSERT … SELECT ${insertS.toFixed(1)} s (the summary's view included), OPTIMIZE run_records ${(loadS - insertS).toFixed(1)} s`);
    const summary = await summaryFigures(db);
    console.log(`  value summary run_values: ${count(summary.rows)} rows in ${summary.parts} parts, ${mib(summary.bytes)} on disk` +
      (summaryBefore ? ` (before OPTIMIZE … FINAL, ${optimizeS.toFixed(1)} s: ${count(summaryBefore.rows)} rows in ${summaryBefore.parts} parts, ${mib(summaryBefore.bytes)})` : ''));
    const measure = async (label, options, times_ = repeat) => {
      const times = [];
      let last;
      for (let i = 0; i < times_; i++) {
        const t = performance.now();
        last = await makeReport(core, { store: storeUrl(db), ...options });
        times.push(performance.now() - t);
      }
      const passes = await passFigures(last.passes);
      const cells = last.passes.filter((p) => p.cells).map((p) => `${p.cells.summary} from the summary, ${p.cells.raw} raw`).join('; ');
      console.log(`  ${label}: ${times.map(ms).join(', ')} (median ${ms(median(times))}), ${passes.length} queries; ` +
        `Node RSS ${mib(process.memoryUsage().rss)}; load ${load()}${cells ? `; (day, region) cells: ${cells}` : ''}`);
      printPasses(`${label} (the last run)`, passes);
      return { times, median: median(times), passes, cpu: passes.reduce((a, p) => a + Number(p.log?.cpu ?? 0), 0), report: last.report, out: last.text };
    };
    const files = { htmlPath: path.join(stateDir, `bench-clickhouse-${runs}.html`), jsonPath: path.join(stateDir, `bench-clickhouse-${runs}.json`) };
    const text = await measure('text report');
    const full = await measure('with HTML and JSON', files);
    // The same as the read-only analyst: no setting sent, every query within the server's max_query_size.
    const readOnly = analyst ? { text: await measure('text report, read-only analyst', { store: analystUrl(db) }),
      full: await measure('with HTML and JSON, read-only analyst', { ...files, store: analystUrl(db) }) } : null;
    if (readOnly && (readOnly.text.out !== text.out || readOnly.full.out !== full.out)) throw new Error('the read-only analyst\'s report differs from the writer\'s');
    // The same with every value read from run_records: the report must not change, only its cost.
    const raw = rawRepeat ? { text: await measure('text report, raw rows only', { readSummary: false }, rawRepeat),
      full: await measure('with HTML and JSON, raw rows only', { ...files, readSummary: false }, rawRepeat) } : null;
    if (raw && (raw.text.out !== text.out || raw.full.out !== full.out)) throw new Error('the report from the raw rows differs from the one with the summary');
    const measured = text.report.groups[0].arms.h2.n + text.report.groups[0].arms.h3.n;
    if (!(measured > 0) || !(full.report.daily?.days.length > 0)) throw new Error('the report holds no measured request or no daily series');
    const peak = Math.max(...[...text.passes, ...full.passes].map((p) => Number(p.log?.memory_usage ?? 0)));
    rows.push({ size, runs: stored, measured, text: text.median, full: full.median, textCpu: text.cpu, fullCpu: full.cpu, peak, load: load(),
      raw: raw && { text: raw.text.median, full: raw.full.median, textCpu: raw.text.cpu, fullCpu: raw.full.cpu },
      readOnly: readOnly && { text: readOnly.text.median, full: readOnly.full.median, out: readOnly.text.out }, copies });
  }

  // SQLite beside, through its own bench path (decoder + store), where it is affordable to write.
  const sqliteMax = Number(args['sqlite-max']);
  for (const row of rows) {
    if (row.size > sqliteMax) continue;
    const dbPath = path.join(stateDir, `bench-report-${row.size / perRun}-s1.sqlite`);
    const gen = await writeSyntheticDb(dbPath, core, { runs: row.size / perRun, seed: 1 });
    const times = [];
    for (let i = 0; i < repeat; i++) {
      const t = performance.now();
      await makeReport(core, { dbPath });
      times.push(performance.now() - t);
    }
    row.sqlite = median(times);
    console.log(`SQLite ${row.size.toExponential(0)} (${gen.reused ? 'reused' : `written in ${gen.seconds.toFixed(0)} s`}): report ` +
      `${times.map(ms).join(', ')} (median ${ms(row.sqlite)}); load ${load()}`);
    // One copy of the template: the template's database holds the same beacons (seed 1) as this SQLite store, every
    // table through the collector's path (the copies have run_records only), so the analyst's report of it is SQLite's.
    if (row.copies === 1 && analyst) {
      const sqliteText = (await makeReport(core, { dbPath })).text;
      const t = performance.now();
      const chText = (await makeReport(core, { store: analystUrl(templateDb) })).text;
      const wall = performance.now() - t;
      const a = chText.split('\n');
      const b = sqliteText.split('\n');
      const at = a.findIndex((line, i) => line !== b[i]);
      if (at >= 0 || a.length !== b.length) throw new Error(`the read-only analyst's report of ${templateDb} differs from SQLite's at line ${at + 1}:\n${a[at]}\n${b[at]}`);
      console.log(`  the read-only analyst's text report of ${templateDb} (${count(row.runs)} runs, ${ms(wall)}) is SQLite's, byte for byte`);
    }
  }

  console.log('\n| measured requests | usable values | text report (median) | its queries\' CPU | with HTML and JSON (median) | its queries\' CPU | raw rows only: text, CPU; HTML+JSON, CPU | read-only analyst: text; HTML+JSON (medians) | peak query memory | SQLite text report (median) | load |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const raw = r.raw ? `${ms(r.raw.text)}, ${ms(r.raw.textCpu)}; ${ms(r.raw.full)}, ${ms(r.raw.fullCpu)}` : 'not run';
    const readOnly = r.readOnly ? `${ms(r.readOnly.text)}; ${ms(r.readOnly.full)}` : 'not run';
    console.log(`| ${count(r.size)} | ${count(r.measured)} | ${ms(r.text)} | ${ms(r.textCpu)} | ${ms(r.full)} | ${ms(r.fullCpu)} | ${raw} | ${readOnly} | ${mib(r.peak)} | ` +
      `${r.sqlite ? ms(r.sqlite) : 'not run'} | ${r.load} |`);
  }
} finally {
  await server?.stop();
}
