// `npm run size`: what a page downloads, in gzip bytes (zlib level 9, as a server compresses static files ahead of
// time), against the module's budgets; exits 1 when one is exceeded. web/test/unit/moduleSize.test.mjs asserts the same.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { distRoot } from '../devstack/paths.mjs';

/**
 * The budgets, in gzip bytes: before the first search (one request), after it, and in all. After the search a page
 * loads run.js, the worker (worker.js: the core's side, in a Worker or, as a fallback, on the main thread), the glue
 * and the .wasm.
 */
export const BUDGETS = Object.freeze({
  beforeSearch: { files: ['h3probe.js'], maxGzipBytes: 2600 },
  afterSearch: { files: ['run.js', 'worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm'], maxGzipBytes: 31450 },
  total: { files: ['h3probe.js', 'run.js', 'worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm'], maxGzipBytes: 33060 },
});

/** {file: {raw, gzip, brotli}} of every file a budget names, from web/dist (npm run build:dist). */
export function measureModule(dir = distRoot) {
  const sizes = {};
  for (const file of new Set(Object.values(BUDGETS).flatMap((b) => b.files))) {
    const bytes = fs.readFileSync(path.join(dir, file));
    sizes[file] = {
      raw: bytes.length,
      gzip: zlib.gzipSync(bytes, { level: 9 }).length,
      brotli: zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    };
  }
  return sizes;
}

/** [{name, gzip, max, ok}] per budget. */
export function checkBudgets(sizes) {
  return Object.entries(BUDGETS).map(([name, { files, maxGzipBytes }]) => {
    const gzip = files.reduce((sum, f) => sum + sizes[f].gzip, 0);
    return { name, files, gzip, max: maxGzipBytes, ok: gzip <= maxGzipBytes };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = measureModule();
  for (const [file, s] of Object.entries(sizes)) {
    console.log(`${file.padEnd(22)} ${String(s.raw).padStart(7)} B raw ${String(s.gzip).padStart(7)} B gzip ${String(s.brotli).padStart(7)} B brotli`);
  }
  const results = checkBudgets(sizes);
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'OVER'} ${r.name.padEnd(13)} ${r.gzip} B gzip of ${r.max} (${r.files.join(' + ')})`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}
