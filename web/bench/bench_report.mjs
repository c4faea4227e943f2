// `npm run bench:report -- [--runs N] [--seed S] [--method delta|bootstrap] [--repeat K] [--beside COMMIT] [--tiny]`: the
// report at Dropbox scale, on a database written the way the collector writes one. Writes (or reuses) N synthetic runs ×
// (5 + 5) measured requests + 3 pre-warm requests each, every beacon's text through the C++ decoder and the store's
// group commit (default 420,000 runs: 4.2 M measured requests, 300k/day over 14 days); prints the database's bytes per
// run; then times the report in this process step by step, and as `h3probe report` in a fresh process, the text
// alone and with the HTML and JSON files. Budgets (docs/design.md): ≤ 1 s in process and ≤ 1.5 s fresh for the text,
// ≤ 2.5 s fresh with HTML and JSON. --beside COMMIT measures that commit of this repository in the same run
// (besideTree.mjs: its files and its Node core built under .h3probe/beside), each version on a database its own
// collector code wrote, alternating the two so that both meet the same load; every figure with the load average.
// And the collector's live report on the same database (`h3probe collector --report-token-file`), in each round right
// after the fresh CLI runs: its first /report, wall and the process's CPU, against the fresh CLI's with HTML and JSON
// (budget: median + 10 %), /healthz meanwhile (the beacons' event loop), and in the last round the cached answers'
// p50/p99 (budget ≤ 50 ms).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, stateDir } from '../stack/paths.mjs';
import { besideTree } from './besideTree.mjs';
import { writeSyntheticDb } from '../synthetic/syntheticBeacons.mjs';
import { quantile } from './stats.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { openStore } from '../server/store.mjs';
import { makeReport } from '../report/makeReport.mjs';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '420000' },
    seed: { type: 'string', default: '1' },
    method: { type: 'string', default: 'delta' },
    repeat: { type: 'string', default: '5' },
    beside: { type: 'string' },
    served: { type: 'string', default: '200' }, // cached /report requests timed
    tiny: { type: 'boolean', default: false }, // npm test: the same path at 2,000 runs
  },
});
if (args.tiny) Object.assign(args, { runs: '2000', repeat: '2', served: '10' });
const runs = Number(args.runs);
const repeat = Math.max(1, Number(args.repeat));
const ms = (v) => `${Math.round(v)} ms`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => `load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;

fs.mkdirSync(stateDir, { recursive: true });
const dbName = `bench-report-${runs}-s${args.seed}.sqlite`;
const dbPath = path.join(stateDir, dbName);
console.log(`database: ${dbPath}`);
const core = await loadH3probeNode();
const gen = await writeSyntheticDb(dbPath, core, { runs, seed: Number(args.seed) });
const bytes = fs.statSync(dbPath).size;
const store = openStore(dbPath, core, { readOnly: true });
const tableBytes = Object.fromEntries(['runs', 'run_records', 'arm_values', 'run_records_mode', 'sqlite_autoindex_runs_1'].map((name) => {
  try {
    return [name, store.db.prepare('SELECT sum(pgsize) FROM dbstat WHERE name = ?').pluck().get(name)];
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
  last = await makeReport(core, { db: store.db, method: args.method });
  const total = performance.now() - t;
  totals.push(total);
  const { read, stats, format } = last.timings;
  console.log(`report (table) #${i}: ${ms(total)} = SQLite read (one pass: groups, values, cold-setup records) ${ms(read)} + ` +
    `C++ counts and statistics (with the connection-setup view) ${ms(stats)} + text ${ms(format)}`);
}
console.log(`in process: median ${ms(median(totals))} of ${repeat} (the first includes WASM compilation of the hot code); ${load()}`);
const th = performance.now();
const withFiles = await makeReport(core, { db: store.db, method: args.method, htmlPath: path.join(stateDir, 'bench-report.html'),
  jsonPath: path.join(stateDir, 'bench-report.json') });
console.log(`in process with HTML and JSON (CDF points, daily series and its looks from the same pass): ${ms(performance.now() - th)} ` +
  `(files ${ms(withFiles.timings.html)})`);
store.close();

