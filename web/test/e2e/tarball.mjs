// The package as a team installs it, shared by package.test.mjs and kit.test.mjs: `npm pack` of this checkout (the
// prepack build included, as a release runs it), the tarball installed into a fresh project, and a page of that project
// bundled by a recipe of docs/embedding.md, read from the page.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../stack/paths.mjs';

// The consumer's page: configures the probe from the URL (the origins, the beacon URL; worker=false), exposes a run for
// the test.
export const APP = `import { configure, searchCompleted, whenDone, status } from 'h3probe';
const config = Object.fromEntries([...new URLSearchParams(location.search)].map(([k, v]) => [k, v === 'false' ? false : v]));
configure(config);
window.h3probeStatus = status;
window.runOnce = async () => ({ outcome: await searchCompleted(), result: await whenDone() });
`;
export const html = (script, type = 'module') => `<!doctype html><meta charset="utf-8"><title>consumer</title>
<script type="${type}" src="${script}"></script>`;

/**
 * Packs this checkout into dir and installs the tarball into dir/consumer (offline, no other package). The prepack
 * build writes to stderr, so stdout must be JSON only. Resolves to { packed (npm pack's JSON), tarball, project }.
 */
export function packAndInstall(dir) {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir],
    { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  const tarball = path.join(dir, packed.filename);
  const project = path.join(dir, 'consumer');
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund', '--offline', '--no-package-lock'], { cwd: project, stdio: 'pipe' });
  fs.writeFileSync(path.join(project, 'app.js'), APP);
  return { packed, tarball, project };
}

/**
 * The bundler recipes of docs/embedding.md, read from the page itself so that the page cannot drift from what is
 * tested: { name: { commands (the shell block after `<!-- recipe: NAME -->`), config (the object literal of a js block
 * right after it, {} when none) } }.
 */
export function docRecipes() {
  const text = fs.readFileSync(path.join(repoRoot, 'docs', 'embedding.md'), 'utf8');
  const recipes = {};
  for (const [, name, commands, js] of text.matchAll(/<!-- recipe: ([\w-]+) -->\n```sh\n([\s\S]*?)```\n(?:```js\n([\s\S]*?)```)?/g)) {
    const config = {};
    for (const [, key, value] of (js ?? '').matchAll(/(\w+): '([^']*)'/g)) config[key] = value;
    recipes[name] = { commands: commands.trim(), config };
  }
  return recipes;
}

// What a recipe's commands may call besides the shell's own: the bundlers, as the app's devDependencies (esbuild and
// Vite from this checkout; the others from bundlerCache).
const BUNDLERS = ['esbuild', 'vite'];

// The other bundlers a team may use, at the versions tested: installed at test time into a git-ignored folder (as
// ensure_deps.sh installs chdb), so that `npm ci` stays light and a second run reuses them. A recipe's app is made
// inside it (appsDir), where Node's resolution, npx and Next's and Parcel's project roots find them.
export const BUNDLER_VERSIONS = Object.freeze({
  next: '16.5.0', react: '19.3.1', 'react-dom': '19.3.1', webpack: '5.113.0', 'webpack-cli': '7.3.1', rollup: '4.69.3',
  '@rollup/plugin-node-resolve': '16.0.3', parcel: '2.16.4',
});
export const bundlerCache = path.join(repoRoot, '.h3probe', 'bundlers');
export const appsDir = path.join(bundlerCache, 'apps');

const installedVersion = (name) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(bundlerCache, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
};

/** Installs BUNDLER_VERSIONS into bundlerCache unless they are there already; returns the install's ms (0: reused). */
export function ensureBundlers() {
  const missing = Object.entries(BUNDLER_VERSIONS).filter(([name, version]) => installedVersion(name) !== version);
  fs.mkdirSync(appsDir, { recursive: true });
  if (!missing.length) return 0;
  const started = Date.now();
  fs.writeFileSync(path.join(bundlerCache, 'package.json'), JSON.stringify({ private: true, dependencies: BUNDLER_VERSIONS }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: bundlerCache, stdio: 'pipe' });
  return Date.now() - started;
}

/**
 * Follows a recipe of docRecipes() as written, in a fresh app folder `dir`: the installed package (linked from
 * project; copied with copyPackage, as npm installs it, for the apps in the bundler cache, whose project root Next.js
 * and Parcel take to be the cache: a link would lead out of it), the
 * bundlers (linked from this checkout: offline), the consumer's app.js and an index.html that loads it (Vite's entry;
 * app and page replace the two), files ({ path: text }, e.g. a Next.js app), then the recipe's commands run by sh,
 * each one that fails failing it. Returns dir.
 */
export function followRecipe(project, { commands }, dir, { app = APP, page = html('/app.js'), files = {}, copyPackage = false } = {}) {
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
  if (copyPackage) fs.cpSync(path.join(project, 'node_modules', 'h3probe'), path.join(modules, 'h3probe'), { recursive: true });
  else fs.symlinkSync(path.join(project, 'node_modules', 'h3probe'), path.join(modules, 'h3probe'), 'dir');
  for (const name of BUNDLERS) {
    fs.symlinkSync(path.join(repoRoot, 'node_modules', name), path.join(modules, name), 'dir');
    fs.symlinkSync(path.join(repoRoot, 'node_modules', '.bin', name), path.join(modules, '.bin', name));
  }
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  fs.writeFileSync(path.join(dir, 'app.js'), app);
  fs.writeFileSync(path.join(dir, 'index.html'), page);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  execFileSync('sh', ['-e', '-c', commands], { cwd: dir, stdio: 'pipe',
    env: { ...process.env, npm_config_offline: 'true', NEXT_TELEMETRY_DISABLED: '1' } });
  return dir;
}
