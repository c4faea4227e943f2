// What docs/architecture.md says of the JavaScript's dependencies, checked on every import (static or dynamic, with a
// literal path): production code (web/src, web/server, web/report, web/cli, web/stack, web/bin) imports only what the
// package ships (never web/bench, web/launch, lab or web/test), the page's module (web/src) imports nothing outside itself, and the store (store.mjs, clickhouseStore.mjs,
// storeSpec.mjs and what they import) never imports the report.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../stack/paths.mjs';

const PRODUCTION = ['web/src', 'web/server', 'web/report', 'web/cli', 'web/stack', 'web/bin'];
// The folders and files package.json's "files" ships, and web/src, which ships bundled into web/dist.
const SHIPPED = ['web/src', ...JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).files
  .filter((f) => f.startsWith('web/')).map((f) => f.replace(/\/$/, ''))];

/** [{file, target}] for every relative import of the files under dir, target relative to the repository. */
function importsUnder(dir) {
  const out = [];
  for (const name of fs.readdirSync(path.join(repoRoot, dir), { recursive: true })) {
    if (!/\.m?js$/.test(name)) continue;
    const file = path.join(dir, name);
    const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm)) {
      out.push({ file, target: path.relative(repoRoot, path.resolve(repoRoot, path.dirname(file), m[2])) });
    }
  }
  return out;
}

test('production code imports only what the package ships, never the dev stack or the tests', () => {
  assert.deepEqual(PRODUCTION.filter((dir) => !SHIPPED.includes(dir)), [], 'every production folder is shipped');
  const all = PRODUCTION.flatMap(importsUnder);
  assert.ok(all.length > 50, `${all.length} imports found`);
  assert.ok(all.some((i) => i.file.startsWith('web/cli/doctor') && i.target === 'web/cli/browsers.mjs'), 'dynamic imports are read');
  const bad = all.filter((i) => !SHIPPED.some((s) => i.target === s || i.target.startsWith(`${s}/`)))
    .map((i) => `${i.file} imports ${i.target}`);
  assert.deepEqual(bad, []);
});

test('the page module imports only itself, and the store (with all it imports) never the report', () => {
  const outside = importsUnder('web/src').filter((i) => !i.target.startsWith('web/src/')).map((i) => `${i.file} imports ${i.target}`);
  assert.deepEqual(outside, []);
  const server = importsUnder('web/server');
  const store = new Set(['web/server/store.mjs', 'web/server/clickhouseStore.mjs', 'web/server/storeSpec.mjs']);
  for (let grew = true; grew;) {
    grew = false;
    for (const i of server) if (store.has(i.file) && !store.has(i.target)) { store.add(i.target); grew = true; }
  }
  assert.ok(store.has('web/server/beaconLog.mjs'), [...store].join(', '));
  assert.deepEqual([...store].filter((f) => !f.startsWith('web/server/')), []);
});

test('only tests import the tests: the benchmarks, scripts, launchers and the lab take shared data from web/synthetic', () => {
  const outside = ['web/scripts', 'web/bench', 'web/launch', 'web/stack', 'lab'].flatMap(importsUnder)
    .filter((i) => !i.file.startsWith('lab/test/'));
  assert.ok(outside.some((i) => i.target === 'web/synthetic/syntheticBeacons.mjs'), 'the benchmarks\' imports are read');
  assert.deepEqual(outside.filter((i) => /^(web|lab)\/test\//.test(i.target)).map((i) => `${i.file} imports ${i.target}`), []);
});
