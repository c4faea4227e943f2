// `npm run build:dist`: the files the package ships, in web/dist/ (git-ignored), from web/src and the Emscripten
// build (build/wasm). Bundled with esbuild, minified with terser (1.2 KB gzip smaller than esbuild's minifier on the
// glue).
//   h3probe.js            the gate: all a page loads before its first search (kill switch, sampling, remote config);
//                         for a sampled page load, after its search, it starts worker.js in a Worker
//   worker.js             the core's side of the run, a module Worker (or imported by run.js when no Worker can run)
//   run.js                the run on the main thread, imported by h3probe.js only where no Worker can run the core
//   h3probe_browser.mjs   the Emscripten glue (minified) and h3probe_browser.wasm, located next to worker.js
//   node/                 the same core built for Node: the collector's decoder and the report
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { minify } from 'terser';
import { repoRoot } from '../devstack/paths.mjs';

const src = path.join(repoRoot, 'web', 'src');
const wasmBuild = path.join(repoRoot, 'build', 'wasm');
const dist = path.join(repoRoot, 'web', 'dist');

for (const file of ['h3probe_browser.mjs', 'h3probe_browser.wasm', 'h3probe_node.cjs', 'h3probe_node.wasm']) {
  if (!fs.existsSync(path.join(wasmBuild, file))) throw new Error(`build/wasm/${file} is missing: run "npm run build:wasm" first`);
}
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'node'), { recursive: true });

const TERSER = { module: true, ecma: 2020, compress: { passes: 3, pure_getters: true }, mangle: true, format: { comments: false } };
// V8's compile hint (Chromium 136 and later): compile every function of the file when the file is compiled, not on its
// first call. Without it each function of the run and the glue is compiled on the main thread the first time the run
// calls it, inside the run's tasks (measured: the glue's setup and the core's first calls took about half as long with
// it, at 4x CPU throttling). Other browsers read a comment.
const EAGER = '//# allFunctionsCalledOnLoad\n';
// For the glue and the worker, function declarations hoisted to the top of their scope (hoist_funs: the same program,
// 33 and 7 B less gzip), and in the glue the function values of object literals written as methods (unsafe_methods: 28 B
// less gzip). A method cannot be called with `new`: the glue's are embind's type converters and Emval's helpers,
// only ever called as methods (the e2e tests run the glue in Chromium, Firefox and WebKitGTK).
const HOISTED = { ...TERSER, compress: { ...TERSER.compress, hoist_funs: true } };
const GLUE = { ...HOISTED, compress: { ...HOISTED.compress, unsafe_methods: true } };
async function writeMinified(file, code, prefix = '', options = TERSER) {
  const { code: minified } = await minify(code, options);
  fs.writeFileSync(path.join(dist, file), prefix + minified);
}
const bundle = async (entry, external = []) => (await build({
  entryPoints: [path.join(src, entry)], bundle: true, format: 'esm', target: 'es2020', write: false, external, logLevel: 'warning',
})).outputFiles[0].text;
await writeMinified('h3probe.js', await bundle('h3probe.js', ['./run.js']));
await writeMinified('run.js', await bundle('run.js'), EAGER);
await writeMinified('worker.js', await bundle('worker.js'), EAGER, HOISTED);
await writeMinified('h3probe_browser.mjs', fs.readFileSync(path.join(wasmBuild, 'h3probe_browser.mjs'), 'utf8'), EAGER, GLUE);
fs.copyFileSync(path.join(wasmBuild, 'h3probe_browser.wasm'), path.join(dist, 'h3probe_browser.wasm'));
for (const file of ['h3probe_node.cjs', 'h3probe_node.wasm']) fs.copyFileSync(path.join(wasmBuild, file), path.join(dist, 'node', file));
console.log(`build:dist: ${fs.readdirSync(dist).join(', ')} in web/dist/`);
