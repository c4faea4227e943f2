// The package as a team installs it, shared by package.test.mjs and kit.test.mjs: `npm pack` of this checkout (the
// prepack build included, as a release runs it), the tarball installed into a fresh project, and a page of that project
// bundled with esbuild the README's way.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build as esbuild } from 'esbuild';
import { repoRoot } from '../../devstack/paths.mjs';

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

/** esbuild, ESM with splitting, of project/app.js into out, the glue and .wasm copied next to it, and an index.html. */
export async function bundleApp(project, out) {
  await esbuild({ absWorkingDir: project, entryPoints: ['app.js'], bundle: true, format: 'esm', splitting: true, minify: true, outdir: out, logLevel: 'error' });
  // What the README tells esbuild users to do: the worker, the glue and the .wasm go next to the bundle (or set
  // moduleUrl): esbuild does not follow new Worker(new URL(…)).
  for (const file of ['worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']) {
    fs.copyFileSync(path.join(project, 'node_modules', 'h3probe', 'web', 'dist', file), path.join(out, file));
  }
  fs.writeFileSync(path.join(out, 'index.html'), html('app.js'));
}
