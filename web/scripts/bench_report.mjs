// `npm run bench:report -- [--runs N] [--seed S] [--method delta|bootstrap] [--repeat K] [--tiny]`: the report at Dropbox scale, on
// a database written the way the collector writes one. Writes (or reuses) N synthetic runs × (5 + 5) measured requests
// + 3 pre-warm requests each, every beacon's text through the C++ decoder and the store's group commit (default 420,000
// runs: 4.2 M measured requests, 300k/day over 14 days); prints the database's bytes per run; then times the report in
// this process step by step, and as `npm run report` in a fresh process. Budgets (docs/design.md): ≤ 1 s in process,
// ≤ 1.5 s fresh.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { repoRoot, stateDir } from '../devstack/paths.mjs';
import { writeSyntheticDb } from '../devstack/syntheticBeacons.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '420000' },
    seed: { type: 'string', default: '1' },
    method: { type: 'string', default: 'delta' },
    repeat: { type: 'string', default: '5' },
    tiny: { type: 'boolean', default: false }, // npm test: the same path at 2,000 runs
  },
});
if (args.tiny) Object.assign(args, { runs: '2000', repeat: '2' });
const runs = Number(args.runs);
const repeat = Math.max(1, Number(args.repeat));
const ms = (v) => `${Math.round(v)} ms`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => `load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;

fs.mkdirSync(stateDir, { recursive: true });
const dbPath = path.join(stateDir, `bench-report-${runs}-s${args.seed}.sqlite`);
console.log(`database: ${dbPath}`);
const core = await loadH3probeNode();
const gen = await writeSyntheticDb(dbPath, core, { runs, seed: Number(args.seed) });
const bytes = fs.statSync(dbPath).size;
const db = new Database(dbPath, { readonly: true });
const tableBytes = Object.fromEntries(['runs', 'requests', 'run_records', 'arm_values', 'run_records_mode', 'sqlite_autoindex_runs_1'].map((name) => {
  try {
    return [name, db.prepare('SELECT sum(pgsize) FROM dbstat WHERE name = ?').pluck().get(name)];
  } catch {
    return [name, null]; // a SQLite without the dbstat table
  }
}));
console.log(`  ${gen.reused ? 'reused (same parameters)' : `written through decoder + store in ${gen.seconds.toFixed(1)} s ` +
  `(${Math.round(runs / gen.seconds)} beacons/s)`}: ${runs.toLocaleString('en-US')} runs, ` +
  `${gen.measuredRequests.toLocaleString('en-US')} measured requests, ${(bytes / 2 ** 20).toFixed(0)} MiB, ` +
  `${Math.round(bytes / runs)} bytes per run (${Object.entries(tableBytes).filter(([, v]) => v)
    .map(([k, v]) => `${k} ${Math.round(v / runs)}`).join(', ')})`);
console.log(`machine: ${os.availableParallelism()} cores, ${load()} (other work on the machine slows every figure)`);

const totals = [];
let last;
for (let i = 1; i <= repeat; i++) {
  const t = performance.now();
  last = await makeReport(core, { db, method: args.method });
  const total = performance.now() - t;
  totals.push(total);
  const { read, stats, setup, format } = last.timings;
  console.log(`report (table) #${i}: ${ms(total)} = SQLite read ${ms(read)} + C++ counts and statistics ${ms(stats)} + ` +
    `connection-setup view ${ms(setup)} (the runs' cold-setup records) + text ${ms(format)}`);
}
console.log(`in process: median ${ms(median(totals))} of ${repeat} (the first includes WASM compilation of the hot code)`);
const th = performance.now();
const withHtml = await makeReport(core, { db, method: args.method, htmlPath: path.join(stateDir, 'bench-report.html') });
console.log(`with HTML (CDF points + page): ${ms(performance.now() - th)} (HTML step ${ms(withHtml.timings.html)})`);
db.close();

const fresh = [];
for (let i = 0; i < 3; i++) {
  const tp = performance.now();
  execFileSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'report', '--db', dbPath, '--no-html', '--method', args.method],
    { stdio: 'ignore' });
  fresh.push(performance.now() - tp);
}
console.log(`npm run report -- --no-html, fresh process, end to end: ${fresh.map(ms).join(', ')} (median ${ms(median(fresh))}); ${load()}`);
console.log('\nthe table:\n');
console.log(last.text.split('\n== ')[0] + '\n== ' + last.text.split('\n== ')[1]);
console.log(last.text.slice(last.text.indexOf('by region')));