// The versions measured: this tree, and with --beside the other commit's on a database its own code wrote.
const versions = [{ name: 'this tree', dir: repoRoot, db: dbPath }];
if (args.beside) {
  const { dir, commit } = besideTree(args.beside, { log: console.log });
  const db = path.join(dir, dbName);
  // Its own collector code writes its database (reused when complete, as here).
  const t0 = performance.now();
  execFileSync(process.execPath, ['--input-type=module', '-e', `
    const { loadH3probeNode } = await import(${JSON.stringify(path.join(dir, 'web/server/h3probeNode.mjs'))});
    const { writeSyntheticDb } = await import(${JSON.stringify(path.join(dir, 'web/synthetic/syntheticBeacons.mjs'))});
    await writeSyntheticDb(${JSON.stringify(db)}, await loadH3probeNode(), { runs: ${runs}, seed: ${Number(args.seed)} });`], { stdio: 'inherit' });
  console.log(`beside: ${commit.slice(0, 12)} (${dir}), its database ${db} ready in ${ms(performance.now() - t0)}, ` +
    `${(fs.statSync(db).size / 2 ** 20).toFixed(0)} MiB`);
  versions.push({ name: commit.slice(0, 12), dir, db });
}

// A version's report in a fresh process, as a user runs it: the text only, or with the HTML and JSON files. Its wall
// time, and its CPU time (user and system, as /usr/bin/time reads them): on a shared machine the wall time is mostly
// waiting for a core, the CPU time is the work.
function fresh(version, files) {
  const out = path.join(stateDir, `bench-report-fresh-${versions.indexOf(version)}`);
  const extra = files ? ['--html', `${out}.html`, '--json', `${out}.json`] : ['--no-html'];
  const t = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, path.join(version.dir, 'web/bin/h3probe.mjs'), 'report',
    '--db', version.db, '--method', args.method, ...extra], { encoding: 'utf8' });
  const wall = performance.now() - t;
  if (run.status !== 0) throw new Error(`${version.name}: h3probe report failed: ${run.stderr}`);
  const [, user, system] = run.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wall, cpu: 1000 * (user + system) };
}
// A version's report made `repeat` times in one fresh process (its makeReport, from its own tree): the median.
function inProcess(version) {
  const script = `const { loadH3probeNode } = await import(${JSON.stringify(path.join(version.dir, 'web/server/h3probeNode.mjs'))});
    const { makeReport } = await import(${JSON.stringify(path.join(version.dir, 'web/report/makeReport.mjs'))});
    const core = await loadH3probeNode();
    const times = [];
    for (let i = 0; i < ${repeat}; i++) {
      const t = performance.now();
      const c = process.cpuUsage();
      await makeReport(core, { dbPath: ${JSON.stringify(version.db)}, method: ${JSON.stringify(args.method)} });
      const d = process.cpuUsage(c);
      times.push({ wall: performance.now() - t, cpu: (d.user + d.system) / 1000 });
    }
    console.log(JSON.stringify(times));`;
  const times = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  return { wall: median(times.map((x) => x.wall)), cpu: median(times.map((x) => x.cpu)) };
}

// Alternating: version A, then B, then A again, so that both meet the same load.
const rounds = args.tiny ? 1 : 3;
const figures = versions.map(() => ({ text: [], files: [], inProcess: [] }));
const served = [];
for (let r = 0; r < rounds; r++) {
  for (const [i, v] of versions.entries()) {
    figures[i].text.push(fresh(v, false));
    figures[i].files.push(fresh(v, true));
    figures[i].inProcess.push(inProcess(v));
  }
  served.push(await servedOnce(r === rounds - 1 ? Number(args.served) : 0));
  console.log(`round ${r + 1} of ${rounds}: ${load()}`);
}
const both = (runs) => `${runs.map((r) => `${ms(r.wall)} (cpu ${ms(r.cpu)})`).join(', ')}; median ${ms(median(runs.map((r) => r.wall)))}, ` +
  `cpu ${ms(median(runs.map((r) => r.cpu)))}`;
for (const [i, v] of versions.entries()) {
  const f = figures[i];
  console.log(`${v.name}: fresh \`h3probe report --no-html\` ${both(f.text)}; with --html and --json ${both(f.files)}; ` +
    `in process, median of ${repeat} per round: ${both(f.inProcess)}`);
}
console.log(`budgets: in process ≤ 1,000 ms, fresh text ≤ 1,500 ms, fresh with HTML and JSON ≤ 2,500 ms; ${load()}`);
printServed(served, figures[0].files);
console.log('\nthe table:\n');
console.log(last.text.split('\n== ')[0] + '\n== ' + last.text.split('\n== ')[1]);
console.log(last.text.slice(last.text.indexOf('by region')));

// One GET on its own connection: {status, bytes, ms}.
function get(port, p, headers = {}) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = http.request({ host: '127.0.0.1', port, path: p, headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c) => { bytes += c.length; });
      res.on('end', () => resolve({ status: res.statusCode, bytes, ms: performance.now() - t }));
    });
    req.on('error', reject);
    req.end();
  });
}

