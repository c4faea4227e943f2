// web/server/index.d.ts against web/server/index.mjs (the package's `h3probe/server` entry): the same exports.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

test('tsc --strict: a fresh project without @types/node compiles against h3probe/server, and a Node project too', () => {
  const repo = fileURLToPath(new URL('../../..', import.meta.url));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-server-types-'));
  try {
    fs.mkdirSync(path.join(tmp, 'node_modules'));
    fs.symlinkSync(repo, path.join(tmp, 'node_modules', 'h3probe'), 'dir');
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }));
    fs.writeFileSync(path.join(tmp, 'server.ts'), `import { loadH3probeNode, openStore, startCollector, makeReport, createClientLocator,
  parseTrustedProxies, originsCaddyfile, type Store } from 'h3probe/server';
export async function serve(): Promise<number> {
  const core = await loadH3probeNode();
  const store: Store = openStore('beacons.sqlite', core);
  const collector = await startCollector({ store, core, location: { trustedProxies: ['10.0.0.0/8'] } });
  const locate = createClientLocator({ countryHeaders: ['cf-ipcountry'] });
  const where: { country: string | null; region: string } = locate({ headers: { 'cf-ipcountry': 'DE' }, socket: { remoteAddress: '10.0.0.1' } });
  const trusted: boolean = parseTrustedProxies('10.0.0.0/8').check('10.1.2.3', 'ipv4');
  const lines: string[] = [];
  await store.exportNdjson({ write: (chunk: string) => lines.push(chunk) > 0, once: () => undefined });
  const { text } = await makeReport(core, { dbPath: 'beacons.sqlite', htmlPath: null });
  return collector.port + text.length + where.region.length + Number(trusted) + originsCaddyfile({ h3: 'h3.example.com', only: 'h3' }).length;
}
`);
    const tsc = (types) => {
      fs.writeFileSync(path.join(tmp, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'],
          types, typeRoots: [path.join(repo, 'node_modules', '@types')] },
        files: ['server.ts'],
      }));
      return spawnSync(path.join(repo, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: tmp, encoding: 'utf8' });
    };
    const bare = tsc([]);
    assert.equal(bare.status, 0, `without @types/node:\n${bare.stdout}${bare.stderr}`);
    // With @types/node, Node's own objects fit where the types name a few members: a file stream, an IncomingMessage.
    fs.appendFileSync(path.join(tmp, 'server.ts'), `import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
export async function nodeObjects(store: Store, req: IncomingMessage): Promise<string> {
  await store.exportNdjson(fs.createWriteStream('runs.ndjson'));
  return createClientLocator()(req).region;
}
`);
    const withNode = tsc(['node']);
    assert.equal(withNode.status, 0, `with @types/node:\n${withNode.stdout}${withNode.stderr}`);
    // And a mistake is caught: a store option that does not exist.
    fs.appendFileSync(path.join(tmp, 'server.ts'), "export const bad = () => startCollector({ stor: null });\n");
    assert.notEqual(tsc([]).status, 0);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
