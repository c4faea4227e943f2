// `npm run build:dist`: the files the package ships, in web/dist/ (git-ignored), from web/src and the Emscripten
// build (build/wasm). Minified with esbuild.
//   h3probe.js            the gate: all a page loads before its first search (kill switch, sampling, remote config)
//   run.js                the run, imported by h3probe.js for a sampled page load after its search
//   h3probe_browser.mjs   the Emscripten glue (minified) and h3probe_browser.wasm, located next to run.js
//   node/                 the same core built for Node: the collector's decoder and the report
import fs from 'node:fs';
import path from 'node:path';
import { build, transform } from 'esbuild';
import { repoRoot } from '../devstack/paths.mjs';

const src = path.join(repoRoot, 'web', 'src');
const wasmBuild = path.join(repoRoot, 'build', 'wasm');
const dist = path.join(repoRoot, 'web', 'dist');

for (const file of ['h3probe_browser.mjs', 'h3probe_browser.wasm', 'h3probe_node.cjs', 'h3probe_node.wasm']) {
  if (!fs.existsSync(path.join(wasmBuild, file))) throw new Error(`build/wasm/${file} is missing: run "npm run build:wasm" first`);
}
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'node'), { recursive: true });

const common = { bundle: true, format: 'esm', minify: true, target: 'es2020', legalComments: 'none', logLevel: 'warning' };
await build({ ...common, entryPoints: [path.join(src, 'h3probe.js')], outfile: path.join(dist, 'h3probe.js'), external: ['./run.js'] });
await build({ ...common, entryPoints: [path.join(src, 'run.js')], outfile: path.join(dist, 'run.js') });

const glue = fs.readFileSync(path.join(wasmBuild, 'h3probe_browser.mjs'), 'utf8');
const { code } = await transform(glue, { format: 'esm', minify: true, target: 'es2020', legalComments: 'none' });
fs.writeFileSync(path.join(dist, 'h3probe_browser.mjs'), code);
fs.copyFileSync(path.join(wasmBuild, 'h3probe_browser.wasm'), path.join(dist, 'h3probe_browser.wasm'));
for (const file of ['h3probe_node.cjs', 'h3probe_node.wasm']) fs.copyFileSync(path.join(wasmBuild, file), path.join(dist, 'node', file));
console.log(`build:dist: ${fs.readdirSync(dist).join(', ')} in web/dist/`);
