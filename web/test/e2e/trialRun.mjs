// `h3probe trial` as a user runs it (a process of its own), and the counts its printed report gives: shared by
// trial.test.mjs (the bundled demo page) and package.test.mjs (pages built by the recipes from the installed package).
import { spawn } from 'node:child_process';

/**
 * Runs `command args` (e.g. node BIN trial …, or sh -c LINE) in cwd; onStdout and onStderr(text so far, child) are
 * called on each chunk of its output. Resolves to { code, signal, stdout, stderr }.
 */
export function runTrial(command, args, { cwd, env = process.env, onStderr = () => {}, onStdout = () => {}, timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`trial still running after ${timeoutMs} ms:\n${stderr}`)); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; onStdout(stdout, child); });
    child.stderr.on('data', (d) => { stderr += d; onStderr(stderr, child); });
    child.once('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr, pid: child.pid }); });
  });
}

/** The report's overall line: runs, and per arm its measured requests and the runs they came from (null: no such line). */
export function overallCounts(report) {
  const m = /^== overall: (\d+) runs(?: \([^)]*\))?, \d+ measured requests; used HTTP\/2 (\d+) \((\d+) runs\), HTTP\/3 (\d+) \((\d+) runs\)/m.exec(report);
  return m && { runs: Number(m[1]), h2: { requests: Number(m[2]), runs: Number(m[3]) }, h3: { requests: Number(m[4]), runs: Number(m[5]) } };
}
