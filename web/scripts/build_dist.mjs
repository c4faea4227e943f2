// `npm run build:dist`: the files the package ships, in web/dist/ (git-ignored), from web/src and the Emscripten
// build (build/wasm). Bundled with esbuild, minified with terser (smaller than esbuild's minifier on the glue;
// each option's gain: docs/record/module-size.md).
//   h3probe.js            the gate: all a page loads before its first search (kill switch, sampling, remote config);
//                         for a sampled page load, after its search, it starts worker.js in a Worker
//   worker.js             the core's side of the run, a module Worker (or imported by run.js when no Worker can run)
//   run.js                the run on the main thread, imported by h3probe.js only where no Worker can run the core
//   h3probe_browser.mjs   the Emscripten glue (minified) and h3probe_browser.wasm, located next to worker.js
//   node/                 the same core built for Node: the collector's decoder and the report (its glue minified,
//                         its .wasm gzipped: the loader, h3probeNode.mjs, inflates it, a few ms once per process)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { build } from 'esbuild';
import { minify } from 'terser';
import { repoRoot } from '../stack/paths.mjs';

const src = path.join(repoRoot, 'web', 'src');
const wasmBuild = path.join(repoRoot, 'build', 'wasm');
const dist = path.join(repoRoot, 'web', 'dist');

for (const file of ['h3probe_browser.mjs', 'h3probe_browser.wasm', 'h3probe_node.cjs', 'h3probe_node.wasm']) {
  if (!fs.existsSync(path.join(wasmBuild, file))) throw new Error(`build/wasm/${file} is missing: run "npm run build:wasm" first`);
}
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'node'), { recursive: true });

// The one kind of comment kept: the bundlers' "leave this import() to the browser" (run.js's import of worker.js, the
// worker's of the glue). Without them webpack makes of the import a context module that finds nothing, and Turbopack
// a throw ("as expression is too dynamic"): every page load a load_error (worker_import).
const BUNDLER_HINT = /^ (@vite-ignore|webpackIgnore: true|turbopackIgnore: true) $/;
const TERSER = { module: true, ecma: 2020, compress: { passes: 3, pure_getters: true }, mangle: true,
  format: { comments: (node, comment) => BUNDLER_HINT.test(comment.value) } };
// V8's compile hint (Chromium 136 and later): compile every function of the file when the file is compiled, not on its
// first call. Without it each function of the run and the glue is compiled on the main thread the first time the run
// calls it, inside the run's tasks (measured: the glue's setup and the core's first calls took about half as long with
// it, at 4x CPU throttling). Other browsers read a comment.
const EAGER = '//# allFunctionsCalledOnLoad\n';
// For the glue and the worker, function declarations hoisted to the top of their scope (hoist_funs: the same program,
// smaller), and in the glue the function values of object literals written as methods (unsafe_methods: smaller). A method cannot be called with `new`: the glue's are embind's type converters and Emval's helpers,
// only ever called as methods (the e2e tests run the glue in Chromium, Firefox and WebKitGTK).
const HOISTED = { ...TERSER, compress: { ...TERSER.compress, hoist_funs: true } };
const GLUE = { ...HOISTED, compress: { ...HOISTED.compress, unsafe_methods: true } };
async function writeMinified(file, code, prefix = '', options = TERSER) {
  const { code: minified } = await minify(code, options);
  fs.writeFileSync(path.join(dist, file), prefix + minified);
}
// What the Emscripten glue (3.1.6, -sENVIRONMENT=web) holds that the loader never uses, cut before terser (which then
// drops what only these used): its own download of the .wasm and the XHR helpers and script directory behind it (the
// loader compiles the .wasm itself and hands it over through instantiateWasm, worker.js), and Embind's debugging
// helpers on the module object. [what, the glue's text, what replaces it]; each text must be found exactly once, or the
// build fails: a new Emscripten writes its glue differently, and the cuts must be looked at again.
const GLUE_CUTS = [
  ['the XHR helpers and the script directory', /if\(ENVIRONMENT_IS_WEB\|\|ENVIRONMENT_IS_WORKER\)\{if\(ENVIRONMENT_IS_WORKER\)\{scriptDirectory=[\s\S]*?setWindowTitle=\(title=>document\.title=title\)\}else\{\}/g, ''],
  ['the .wasm\'s own URL', 'var wasmBinaryFile;if(Module["locateFile"]){wasmBinaryFile="h3probe_browser.wasm";if(!isDataURI(wasmBinaryFile)){wasmBinaryFile=locateFile(wasmBinaryFile)}}else{wasmBinaryFile=new URL("h3probe_browser.wasm",import.meta.url).toString()}', ''],
  ['its download when no instantiateWasm is given', 'if(Module["instantiateWasm"]){try{var exports=Module["instantiateWasm"](info,receiveInstance);return exports}catch(e){err("Module.instantiateWasm callback failed with error: "+e);return false}}instantiateAsync().catch(readyPromiseReject);return{}', 'return Module["instantiateWasm"](info,receiveInstance)'],
  ['preloaded images and audio', 'Module["preloadedImages"]={};Module["preloadedAudios"]={};', ''],
  ['Embind\'s instance counting', 'function init_embind(){Module["getInheritedInstanceCount"]=getInheritedInstanceCount;Module["getLiveInheritedInstances"]=getLiveInheritedInstances;Module["flushPendingDeletes"]=flushPendingDeletes;Module["setDelayFunction"]=setDelayFunction}', 'function init_embind(){}'],
  ['Embind\'s handle counting', 'function init_emval(){Module["count_emval_handles"]=count_emval_handles;Module["get_first_emval"]=get_first_emval}', 'function init_emval(){}'],
];
function cutGlue(glue) {
  for (const [what, text, replacement] of GLUE_CUTS) {
    const found = typeof text === 'string' ? glue.split(text).length - 1 : (glue.match(text) ?? []).length;
    if (found !== 1) throw new Error(`build:dist: the glue's ${what} found ${found} times, not once: look at GLUE_CUTS again`);
    glue = glue.replace(text, replacement);
  }
  return glue;
}

const bundle = async (entry, external = []) => (await build({
  entryPoints: [path.join(src, entry)], bundle: true, format: 'esm', target: 'es2020', write: false, external, logLevel: 'warning',
})).outputFiles[0].text;
await writeMinified('h3probe.js', await bundle('h3probe.js', ['./run.js']));
await writeMinified('run.js', await bundle('run.js'), EAGER);
await writeMinified('worker.js', await bundle('worker.js'), EAGER, HOISTED);
await writeMinified('h3probe_browser.mjs', cutGlue(fs.readFileSync(path.join(wasmBuild, 'h3probe_browser.mjs'), 'utf8')), EAGER, GLUE);
fs.copyFileSync(path.join(wasmBuild, 'h3probe_browser.wasm'), path.join(dist, 'h3probe_browser.wasm'));
await writeMinified('node/h3probe_node.cjs', fs.readFileSync(path.join(wasmBuild, 'h3probe_node.cjs'), 'utf8'), '', { ...TERSER, module: false });
fs.writeFileSync(path.join(dist, 'node', 'h3probe_node.wasm.gz'),
  zlib.gzipSync(fs.readFileSync(path.join(wasmBuild, 'h3probe_node.wasm')), { level: 9 }));
console.log(`build:dist: ${fs.readdirSync(dist).join(', ')} in web/dist/`);
