// Loads the C++ core compiled for Node (web/dist/node/h3probe_node.cjs): the beacon decoder, the report and the schema.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// Where the package keeps the Node build of the core (npm run build:dist copies it there).
const buildRoot = fileURLToPath(new URL('../dist/node/', import.meta.url));

let loading = null;

/** Resolves to the module (see h3probeNode.d.ts); loaded once per process. */
export function loadH3probeNode(dir = buildRoot) {
  if (!loading) {
    const gluePath = path.join(dir, 'h3probe_node.cjs');
    const wasmPath = path.join(dir, 'h3probe_node.wasm');
    if (!fs.existsSync(gluePath) || !fs.existsSync(wasmPath)) {
      return Promise.reject(new Error(`${gluePath} is missing: run "npm run build" first`));
    }
    const create = createRequire(import.meta.url)(gluePath);
    // Emscripten 3.1.6's glue cannot locate its .wasm from an ES module in Node, so the bytes are handed over directly.
    loading = create({ wasmBinary: fs.readFileSync(wasmPath) });
  }
  return loading;
}
