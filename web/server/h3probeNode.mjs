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
    }).then((core) => {
      core.decodeBeacon = rowsDecoder(core);
      return core;
    });
  }
  return loading;
}

// decodeBeacon(text | bytes) -> {ok: true, run, requests} | {ok: false, error}: the rows to store, as objects keyed by
// the core's column lists, assembled here from what the core hands over column by column (node_bindings.cpp,
// decodeBeaconColumns): one JSON array of texts, one Float64Array of numbers (NaN for NULL), one Uint8Array of blobs.
function rowsDecoder(core) {
  const schema = core.schema();
  const runColumns = schema.runColumns.map((c) => [c.name, c.type === 'text']);
  const requestColumns = [...schema.requestColumns.map((c) => [c.name, c.type === 'text']),
    ...schema.durations.map((d) => [d.name, false])];
  const blobColumns = ['arm_counts', ...schema.metrics.map((m) => `arm_${m}`), 'setup'];
  return (input) => {
    const columns = core.decodeBeaconColumns(input);
    if (!columns.ok) return columns;
    const texts = JSON.parse(columns.texts);
    const { numbers, blobs } = columns;
    let t = 0;
    let n = 0;
    const row = (list) => {
      const out = {};
      for (const [name, isText] of list) {
        if (isText) out[name] = texts[t++];
        else {
          const v = numbers[n++];
          out[name] = Number.isNaN(v) ? null : v;
        }
      }
      return out;
    };
    const run = row(runColumns);
    const requests = [];
    for (let i = 0; i < columns.requests; i++) requests.push(row(requestColumns));
    let at = 0;
    for (const name of blobColumns) {
      const end = at + numbers[n++];
      run[name] = blobs.slice(at, end); // a copy of its own: a view would keep the others' bytes alive
      at = end;
    }
    if (t !== texts.length || n !== numbers.length || at !== blobs.length) throw new Error('decodeBeaconColumns: columns do not match the schema');
    return { ok: true, run, requests };
  };
}
