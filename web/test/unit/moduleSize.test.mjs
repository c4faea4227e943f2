// The page module's size budgets (web/scripts/module_size.mjs): on the files the package ships (web/dist), and on what
// a page's own esbuild bundle makes of them; and the one request a page makes before its first search.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUDGETS, checkBudgets, COPIED, GATE, measureDist, measureRebundle } from '../../scripts/module_size.mjs';
import { distRoot } from '../../stack/paths.mjs';

test('every budget holds: the gate, and all a page deploys, as web/dist serves it and as a page\'s esbuild bundle gives it', async () => {
  for (const [how, files] of [['web/dist', measureDist()], ['esbuild rebundle', await measureRebundle()]]) {
    const results = checkBudgets(files);
    assert.deepEqual(results.map((r) => r.name), Object.keys(BUDGETS));
    for (const r of results) assert.ok(r.ok, `${how}: ${r.name} ${r.gzip} B gzip, budget ${r.max}`);
  }
});

test('the rebundle counts every file a page deploys: its gate, the chunks esbuild split off, and the copied files', async () => {
  const files = await measureRebundle();
  assert.deepEqual(files.filter((f) => f.kind === 'gate').length, 1);
  assert.deepEqual(files.filter((f) => f.kind === 'copied').map((f) => f.file), [...COPIED]);
  // The main-thread fallback is a chunk of its own, and the core's code is not in it: run.js imports the copied
  // worker.js by URL rather than have a bundler inline a second copy.
  const chunks = files.filter((f) => f.kind === 'chunk');
  assert.equal(chunks.length, 1, chunks.map((f) => f.file).join(' '));
  assert.ok(chunks[0].gzip < 1024, `the fallback chunk: ${chunks[0].gzip} B gzip`);
  assert.equal(checkBudgets(files)[1].gzip, files.reduce((sum, f) => sum + f.gzip, 0));
});

test('before the first search the page loads one file: the gate imports nothing statically', async () => {
  const gate = fs.readFileSync(path.join(distRoot, GATE), 'utf8');
  assert.doesNotMatch(gate, /^import\b|[;}]import\s*[{*"'\w]/m, 'no static import in the gate');
  assert.equal((await measureRebundle()).find((f) => f.kind === 'gate').staticImports, 0, 'nor in a page\'s esbuild bundle');
  // It starts the worker itself, written so that bundlers follow it, and imports the main-thread run only to fall back.
  assert.match(gate, /new Worker\(new URL\("\.\/worker\.js",import\.meta\.url\),\{type:"module"\}\)/);
  assert.match(gate, /import\(["']\.\/run\.js["']\)/, 'the fallback is imported lazily');
});
