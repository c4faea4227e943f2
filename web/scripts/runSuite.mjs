// One test suite as a child process for `npm test` (web/scripts/test.mjs): its output echoed line by line and kept, a
// time limit that ends the whole process tree, and what the tree was doing when it did not end.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SUITE_TIMEOUT_MS = 25 * 60_000; // the longest suite (end-to-end) takes about 6 minutes

// Runs one suite in a process group of its own, so that a time limit ends the whole tree: killing `npm run` does not end
// its child, which would live on holding stdout open, and the run would wait for it forever. Past the limit, it first
// says what every process of the group was doing (state, CPU time, kernel wait channel) and, for Node processes, what
// they were waiting for (a diagnostic report on SIGUSR2: open handles) or where their JavaScript was running (the stack
// printed on SIGINT under --trace-sigint). Processes a suite leaves behind are named, then ended.
/**
 * Resolves to {code (exit code, 'signal S' or 'timeout after N min'), out (stdout), seconds, notes (the text printed
 * about a timeout or processes left behind)}. echo(line): whether to print a line of stdout as it comes (stderr is passed
 * through). log(text): where the notes are printed.
 */
export function runSuite({ cmd, args, env: extra = {}, echo = () => true, timeoutMs = SUITE_TIMEOUT_MS, log = console.log }) {
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-test-reports-'));
  const nodeOptions = `--report-on-signal --report-signal=SIGUSR2 --report-directory=${reports} --trace-sigint`;
  const env = { ...process.env, ...extra, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${nodeOptions}`.trim() };
  const notes = [];
  const note = (text) => {
    notes.push(text);
    log(text);
  };
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    let diagnosing = false;
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      if (diagnosing) notes.push(String(chunk));
    });
    let out = '';
    let pending = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop();
      for (const line of lines) if (echo(line)) process.stdout.write(`${line}\n`);
    });
    let diagnosed = null;
    const timer = setTimeout(() => {
      diagnosed = (async () => {
        const processes = groupProcesses(child.pid);
        note(`\n--- ${cmd} ${args.join(' ')}: no end after ${formatLimit(timeoutMs)}; its processes (pid, state, CPU time, ` +
          `elapsed, wait channel, command):\n${processes.map((p) => `  ${p.line}`).join('\n')}`);
        const nodes = processes.filter((p) => /\bnode\b/.test(p.command));
        for (const p of nodes) signal(p.pid, 'SIGUSR2'); // answered by a process whose event loop turns
        await new Promise((r) => setTimeout(r, 2000));
        for (const file of fs.readdirSync(reports)) note(summarizeNodeReport(path.join(reports, file)));
        diagnosing = true;
        for (const p of nodes) signal(p.pid, 'SIGINT'); // a busy one prints its stack on stderr
        await new Promise((r) => setTimeout(r, 1000));
        signal(-child.pid, 'SIGKILL');
      })();
    }, timeoutMs);
    const exited = new Promise((done) => child.on('exit', (code, sig) => {
      // A grandchild that outlives the suite keeps stdout open: stop waiting for it after a while.
      setTimeout(() => child.stdout.destroy(), 10_000).unref();
      done(sig ? `signal ${sig}` : code);
    }));
    const closed = new Promise((done) => child.stdout.on('close', done));
    Promise.all([exited, closed]).then(async ([exit]) => {
      clearTimeout(timer);
      if (diagnosed) await diagnosed;
      if (pending && echo(pending)) process.stdout.write(`${pending}\n`);
      const left = groupProcesses(child.pid);
      if (left.length) {
        note(`--- left running by ${cmd} ${args.join(' ')}, now ended:\n${left.map((p) => `  ${p.line}`).join('\n')}`);
        signal(-child.pid, 'SIGKILL');
      }
      fs.rmSync(reports, { recursive: true, force: true });
      resolve({ code: diagnosed ? `timeout after ${formatLimit(timeoutMs)}` : exit, out, seconds: (performance.now() - t0) / 1000, notes });
    });
  });
}

// The live processes of process group pgid (zombies have ended): {pid, command, line: "pid state cpu-time elapsed
// wait-channel command"}.
function groupProcesses(pgid) {
  const ps = spawnSync('ps', ['-e', '-o', 'pgid=,pid=,stat=,time=,etime=,wchan:24=,args='], { encoding: 'utf8' });
  return (ps.stdout ?? '').split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f[0] === String(pgid) && !f[2]?.startsWith('Z'))
    .map((f) => ({ pid: Number(f[1]), command: f.slice(6).join(' '), line: f.slice(1).join(' ').slice(0, 300) }));
}

// pid < 0: the process group -pid.
function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // the group is already gone
  }
}

// The parts of a Node diagnostic report (process.report) that say where a process is stuck.
function summarizeNodeReport(file) {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    const counts = new Map();
    for (const h of r.libuv ?? []) if (h.is_active) counts.set(h.type, (counts.get(h.type) ?? 0) + 1);
    return [`  node ${r.header?.processId} ${(r.header?.commandLine ?? []).join(' ').slice(0, 200)}`,
      `    JavaScript stack: ${r.javascriptStack?.message ?? ''}`,
      ...(r.javascriptStack?.stack ?? []).slice(0, 15).map((f) => `      ${f}`),
      `    active handles: ${[...counts].map(([type, n]) => `${type} ${n}`).join(', ') || 'none'}`].join('\n');
  } catch (error) {
    return `  ${file}: ${error.message}`;
  }
}

const formatLimit = (ms) => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);
