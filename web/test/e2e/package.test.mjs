// The package as a web team adopts it: `npm pack` → install the tarball in a fresh project → bundle a page with
// esbuild (ESM with code splitting, and an IIFE) and with Vite → one complete run of each in Chromium against the
// local stack (real Caddy serving HTTP/2 and HTTP/3, the real collector and SQLite). Also: what a page-only install
// weighs, and that the package's types check under tsc --strict.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build as esbuild } from 'esbuild';
import { build as viteBuild } from 'vite';
import { startStack } from '../../devstack/stack.mjs';
import { launchBrowser, openPage } from '../../devstack/chromium.mjs';
import { repoRoot } from '../../devstack/paths.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-package-'));
const project = path.join(tmp, 'consumer');
const site = path.join(tmp, 'site'); // served at the stack's page origin: one folder per bundler
const MAX_INSTALL_BYTES = 5 * 1024 * 1024;

// The consumer's page: configures the probe from the URL (the stack's origins), exposes a run for the test.
const APP = `import { configure, searchCompleted, whenDone, status } from 'h3probe';
const config = Object.fromEntries(new URLSearchParams(location.search));
configure(config);
window.h3probeStatus = status;
window.runOnce = async () => ({ outcome: await searchCompleted(), result: await whenDone() });
`;
const html = (script, type = 'module') => `<!doctype html><meta charset="utf-8"><title>consumer</title>
<script type="${type}" src="${script}"></script>`;

let tarball;
let packedFiles;
let stack;
let browser;

function du(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? du(p) : fs.lstatSync(p).size;
  }
  return total;
}

before(async () => {
  // --ignore-scripts: `npm test` has built web/dist already; prepack would rebuild the WASM (minutes).
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp],
    { cwd: repoRoot, encoding: 'utf8' }));
  tarball = path.join(tmp, packed.filename);
  packedFiles = packed.files.map((f) => f.path);

  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund', '--offline', '--no-package-lock'], { cwd: project, stdio: 'pipe' });
  fs.writeFileSync(path.join(project, 'app.js'), APP);

  stack = await startStack({ pageRoot: site });
  browser = await launchBrowser(stack);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// One page load of site/<folder>/index.html with the stack's origins; resolves with the page's result and stored rows.
async function runPage(folder, config = {}) {
  const runsBefore = stack.store.countRuns();
  const params = new URLSearchParams({ h2Origin: stack.urls.h2Origin, h3Origin: stack.urls.h3Origin, ...config });
  const tab = await openPage(browser, `${stack.urls.page}${folder}/index.html?${params}`);
  try {
    const { outcome, result } = await tab.page.evaluate(() => window.runOnce());
    let samples = [];
    let run = null;
    if (outcome === 'started') {
      await stack.collector.waitForRuns(runsBefore + 1, 30000);
      run = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(result.pageLoadId);
      assert.ok(run, `a run is stored for page load ${result.pageLoadId}`);
      samples = stack.store.requestsFor(run.run_id);
    }
    return { outcome, result, run, samples, uncaught: await tab.uncaught() };
  } finally {
    await tab.context.close();
  }
}

// context: where the core must have run, worker or main.
function assertCompleteRun({ outcome, result, run, samples, uncaught }, context = 'worker') {
  assert.equal(outcome, 'started', JSON.stringify(result));
  assert.equal(run.run_context, context);
  assert.equal(result.run, 'done');
  assert.equal(result.beaconQueued, true);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(uncaught, []);
  const protocols = (phase) => samples.filter((s) => s.phase === phase).map((s) => `${s.result}/${s.protocol}`);
  assert.deepEqual(protocols('control'), Array(5).fill('ok/h2'));
  assert.deepEqual(protocols('treatment'), Array(5).fill('ok/h3'));
}

