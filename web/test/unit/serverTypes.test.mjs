// web/server/index.d.ts against web/server/index.mjs (the package's `h3probe/server` entry): the same exports.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

test('h3probe/server: index.d.ts declares every export of index.mjs, and nothing it does not export', async () => {
  const module = await import('../../server/index.mjs');
  const exported = Object.keys(module).sort();
  const dts = fs.readFileSync(new URL('../../server/index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:async )?(?:function|const|let) (\w+)/gm)].map((m) => m[1]));
  for (const m of dts.matchAll(/^export \{ ([^}]+) \} from/gm)) for (const name of m[1].split(',')) declared.add(name.trim());
  assert.ok(exported.includes('startCollector') && exported.includes('openStore'));
  assert.deepEqual([...declared].sort(), exported);
});

test('package.json: the entry points exist and the server parts need no dependency of a page-only install', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.license, 'MIT');
  assert.ok(fs.existsSync(new URL('../../../LICENSE', import.meta.url)));
  assert.deepEqual(pkg.dependencies ?? {}, {}, 'a page-only install pulls nothing');
  for (const name of Object.keys(pkg.peerDependencies)) assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, name);
  for (const target of ['./server']) {
    for (const file of Object.values(pkg.exports[target])) assert.ok(fs.existsSync(new URL(`../../../${file}`, import.meta.url)), file);
  }
  assert.ok(fs.existsSync(new URL(`../../../${pkg.exports['.'].types}`, import.meta.url)));
});

test('index.d.ts: the report groupings are exactly GROUP_BY of the report code', async () => {
  const { GROUP_BY } = await import('../../report/readReportData.mjs');
  const dts = fs.readFileSync(new URL('../../server/index.d.ts', import.meta.url), 'utf8');
  const union = /^\s*by\?: ([^;]+);/m.exec(dts)[1].split('|').map((s) => s.trim().replace(/'/g, ''));
  assert.deepEqual(union, Object.keys(GROUP_BY));
});
