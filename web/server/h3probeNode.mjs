// Loads the C++ core compiled for Node (build/wasm/h3probe_node.cjs): beacon validation and statistics.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The Emscripten build's output folder (npm run build:wasm).
const buildRoot = fileURLToPath(new URL('../../build/wasm/', import.meta.url));

let loading = null;

// Emscripten 3.1.6's glue cannot locate its .wasm from an ES module in Node, so the bytes are handed over directly.
export function loadH3probeNode(dir = buildRoot) {
  if (!loading) {
    const gluePath = path.join(dir, 'h3probe_node.cjs');
    const wasmPath = path.join(dir, 'h3probe_node.wasm');
    if (!fs.existsSync(gluePath) || !fs.existsSync(wasmPath)) {
      return Promise.reject(new Error(`${gluePath} is missing: run "npm run build" first`));
    }
    const create = createRequire(import.meta.url)(gluePath);
    loading = create({ wasmBinary: fs.readFileSync(wasmPath) });
  }
  return loading;
}

// validate(bodyText) -> { ok: true, beacon } | { ok: false, error }, as the collector expects. The C++ decoder has
// checked every known field of the text; the summary is replaced by the one it recomputed from the samples. Unknown
// fields (from newer clients) are kept in the stored beacon_json only.
export async function createBeaconValidator(dir) {
  const core = await loadH3probeNode(dir);
  return (text) => {
    const result = core.validateBeacon(text);
    if (!result.ok) return { ok: false, error: result.error };
    const beacon = JSON.parse(text);
    beacon.summary = JSON.parse(result.summary);
    return { ok: true, beacon };
  };
}
