// npm test's suite runner (web/scripts/runSuite.mjs): a suite that does not end within its limit is ended with every
// process it started, even one behind `npm run` (which does not pass its death on), after saying what each Node process
// was doing; a suite that ends but leaves a process holding its output open does not hold the run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { runSuite } from '../../scripts/runSuite.mjs';

const alive = (pid) => spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim().replace(/^Z.*/, '');

const dirs = [];
after(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

// A package whose script starts a Node process that never ends: the shape of `npm run --silent bench:x -- --tiny`.
function hangingPackage(script) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-runsuite-'));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'hang.mjs'), script);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'hang', version: '1.0.0', scripts: { hang: 'node hang.mjs' } }));
  return dir;
}

test('a hung Node process behind npm run: ended at the limit, its JavaScript stack printed first', async () => {
  const dir = hangingPackage(`console.log('pid', process.pid);
function waitForever() { setInterval(() => {}, 1000); const t = Date.now(); while (Date.now() - t < 600_000); }
waitForever();
`);
  const t0 = performance.now();
  const r = await runSuite({ cmd: 'npm', args: ['--prefix', dir, 'run', '--silent', 'hang'], echo: () => false, log: () => {}, timeoutMs: 4000 });
  assert.equal(r.code, 'timeout after 4 s');
  assert.ok(performance.now() - t0 < 30_000, 'the run did not wait for the hung process');
  const pid = Number(r.out.match(/pid (\d+)/)?.[1]);
  assert.ok(pid > 0, r.out);
  assert.equal(alive(pid), '', `process ${pid} still running`);
  const text = r.notes.join('\n');
  assert.match(text, /no end after 4 s/);
  assert.match(text, new RegExp(`^  ${pid} R`, 'm'), 'the busy process is listed as running');
  assert.match(text, /interrupted by `SIGINT`\s+at waitForever/, 'the busy process\'s stack names the function it was in');
  assert.match(text, /node \d+ .*npm[^]*active handles: /, 'the waiting npm process\'s diagnostic report lists its handles');
});

test('a suite that ends but leaves a process holding its output: the run goes on, the process is named and ended', async () => {
  const dir = hangingPackage(`import { spawn } from 'node:child_process';
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'inherit', 'inherit'] });
console.log('pid', child.pid);
child.unref();
`);
  const r = await runSuite({ cmd: 'npm', args: ['--prefix', dir, 'run', '--silent', 'hang'], echo: () => false, log: () => {}, timeoutMs: 60_000 });
  assert.equal(r.code, 0);
  const pid = Number(r.out.match(/pid (\d+)/)?.[1]);
  assert.ok(r.seconds < 30, `waited ${r.seconds} s`);
  assert.match(r.notes.join('\n'), new RegExp(`left running[^]*\\b${pid}\\b`));
  assert.equal(alive(pid), '', `process ${pid} still running`);
});
