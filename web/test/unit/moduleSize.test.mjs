// The page module's size budgets (web/scripts/module_size.mjs) on the files the package ships (web/dist).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUDGETS, checkBudgets, measureModule } from '../../scripts/module_size.mjs';
import { distRoot } from '../../devstack/paths.mjs';

test('every budget holds: before the first search, after it, and in all', () => {
  const results = checkBudgets(measureModule());
  for (const r of results) assert.ok(r.ok, `${r.name}: ${r.gzip} B gzip, budget ${r.max} (${r.files.join(' + ')})`);
});

test('before the first search the page loads one file: the gate imports nothing statically', () => {
  assert.deepEqual(BUDGETS.beforeSearch.files, ['h3probe.js']);
  const gate = fs.readFileSync(path.join(distRoot, 'h3probe.js'), 'utf8');
  assert.doesNotMatch(gate, /^import\b|[;}]import\s*[{*"'\w]/m, 'no static import in the gate');
  assert.match(gate, /import\(["']\.\/run\.js["']\)/, 'the run is imported lazily');
});