describe('npm pack', () => {
  test('ships the built module, the server parts, the types and the licence, and no tests or C++', () => {
    for (const file of ['LICENSE', 'package.json', 'README.md', 'web/dist/h3probe.js', 'web/dist/run.js', 'web/dist/worker.js', 'web/dist/h3probe_browser.mjs',
      'web/dist/h3probe_browser.wasm', 'web/dist/node/h3probe_node.cjs', 'web/dist/node/h3probe_node.wasm', 'web/src/h3probe.d.ts',
      'web/server/index.mjs', 'web/server/index.d.ts', 'web/bin/h3probe.mjs']) {
      assert.ok(packedFiles.includes(file), `the tarball has ${file}`);
    }
    assert.deepEqual(packedFiles.filter((f) => /\.(cpp|hpp)$|^web\/test\/|^web\/devstack\/|^build\//.test(f)), []);
  });

  test(`a page-only install pulls no other package and weighs under ${MAX_INSTALL_BYTES / 1048576} MB`, () => {
    const installed = fs.readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.'));
    assert.deepEqual(installed, ['h3probe']);
    const bytes = du(path.join(project, 'node_modules'));
    console.log(`# node_modules after installing the tarball: ${(bytes / 1024).toFixed(0)} KiB`);
    assert.ok(bytes <= MAX_INSTALL_BYTES, `${bytes} bytes`);
  });

  test('the server entry says which optional package to install', () => {
    const out = fs.mkdtempSync(path.join(tmp, 'server-'));
    fs.writeFileSync(path.join(project, 'server.mjs'), `import { openStore } from 'h3probe/server';
try { openStore('${path.join(out, 'x.sqlite')}', { schema() {}, decodeBeacon() {} }); } catch (err) { console.log(err.message); }`);
    const text = execFileSync(process.execPath, ['server.mjs'], { cwd: project, encoding: 'utf8' });
    assert.match(text, /the SQLite store needs the npm package better-sqlite3: npm install better-sqlite3@/);
  });

  test('the types of both entries check under tsc --strict', () => {
    fs.writeFileSync(path.join(project, 'consumer.ts'), `import { configure, searchCompleted, whenDone, onResult, status, type H3probeStatus } from 'h3probe';
import { loadH3probeNode, openStore, startCollector, makeReport } from 'h3probe/server';
configure({ h2Origin: 'https://h2.example.com', h3Origin: 'https://h3.example.com', sampleRate: 0.01, order: 'random' });
const done: Promise<H3probeStatus> = whenDone();
onResult((r) => { if (r.run === 'done' && r.beacon) console.log(r.pageLoadId, r.beacon.length); });
void searchCompleted().then((outcome) => outcome === 'started' ? done : status());
export async function serve(): Promise<number> {
  const core = await loadH3probeNode();
  const store = openStore('beacons.sqlite', core);
  const collector = await startCollector({ store, core, location: { trustedProxies: ['10.0.0.0/8'] } });
  const { text } = await makeReport(core, { dbPath: 'beacons.sqlite', htmlPath: null });
  console.log(text);
  return collector.port;
}
`);
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'],
        types: ['node'], typeRoots: [path.join(repoRoot, 'node_modules', '@types')],
      },
      files: ['consumer.ts'],
    }));
    execFileSync(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: project, stdio: 'pipe' });
    // And a mistake is caught: an unknown config key.
    fs.writeFileSync(path.join(project, 'consumer.ts'), `import { configure } from 'h3probe';\nconfigure({ h2origin: 'x' });\n`);
    assert.throws(() => execFileSync(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: project, stdio: 'pipe' }));
  });
});

describe('bundled by the page', () => {
  test('esbuild, ESM with splitting: the run is a lazy chunk, worker, glue and .wasm copied next to it; one complete h2/h3 run in the Worker', async () => {
    const out = path.join(site, 'esbuild');
    await esbuild({ absWorkingDir: project, entryPoints: ['app.js'], bundle: true, format: 'esm', splitting: true, minify: true, outdir: out, logLevel: 'error' });
    // What the README tells esbuild users to do: the worker, the glue and the .wasm go next to the bundle (or set
    // moduleUrl): esbuild does not follow new Worker(new URL(…)).
    for (const file of ['worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']) {
      fs.copyFileSync(path.join(project, 'node_modules', 'h3probe', 'web', 'dist', file), path.join(out, file));
    }
    fs.writeFileSync(path.join(out, 'index.html'), html('app.js'));
    assert.ok(fs.readdirSync(out).filter((f) => f.endsWith('.js')).length >= 2, 'a lazy chunk besides app.js');
    assertCompleteRun(await runPage('esbuild'));
  });

  test('esbuild, IIFE: without moduleUrl a clear error and no exception; with it a complete run', async () => {
    const out = path.join(site, 'iife');
    await esbuild({ absWorkingDir: project, entryPoints: ['app.js'], bundle: true, format: 'iife', minify: true, outdir: out, logLevel: 'silent' });
    for (const file of ['worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']) {
      fs.copyFileSync(path.join(project, 'node_modules', 'h3probe', 'web', 'dist', file), path.join(out, file));
    }
    fs.writeFileSync(path.join(out, 'index.html'), html('app.js', 'text/javascript'));
    const lost = await runPage('iife');
    assert.equal(lost.outcome, 'error');
    assert.equal(lost.result.state, 'error');
    assert.match(lost.result.errors.join('\n'), /set the moduleUrl config key/);
    assert.deepEqual(lost.uncaught, []);
    assertCompleteRun(await runPage('iife', { moduleUrl: '/iife/h3probe_browser.mjs' }));
  });

  test('Vite: new Worker(new URL(…, import.meta.url)) makes it emit the worker, the glue and the .wasm; one complete h2/h3 run in the Worker', async () => {
    fs.writeFileSync(path.join(project, 'index.html'), html('/app.js'));
    const out = path.join(site, 'vite');
    await viteBuild({ root: project, base: '/vite/', logLevel: 'error', build: { outDir: out, emptyOutDir: true } });
    const assets = fs.readdirSync(path.join(out, 'assets'));
    assert.ok(assets.some((f) => f.endsWith('.wasm')), `Vite emitted the .wasm: ${assets}`);
    assertCompleteRun(await runPage('vite'));
  });
});
