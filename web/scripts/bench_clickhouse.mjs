// `npm run bench:clickhouse -- [--sizes 1e6,1e7,1e8] [--template 20000] [--repeat 3] [--sqlite-max 1e6]`: the report
// computed inside ClickHouse (web/report/clickhouseAggregates.mjs) at 1 M, 10 M and 100 M measured requests, with the
// SQLite report of the same size beside it where that is affordable to write.
//
// How the data goes in: a template of --template synthetic runs (web/devstack/syntheticBeacons.mjs) goes through the real
// path: each beacon's text through the C++ decoder, then the ClickHouse store's batched inserts (the collector's rows,
// clickhouseRows()). Each size is then ClickHouse's own bulk insert (INSERT … SELECT) of copies of the template's
// run_records rows, every column as the collector wrote it, with the run_id made unique per copy: the rows the report
// reads, shaped exactly as the collector writes them (its runs and requests tables, which the report never reads, are
// not copied). The server runs under .h3probe/clickhouse/bench and keeps the data for the next run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { planClickHouse, startClickHouse } from '../devstack/clickhouse.mjs';
import { stateDir } from '../devstack/paths.mjs';
import { syntheticBeacons, writeSyntheticDb } from '../devstack/syntheticBeacons.mjs';
import { clickhouseClient, clickhouseTables, ensureClickHouseTables, openClickHouseStore } from '../server/clickhouseStore.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1e6,1e7,1e8' },
    template: { type: 'string', default: '20000' },
    repeat: { type: 'string', default: '3' },
    'sqlite-max': { type: 'string', default: '1e6' },
    tiny: { type: 'boolean', default: false }, // npm test: the same path at a size that finishes in seconds
  },
});
if (args.tiny) Object.assign(args, { sizes: '1e4', template: '1000', repeat: '1', 'sqlite-max': '1e4' });
const sizes = args.sizes.split(',').map(Number);
const templateRuns = Number(args.template);
const repeat = Math.max(1, Number(args.repeat));
const perRun = 10;  // 5 + 5 measured requests per synthetic run
const ms = (v) => `${Math.round(v).toLocaleString('en-US')} ms`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;

const core = await loadH3probeNode();
const schema = core.schema();
const plan = await planClickHouse(args.tiny ? 'bench-tiny' : 'bench'); // the tiny run keeps off the full run's data
const server = await startClickHouse(plan);
const url = `clickhouse://127.0.0.1:${plan.httpPort}`;
const admin = clickhouseClient(server.url, { timeoutMs: 3_600_000 });
console.log(`ClickHouse ${(await admin.query('SELECT version()')).trim()} at ${server.url}, data in ${plan.dir}`);
console.log(`machine: ${os.availableParallelism()} cores, load average ${load()}`);

try {
  // 1. The template through the real path.
  const template = await openClickHouseStore(`${url}/bench_template`, core, { spool: path.join(plan.dir, 'template-spool.ndjson') });
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
    await template.flushed();
    const s = (performance.now() - t0) / 1000;
    console.log(`template: ${templateRuns.toLocaleString('en-US')} runs through decoder + ClickHouse store in ${s.toFixed(1)} s ` +
      `(${Math.round(templateRuns / s)} beacons/s, batched inserts)`);
  } else {
    console.log(`template: ${templateRuns.toLocaleString('en-US')} runs (reused)`);
  }
  await template.close();

  const columns = clickhouseTables(schema).find(([name]) => name === 'run_records')[1].map((c) => c.split(' ')[0]);
  const rows = [];
  for (const size of sizes) {
    const runs = Math.round(size / perRun);
    if (runs % templateRuns) throw new Error(`${size} measured requests is not a whole number of template copies (${templateRuns * perRun} each)`);
    const copies = runs / templateRuns;
    const db = `bench_${runs}`;
    await ensureClickHouseTables(schema, { url: server.url, database: db });
    const client = clickhouseClient(server.url, { database: db, timeoutMs: 3_600_000 });
    let stored = Number((await client.query('SELECT count() FROM run_records')).trim());
    let loadS = null;
    if (stored !== runs) {
      await client.query('TRUNCATE TABLE run_records');
      const t0 = performance.now();
      const select = columns.map((c) => (c === 'run_id' ? "concat(run_id, '-', toString(k)) AS run_id" : c)).join(', ');
      // In slices of 10 copies: one INSERT … SELECT per slice keeps each insert's memory small.
      for (let from = 0; from < copies; from += 10) {
        const to = Math.min(copies, from + 10);
        await client.query(`INSERT INTO run_records (${columns.join(', ')}) SELECT ${select} FROM bench_template.run_records
          ARRAY JOIN arrayMap(x -> x + ${from}, range(${to - from})) AS k`,
        { timeoutMs: 3_600_000 });
      }
      await client.query('OPTIMIZE TABLE run_records FINAL', { timeoutMs: 3_600_000 });
      loadS = (performance.now() - t0) / 1000;
      stored = Number((await client.query('SELECT count() FROM run_records')).trim());
    }
    const disk = Number((await admin.query(`SELECT sum(bytes) FROM system.parts WHERE database = '${db}' AND table = 'run_records' AND active`)).trim());
    const times = [];
    let report;
    for (let i = 0; i < repeat; i++) {
      const since = new Date().toISOString().replace('T', ' ').slice(0, 19);
      const t = performance.now();
      report = await makeReport(core, { store: `${url}/${db}` });
      times.push(performance.now() - t);
      await admin.query('SYSTEM FLUSH LOGS');
      const [mem] = (await admin.json(`SELECT max(memory_usage) AS peak, count() AS queries FROM system.query_log
        WHERE type = 2 AND event_time >= toDateTime('${since}') AND query LIKE '%run_records%' AND query NOT LIKE '%system.%'`));
      report.memory = mem;
    }
    const measured = report.report.groups[0].arms.h2.n + report.report.groups[0].arms.h3.n;
    const th = performance.now();
    await makeReport(core, { store: `${url}/${db}`, htmlPath: path.join(stateDir, `bench-clickhouse-${runs}.html`) });
    const withHtml = performance.now() - th;
    const row = { size, runs: stored, measured, loadS, disk, times, median: median(times), peak: Number(report.memory.peak),
      queries: report.memory.queries, withHtml, load: load() };
    console.log(`${size.toExponential(0)} measured requests (${stored.toLocaleString('en-US')} runs, ${measured.toLocaleString('en-US')} usable values` +
      `${loadS ? `, bulk-loaded in ${loadS.toFixed(1)} s` : ', reused'}, ${mib(disk)} on disk): report ${times.map(ms).join(', ')} ` +
      `(median ${ms(row.median)}), with HTML ${ms(withHtml)}; peak query memory ${mib(row.peak)}; Node RSS ${mib(process.memoryUsage().rss)}; ` +
      `load ${row.load}`);
    rows.push(row);
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
  }

  console.log('\n| measured requests | ClickHouse report (median) | ratio per 10x | peak query memory | SQLite report (median) |');
  console.log('|---|---|---|---|---|');
  rows.forEach((r, i) => {
    const prev = rows[i - 1];
    const ratio = prev && r.size === prev.size * 10 ? `${(r.median / prev.median).toFixed(2)}x` : '';
    console.log(`| ${r.size.toLocaleString('en-US')} | ${ms(r.median)} | ${ratio} | ${mib(r.peak)} | ${r.sqlite ? ms(r.sqlite) : 'not run'} |`);
  });
} finally {
  await server.stop();
}
