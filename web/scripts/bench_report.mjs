// `npm run bench:report -- [--runs N] [--seed S] [--method delta|bootstrap]`: the report at Dropbox scale. Writes (or reuses)
// a synthetic database of N runs × (5 + 5) measured requests + 3 pre-warm rows each (default 420,000 runs: 4.2 M measured
// requests, 300k/day over 14 days), then times the report: in this process step by step, and as `npm run report` in a
// fresh process (Node start, WASM load, SQLite read, statistics, table). Budget: the table in ≤ 2 s.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { repoRoot, stateDir } from '../devstack/paths.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';
import { writeSyntheticDb } from '../report/writeSyntheticDb.mjs';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '420000' },
    seed: { type: 'string', default: '1' },
    method: { type: 'string', default: 'delta' },
    repeat: { type: 'string', default: '3' },
  },
});
const runs = Number(args.runs);
const repeat = Math.max(1, Number(args.repeat));
const ms = (v) => `${Math.round(v)} ms`;

fs.mkdirSync(stateDir, { recursive: true });
const dbPath = path.join(stateDir, `bench-report-${runs}-s${args.seed}-v2.sqlite`);
console.log(`synthetic database: ${dbPath}`);
const gen = writeSyntheticDb(dbPath, { runs, seed: Number(args.seed) });
const size = fs.statSync(dbPath).size;
console.log(gen.reused
  ? `  reused (same parameters): ${gen.runs.toLocaleString('en-US')} runs, ${gen.measuredRequests.toLocaleString('en-US')} measured requests, ${gen.rows.toLocaleString('en-US')} request rows, ${(size / 2 ** 20).toFixed(0)} MiB`
  : `  written in ${gen.seconds.toFixed(1)} s: ${gen.runs.toLocaleString('en-US')} runs, ${gen.measuredRequests.toLocaleString('en-US')} measured requests, ${gen.rows.toLocaleString('en-US')} request rows, ${(size / 2 ** 20).toFixed(0)} MiB`);

const tCore = performance.now();
const core = await loadH3probeNode();
console.log(`WASM core load: ${ms(performance.now() - tCore)}`);

const db = new Database(dbPath, { readonly: true });
console.log(`machine: ${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine slows every figure)`);
let last;
for (let i = 1; i <= repeat; i++) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  last = await makeReport(core, { db, method: args.method });
  const total = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const { read, stats, format } = last.timings;
  console.log(`report (table only) #${i}: ${ms(total)} = SQLite read ${ms(read)} + statistics ${ms(stats)} + table ${ms(format)}` +
    ` (CPU ${ms((used.user + used.system) / 1000)} over all threads)`);
}
const htmlPath = path.join(stateDir, 'bench-report.html');
const th = performance.now();
const withHtml = await makeReport(core, { db, method: args.method, htmlPath });
console.log(`report with HTML (CDF quantiles + page): ${ms(performance.now() - th)} (HTML step ${ms(withHtml.timings.html)}, ` +
  `statistics incl. CDF points ${ms(withHtml.timings.stats)}) -> ${htmlPath}`);
db.close();

const tp = performance.now();
execFileSync(process.execPath, [path.join(repoRoot, 'web/scripts/report.mjs'), '--db', dbPath, '--no-html', '--method', args.method],
  { stdio: 'ignore' });
console.log(`npm run report -- --no-html, fresh process, end to end: ${ms(performance.now() - tp)}`);
console.log('\nthe table:\n');
console.log(last.text.split('\n== ')[0] + '\n== ' + last.text.split('\n== ')[1]);
console.log(last.text.slice(last.text.indexOf('by region')));
