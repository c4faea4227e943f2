// What the docs state that the code defines, checked against it: the module's budgets (what `npm run size` checks), the
// package's budget (`npm pack --dry-run --json` within it, and no engineering record in it), and the report's list of
// groupings. The docs state budgets, not measured sizes: `npm run size` prints those. Runs after the build (the
// package's web/dist must be there to be packed).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { GROUP_BY } from '../../report/readReportData.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const read = (doc) => fs.readFileSync(path.join(repoRoot, doc), 'utf8');
const UNIT = { B: 1, KB: 1000, MB: 1e6 };
/** The figures a regex finds in a doc, in bytes: its first group the number (commas allowed), its second the unit (B if none). */
function figures(doc, re) {
  const found = [...read(doc).matchAll(new RegExp(re, 'g'))].map((m) => Number(m[1].replace(/,/g, '')) * UNIT[m[2] ?? 'B']);
  assert.ok(found.length > 0, `${doc}: nothing matches ${re}`);
  return found;
}

// `npm run size`, as printed: two sections, a page's esbuild rebundle and then web/dist; in each, per file its kind, raw
// and gzip bytes, and per budget its gzip bytes and maximum. `files` and `budgets` are web/dist's, `rebundle` the other.
const size = spawnSync('npm', ['run', '--silent', 'size'], { cwd: repoRoot, encoding: 'utf8' });
const [rebundleText, distText = ''] = size.stdout.split(/^web\/dist as served without a bundler$/m);
const filesOf = (text) => Object.fromEntries([...text.matchAll(/^\s+\w+\s+(\S+)\s+(\d+) B raw\s+(\d+) B gzip/gm)].map((m) => [m[1], { raw: Number(m[2]), gzip: Number(m[3]) }]));
const budgetsOf = (text) => Object.fromEntries([...text.matchAll(/^\s+(?:ok|OVER)\s+(\w+)\s+(\d+) B gzip of (\d+)/gm)].map((m) => [m[1], { gzip: Number(m[2]), max: Number(m[3]) }]));
const files = filesOf(distText);
const budgets = budgetsOf(distText);
const rebundle = { files: filesOf(rebundleText), budgets: budgetsOf(rebundleText) };

// `npm pack --dry-run --json`: the tarball's size, unpacked size and files (no prepack build: the unit suite runs after it).
const pack = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0];

test('npm run size and npm pack --dry-run --json printed what this test reads', () => {
  assert.deepEqual(Object.keys(files).sort(), ['h3probe.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm', 'run.js', 'worker.js'], size.stdout + size.stderr);
  assert.deepEqual(Object.keys(budgets).sort(), ['gate', 'total'], size.stdout);
  assert.deepEqual(Object.keys(rebundle.budgets).sort(), ['gate', 'total'], size.stdout);
  assert.ok(Object.keys(rebundle.files).some((f) => f.startsWith('run-')), `the rebundle's fallback chunk: ${size.stdout}`);
  assert.ok(pack.unpackedSize > 100_000 && pack.size > 10_000 && pack.entryCount === pack.files.length, JSON.stringify({ ...pack, files: pack.files.length }));
  assert.ok(pack.files.some((f) => f.path === 'web/dist/h3probe_browser.wasm'), 'the built module is packed');
});

test('the package is within the budget docs/release.md and the README state', () => {
  const [budget] = figures('docs/release.md', "The package's budget: at most ([\\d.]+) (MB) unpacked");
  assert.deepEqual(figures('README.md', 'At most ([\\d.]+) (MB) unpacked'), [budget]);
  assert.ok(pack.unpackedSize <= budget, `npm pack: ${pack.unpackedSize.toLocaleString('en')} bytes unpacked, the budget ${budget.toLocaleString('en')}`);
  // The engineering record (docs/record/) is for the project, not its users.
  assert.deepEqual(pack.files.filter((f) => f.path.startsWith('docs/record/')).map((f) => f.path), []);
  assert.ok(pack.files.some((f) => f.path === 'docs/embedding.md'), 'the user docs are packed');
});

test('every budget the docs give is the one npm run size checks', () => {
  const off = [];
  const stated = [
    ['docs/embedding.md', 'the gate ≤ ([\\d,]+) (B)\\s+gzip', budgets.gate.max],
    ['docs/embedding.md', 'all the files a page deploys ≤ ([\\d,]+) (B)', budgets.total.max],
    ['docs/design.md', 'the gate: ≤ ([\\d,]+) (B) gzip', budgets.gate.max],
    ['docs/design.md', 'module size, in total \\| ≤ ([\\d,]+) (B) gzip', budgets.total.max],
  ];
  for (const [doc, re, max] of stated) {
    for (const figure of figures(doc, re)) if (Math.round(figure) !== max) off.push(`${doc}: budget ${figure}, npm run size ${max}`);
  }
  assert.deepEqual(off, []);
});

test("the docs' lists of the report's groupings are the report's (GROUP_BY)", () => {
  const names = Object.keys(GROUP_BY).sort();
  const readme = /per group \(`--by region` by\s+default, or ([^)]*?), the client's/.exec(read('README.md'));
  assert.ok(readme, 'README.md lists the groupings');
  assert.deepEqual(['region', ...[...readme[1].matchAll(/`(\w+)`/g)].map((m) => m[1])].sort(), names);
  const flag = /\n\| `--by GROUPING` \|[^\n]*/.exec(read('docs/report.md'));
  assert.ok(flag, 'docs/report.md lists the groupings');
  assert.deepEqual([...flag[0].matchAll(/`(\w+)` \(/g), ...flag[0].matchAll(/: `(\w+)`,/g)].map((m) => m[1]).sort(), names);
});
