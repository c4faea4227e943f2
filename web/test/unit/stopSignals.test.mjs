// The collector's stop-signal rule (web/server/stopSignals.mjs), in a child process of its own: the same signal again
// within the window is a copy, after it or another signal forces, stopNow() makes the next signal a copy; and the
// window docs/collector.md gives. Neither the WebAssembly build nor a server. (A stop that drains into ClickHouse:
// collectorStop.test.mjs.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { repoRoot } from '../../stack/paths.mjs';
import { COPY_MS } from '../../server/stopSignals.mjs';

const lines = (out) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

describe('the stop signals (stopSignals.mjs)', () => {
  // A child that reports each stop, copy and force on stdout, and exits 3 s after the first stop (no test waits that
  // long). Its argv: the window (copyMs), and --stop-now to begin with stopNow().
  const script = `
    import { onStopSignals } from ${JSON.stringify(path.join(repoRoot, 'web/server/stopSignals.mjs'))};
    const say = (what, x) => console.log(JSON.stringify({ [what]: x }));
    const hook = onStopSignals({ stop: (why) => { say('stop', why); setTimeout(() => process.exit(0), 3000); },
      force: (s) => { say('force', s); process.exit(1); }, onCopy: (s) => say('copy', s), copyMs: Number(process.argv[1]) });
    if (process.argv.includes('--stop-now')) hook.stopNow('parent exited');
    console.log('ready');
    setInterval(() => {}, 1000);`;
  function child(copyMs, args = []) {
    const p = spawn(process.execPath, ['--input-type=module', '-e', script, String(copyMs), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    let exited = false;
    const exit = new Promise((r) => p.once('exit', (code) => { exited = true; r(code); }));
    const said = () => lines(out);
    const until = async (done) => {
      while (!done()) {
        if (exited) throw new Error(`the child exited: ${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const ready = until(() => out.includes('ready'));
    const waitFor = (n) => until(() => said().length >= n);
    return { p, exit, ready, said, waitFor };
  }

  // Two signals sent back to back may reach the process as one (Linux does not queue a pending signal twice): each
  // test sends its second once the first is handled, and sets the window to tell a copy from a later signal.
  test(`the same signal again within the window (${COPY_MS} ms by default): one stop and one copy, no forced exit`, async () => {
    const c = child(600_000);
    await c.ready;
    c.p.kill('SIGTERM');
    await c.waitFor(1);
    c.p.kill('SIGTERM');
    await c.waitFor(2);
    c.p.kill('SIGKILL');
    await c.exit;
    assert.deepEqual(c.said().map((l) => Object.keys(l)[0]), ['stop', 'copy']);
    assert.equal(c.said()[0].stop, 'SIGTERM');
  });

  test('the same signal again after the window, or another signal at once, forces', async () => {
    const later = child(100);
    await later.ready;
    later.p.kill('SIGINT');
    await later.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    later.p.kill('SIGINT');
    assert.equal(await later.exit, 1);
    assert.deepEqual(later.said().map((l) => Object.keys(l)[0]), ['stop', 'force']);

    const other = child(600_000);
    await other.ready;
    other.p.kill('SIGINT');
    await other.waitFor(1);
    other.p.kill('SIGTERM');
    assert.equal(await other.exit, 1);
    assert.deepEqual(other.said().map((l) => Object.keys(l)[0]), ['stop', 'force']);
  });

  test('after stopNow() (the parent lost), the signal that came with it is a copy; stopNow() never forces', async () => {
    // A window far longer than the test: the copy is told by the rule, not by how fast this machine is.
    const c = child(600_000, ['--stop-now']);
    await c.ready;
    c.p.kill('SIGTERM');
    await c.waitFor(2);
    c.p.kill('SIGKILL');
    await c.exit;
    assert.deepEqual(c.said().map((l) => Object.entries(l)[0]), [['stop', 'parent exited'], ['copy', 'SIGTERM']]);
  });
});

test('docs/collector.md gives the window the code uses', () => {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'collector.md'), 'utf8');
  assert.match(doc, new RegExp(`same signal within ${COPY_MS / 1000} s of the first \\(\`COPY_MS\``));
});
