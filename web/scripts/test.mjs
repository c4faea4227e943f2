// `npm test`: every test suite in turn (doctest host tests via ctest, a short libFuzzer run of each fuzz target, Node
// unit tests, Chromium, Firefox and WebKitGTK end-to-end tests), then one closing line with the totals.
import { spawn } from 'node:child_process';

const suites = [
  { name: 'host (doctest via ctest)', cmd: 'ctest', args: ['--test-dir', 'build/native', '--output-on-failure'], parse: parseCtest },
  // Each target one test: it passes if a bounded run (seconds per target) finds no crash and no broken invariant.
  { name: 'fuzz (libFuzzer, 15 s per target)', cmd: 'bash', args: ['web/scripts/fuzz.sh', '15'], parse: parseFuzz },
  { name: 'unit (node --test)', cmd: process.execPath, args: ['--test', '--test-reporter=tap', '--test-concurrency=1', 'web/test/unit/'], parse: parseTap },
  {
    name: 'end-to-end (Chromium, Firefox, WebKitGTK + Caddy + SQLite)', cmd: process.execPath,
    args: ['--test', '--test-reporter=tap', '--test-concurrency=1', 'web/test/e2e/'], parse: parseTap,
  },
];

function parseCtest(out) {
  const m = out.match(/tests passed, (\d+) tests failed out of (\d+)/);
  return m ? { passed: Number(m[2]) - Number(m[1]), failed: Number(m[1]) } : null;
}

function parseFuzz(out) {
  const m = out.match(/^fuzz: (\d+) passed, (\d+) failed$/m);
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : null;
}

function parseTap(out) {
  const pass = out.match(/^# pass (\d+)$/m);
  const fail = out.match(/^# fail (\d+)$/m);
  return pass && fail ? { passed: Number(pass[1]), failed: Number(fail[1]) } : null;
}

function run({ cmd, args }) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on('close', (code) => resolve({ code, out }));
  });
}

let passed = 0;
let failed = 0;
const lines = [];
for (const suite of suites) {
  console.log(`\n=== ${suite.name} ===`);
  const { code, out } = await run(suite);
  const counts = suite.parse(out);
  if (!counts) {
    failed += 1; // a suite that did not report is a failure, not zero tests
    lines.push(`${suite.name}: no result (exit ${code})`);
    continue;
  }
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  passed += counts.passed;
  failed += counts.failed;
  lines.push(`${suite.name}: ${counts.passed} passed, ${counts.failed} failed`);
}
console.log(`\n${lines.join('\n')}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
