// Loads the C++ core compiled for Node (web/dist/node/h3probe_node.cjs): the beacon decoder, the report and the schema.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// Where the package keeps the Node build of the core (npm run build:dist copies it there).
const buildRoot = fileURLToPath(new URL('../dist/node/', import.meta.url));

let loading = null;

/** Resolves to the module (see h3probeNode.d.ts); loaded once per process. */
export function loadH3probeNode(dir = buildRoot) {
  if (!loading) {
    const gluePath = path.join(dir, 'h3probe_node.cjs');
    // The package's .wasm is gzipped (build_dist.mjs); a tree built otherwise (web/bench/besideTree.mjs) has it plain.
    const packed = path.join(dir, 'h3probe_node.wasm.gz');
    const plain = path.join(dir, 'h3probe_node.wasm');
    if (!fs.existsSync(gluePath) || !(fs.existsSync(packed) || fs.existsSync(plain))) {
      return Promise.reject(new Error(`${gluePath} is missing: run "npm run build" first`));
    }
    const create = createRequire(import.meta.url)(gluePath);
    const bytes = fs.existsSync(packed) ? zlib.gunzipSync(fs.readFileSync(packed)) : fs.readFileSync(plain);
    loading = create({
      // Compiled and instantiated synchronously (a few ms). Awaiting V8's asynchronous compile leaves Node's event loop
      // with nothing to do, and Node then blocks until V8's background tasks end (NodePlatform::DrainTasks); in Node 20
      // that wait can deadlock with a background optimizing compile that is waiting for a garbage collection on the main
      // thread (nodejs/node#54918). It hung 1 start of `npm run bench:report` in 23 here, and a CI run.
      instantiateWasm(imports, receiveInstance) {
        const module = new WebAssembly.Module(bytes);
        const instance = new WebAssembly.Instance(module, imports);
        receiveInstance(instance, module);
        return instance.exports;
      },
    });
  }
  return loading;
}
