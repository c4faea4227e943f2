// A stop drains: one SIGTERM or SIGINT to the process group of `npm run collector`, `npx h3probe collector` (this
// repository's bin, as npx runs it here) or `node web/bin/h3probe.mjs collector` stops the collector once, with every
// acknowledged beacon in ClickHouse (a real clickhouse-server, Debian's 18.16) after the exit; npm's forwarded copy of
// the signal does not force the exit. A stop that cannot reach ClickHouse says, in its last line, how many acknowledged
// beacons wait in which log file. (The signal rule itself, web/server/stopSignals.mjs, without ClickHouse or the build:
// stopSignals.test.mjs.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { clickhouseScratch } from '../../launch/clickhouse.mjs';
import { freePort } from '../../cli/ports.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { groupMembers } from '../../stack/supervise.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';

const BEACONS = 5000;
const scratch = clickhouseScratch('h3probe-stop-');
let server;

before(async () => {
  server = await scratch.fresh('stop');
});
after(() => scratch.cleanup());

/**
 * Starts the collector in a process group of its own (as a terminal or a supervisor starts it) by `how`; resolves
 * { pgid, port, closed (stdout and stderr closed: every process of the group that held them has exited), exit (the
 * started process's exit code), output() }.
 */
async function startCollectorBy(how, store) {
  const args = ['--store', store, '--port', '0', '--host', '127.0.0.1', '--rate-limit', '0'];
  const [cmd, argv] = {
    'npm run': ['npm', ['run', 'collector', '--', ...args]],
    npx: ['npx', ['h3probe', 'collector', ...args]],
    directly: [process.execPath, ['web/bin/h3probe.mjs', 'collector', ...args]],
  }[how];
  // Run directly, it sees no npm in its environment (this test may itself run under npm).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => how !== 'directly' || !k.startsWith('npm_')));
  const child = spawn(cmd, argv, { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const closed = Promise.all([child.stdout, child.stderr].map((s) => new Promise((r) => s.once('close', r))));
  const exit = new Promise((r) => child.once('exit', (code) => r(code)));
  const port = await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /"port":(\d+)/.exec(out);
      if (m) { clearInterval(timer); resolve(Number(m[1])); }
    }, 50);
    child.once('exit', () => { clearInterval(timer); reject(new Error(`${how} exited before listening: ${out}`)); });
  });
  return { pgid: child.pid, port, closed, exit, output: () => out };
}

/** Posts every body, 64 at a time on kept-alive connections; resolves to how many were answered 204. */
async function postAll(port, bodies) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const post = (body) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/beacon', agent,
      headers: { 'Content-Type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
  let acknowledged = 0;
  try {
    for (let i = 0; i < bodies.length; i += 256) {
      acknowledged += (await Promise.all(bodies.slice(i, i + 256).map(post))).filter((s) => s === 204).length;
    }
  } finally {
    agent.destroy();
  }
  return acknowledged;
}

const lines = (out) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
const runsIn = async (db) => Number((await (await fetch(`${server.url}/?query=${encodeURIComponent(`SELECT count() FROM ${db}.runs`)}`)).text()).trim());

describe(`one signal to the process group drains ${BEACONS} acknowledged beacons into ClickHouse`, { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  const bodies = [...syntheticBeacons({ runs: BEACONS, seed: 28 })].map(({ beacon }) => JSON.stringify(beacon));
  const cases = [['npm run', 'SIGTERM'], ['npm run', 'SIGINT'], ['npx', 'SIGTERM'], ['npx', 'SIGINT'], ['directly', 'SIGTERM'], ['directly', 'SIGINT']];
  for (const [how, signal] of cases) {
    test(`${how}, ${signal}: the collector drains once, exits 0, and all ${BEACONS} are in ClickHouse`, { timeout: 240_000 }, async () => {
      const db = `stop_${how.replace(' ', '_')}_${signal.toLowerCase()}`;
      const logFile = path.join(scratch.tmp, db);
      const c = await startCollectorBy(how, `clickhouse://127.0.0.1:${server.httpPort}/${db}?log=${encodeURIComponent(logFile)}`);
      try {
        assert.equal(await postAll(c.port, bodies), BEACONS);
        process.kill(-c.pgid, signal);
        await c.closed;
        const deadline = Date.now() + 30_000;
        while (groupMembers(c.pgid).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(groupMembers(c.pgid), [], `nothing of the group left running:\n${c.output()}`);
        const said = lines(c.output());
        assert.equal(said.filter((l) => l.draining).length, 1, c.output());
        assert.deepEqual(said.filter((l) => l.forced), [], c.output());
        const last = said.at(-1);
        assert.equal(last.stopped, 'drained', c.output());
        assert.equal(last.unshipped, undefined, c.output());
        assert.equal(last.metrics.accepted, BEACONS);
        assert.equal(await runsIn(db), BEACONS);
        // npm's own exit code follows its shell's, which the signal killed; the collector's is its own.
        if (how === 'directly') assert.equal(await c.exit, 0);
      } finally {
        for (const pid of groupMembers(c.pgid)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
    });
  }
});

test('a stop that cannot reach ClickHouse: its last line counts the acknowledged beacons left and names their log file; exit 1', async () => {
  const closedPort = await freePort();
  const logFile = path.join(scratch.tmp, 'unreachable');
  const c = await startCollectorBy('directly', `clickhouse://127.0.0.1:${closedPort}/away?log=${encodeURIComponent(logFile)}`);
  const some = [...syntheticBeacons({ runs: 30, seed: 5 })].map(({ beacon }) => JSON.stringify(beacon));
  assert.equal(await postAll(c.port, some), some.length);
  process.kill(-c.pgid, 'SIGTERM');
  await c.closed;
  const last = lines(c.output()).at(-1);
  assert.equal(last.stopped, 'drained', c.output());
  assert.equal(last.unshipped, some.length, c.output());
  assert.match(last.left, new RegExp(`^${some.length} acknowledged beacons are not in ClickHouse yet \\(.*unreachable.*\\): they wait in `));
  const inFiles = last.logFiles.map((f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length).reduce((a, b) => a + b, 0);
  assert.equal(inFiles, some.length);
  assert.equal(await c.exit, 1);
  assert.ok(last.logFiles.every((f) => f.startsWith(logFile)), last.logFiles.join(', '));
});
