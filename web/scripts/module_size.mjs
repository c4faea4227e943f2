// `npm run size`: what a page downloads of h3probe, in gzip bytes (zlib level 9, as a server compresses static files
// ahead of time), against the module's budgets; exits 1 when one is exceeded. Measured twice: as a page's own esbuild
// bundle gives it (the package's gate rebundled by esbuild, ESM with code splitting and minified, as the README tells
// esbuild users, with the files it does not bundle copied beside it), and as web/dist serves it without a bundler.
// web/test/unit/moduleSize.test.mjs asserts the same.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { distRoot } from '../stack/paths.mjs';

/**
 * The budgets, in gzip bytes: the gate, all a page loads before its first search (one request), and everything a page
 * deploys of the module (the gate, the chunks its bundler splits off, and the files copied beside them).
 */
export const BUDGETS = Object.freeze({ gate: 2048, total: 32768 });

// The gate: the package's entry (package.json "exports"), all a page imports statically.
export const GATE = 'h3probe.js';
// What a bundle does not hold: the page loads them by URL (new URL(…, import.meta.url), which esbuild does not follow),
// so esbuild users copy them beside the bundle (README, "Bundlers").
export const COPIED = Object.freeze(['worker.js', 'h3probe_browser.mjs', 'h3probe_browser.wasm']);
// The API a page imports: the whole of it, so that nothing is left out by tree shaking.
const API = ['configure', 'searchCompleted', 'status', 'whenDone', 'onResult'];

const gzip = (bytes) => zlib.gzipSync(bytes, { level: 9 }).length;
function sizes(bytes) {
  return {
    raw: bytes.length, gzip: gzip(bytes),
    brotli: zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/**
 * The module as a page's esbuild bundle gives it: [{file, kind: 'gate' | 'chunk' | 'copied', raw, gzip, brotli,
 * staticImports}]. The gate is the bundle's entry holding the package's gate (the page's own code left out: it only
 * re-exports the API), staticImports the files it imports before it runs; a chunk is one esbuild split off for a
 * dynamic import(), loaded after the search; copied are COPIED, from dir.
 */
export async function measureRebundle(dir = distRoot) {
  const { outputFiles, metafile } = await build({
    stdin: { contents: `export { ${API.join(', ')} } from './${GATE}';`, resolveDir: dir, sourcefile: 'page.js', loader: 'js' },
    bundle: true, format: 'esm', splitting: true, minify: true, outdir: '/out', write: false, metafile: true, logLevel: 'error',
  });
  const entry = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint)[0];
  const files = outputFiles.map((f) => {
    const gate = path.resolve(f.path) === path.resolve(entry);
    return { file: path.basename(f.path), kind: gate ? 'gate' : 'chunk', ...sizes(f.contents),
      ...(gate && { staticImports: metafile.outputs[entry].imports.filter((i) => i.kind === 'import-statement').length }) };
  });
  for (const file of COPIED) files.push({ file, kind: 'copied', ...sizes(fs.readFileSync(path.join(dir, file))) });
  return files;
}

/** The module as web/dist serves it to a page without a bundler: every file of its folder (not node/). */
export function measureDist(dir = distRoot) {
  return fs.readdirSync(dir).filter((f) => /\.(m?js|wasm)$/.test(f)).sort((a, b) => (a === GATE ? -1 : b === GATE ? 1 : 0))
    .map((file) => ({ file, kind: file === GATE ? 'gate' : 'file', ...sizes(fs.readFileSync(path.join(dir, file))) }));
}

/** [{name, gzip, max, ok}]: the gate and the total against BUDGETS. */
export function checkBudgets(files) {
  const gate = files.filter((f) => f.kind === 'gate').reduce((sum, f) => sum + f.gzip, 0);
  const total = files.reduce((sum, f) => sum + f.gzip, 0);
  return [
    { name: 'gate', gzip: gate, max: BUDGETS.gate, ok: gate <= BUDGETS.gate },
    { name: 'total', gzip: total, max: BUDGETS.total, ok: total <= BUDGETS.total },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const esbuildVersion = JSON.parse(fs.readFileSync(fileURLToPath(import.meta.resolve('esbuild/package.json')), 'utf8')).version;
  let ok = true;
  for (const [title, files] of [
    [`a page's bundle: esbuild ${esbuildVersion} (ESM, splitting, minify) of the gate, and ${COPIED.join(', ')} copied beside it`, await measureRebundle()],
    ['web/dist as served without a bundler', measureDist()],
  ]) {
    console.log(title);
    for (const f of files) {
      console.log(`  ${f.kind.padEnd(6)} ${f.file.padEnd(22)} ${String(f.raw).padStart(7)} B raw ${String(f.gzip).padStart(7)} B gzip ${String(f.brotli).padStart(7)} B brotli`);
    }
    for (const r of checkBudgets(files)) {
      ok &&= r.ok;
      console.log(`  ${r.ok ? 'ok  ' : 'OVER'} ${r.name.padEnd(6)} ${r.gzip} B gzip of ${r.max}`);
    }
  }
  process.exit(ok ? 0 : 1);
}