// CPU time of a process so far, in ms (utime + stime of /proc/PID/stat, all its threads, in clock ticks).
function processCpuMs(pid) {
  processCpuMs.ticks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number);
  return (1000 * (utime + stime)) / processCpuMs.ticks;
}

// This tree's collector on the benchmark's database, in a fresh process: the first /report, sent as it starts (its
// report thread still loading the core), with /healthz probed meanwhile and the process's CPU until the answer (its
// start included, as the fresh CLI's is); then, the thread warm, a query not yet made (since 2000: the same runs,
// another cache entry); then `cached` cached answers.
async function servedOnce(cached) {
  const tokenFile = path.join(stateDir, 'bench-report-token');
  fs.writeFileSync(tokenFile, `bench-${process.pid}-${Date.now()}-token\n`, { mode: 0o600 });
  const auth = { Authorization: `Bearer ${fs.readFileSync(tokenFile, 'utf8').trim()}` };
  const child = spawn(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'collector', '--db', dbPath, '--port', '0',
    '--report-token-file', tokenFile, '--report-max-age', '3600', '--report-rate-limit', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('"listening"'));
        if (line) resolve(JSON.parse(line).port);
      });
      child.once('exit', (code) => reject(new Error(`h3probe collector exited ${code}`)));
    });
    const whileMade = async (query) => {
      const health = [];
      let making = true;
      const probe = (async () => {
        while (making) {
          health.push((await get(port, '/healthz')).ms);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const cpuBefore = processCpuMs(child.pid);
      const r = await get(port, `/report${query}`, auth);
      const cpu = processCpuMs(child.pid);
      making = false;
      await probe;
      if (r.status !== 200) throw new Error(`/report${query} answered ${r.status}`);
      return { ...r, cpu, cpuDelta: cpu - cpuBefore, health };
    };
    const first = await whileMade('');
    const warm = await whileMade('?since=2000-01-01');
    const times = [];
    for (let i = 0; i < cached; i++) {
      const r = await get(port, '/report', auth);
      if (r.status !== 200) throw new Error(`/report answered ${r.status}`);
      times.push(r.ms);
    }
    const jsonBytes = cached ? (await get(port, '/report.json', auth)).bytes : 0;
    return { first, warm, cached: times, jsonBytes };
  } finally {
    await new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); });
    fs.rmSync(tokenFile, { force: true });
  }
}

// The rounds' live reports against the fresh CLI's runs with HTML and JSON of the same rounds: the budget reads medians.
function printServed(rounds, cli) {
  const cliMs = median(cli.map((r) => r.wall));
  const med = (pick) => median(rounds.map(pick));
  const health = (r) => `/healthz meanwhile ${r.health.length} answers, median ${ms(quantile(r.health, 0.5))}, max ${ms(Math.max(...r.health))}`;
  rounds.forEach((r, i) => console.log(`served, round ${i + 1}: first /report ${ms(r.first.ms)} (cpu ${ms(r.first.cpuDelta)}, ${ms(r.first.cpu)} from the process's start; ` +
    `${health(r.first)}); a query not made yet ${ms(r.warm.ms)} (cpu ${ms(r.warm.cpuDelta)}; ${health(r.warm)})`));
  const first = med((r) => r.first.ms);
  const warm = med((r) => r.warm.ms);
  const within = (x) => (x <= cliMs * 1.1 ? 'within' : 'NOT within');
  const { cached, first: page, jsonBytes } = rounds.at(-1);
  console.log(`served (h3probe collector --report-token-file, a fresh process each round), median of ${rounds.length}: first /report ` +
    `${ms(first)} (cpu ${ms(med((r) => r.first.cpuDelta))}, ${ms(med((r) => r.first.cpu))} from the process's start), ${within(first)} the fresh CLI's with --html and --json + 10 % ` +
    `(median ${ms(cliMs)}, cpu ${ms(median(cli.map((r) => r.cpu)))}); a query not made yet, the collector warm, ${ms(warm)} ` +
    `(cpu ${ms(med((r) => r.warm.cpuDelta))}), ${within(warm)}; ${(page.bytes / 1024).toFixed(0)} KiB (/report.json ` +
    `${(jsonBytes / 1024).toFixed(0)} KiB); cached /report over ${cached.length} requests: p50 ${ms(quantile(cached, 0.5))}, ` +
    `p99 ${ms(quantile(cached, 0.99))}, max ${ms(Math.max(...cached))} (budget ≤ 50 ms); ${load()}`);
}
