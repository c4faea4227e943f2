// Where a page's probe module files are, read from the page as served (no browser): the moduleUrl of its config where
// one of its scripts sets it to a literal, else the worker that the gate's code in its scripts starts and the glue and
// .wasm that worker names. h3probe doctor --browser reads them from the page's own requests instead.
import { MODULE_FILES } from '../server/originRules.mjs';

/**
 * { worker, module, wasm, from }: each a URL, or {} where nothing is found (a page that loads the gate from elsewhere,
 * or sets moduleUrl at run time). from: 'moduleUrl' (the config key, a string literal in the page or one of its
 * scripts) or 'scripts' (the worker the gate starts: `new URL('./worker.js', import.meta.url)`, or a bundler's renamed
 * worker-HASH.js). get(url) resolves to { status, body }.
 */
export async function moduleFiles(page, get) {
  const fetched = new Map();
  const text = async (u) => {
    if (!fetched.has(u.href)) fetched.set(u.href, await get(u).then((r) => (r.status === 200 ? r.body : null), () => null));
    return fetched.get(u.href);
  };
  // Every quoted relative or absolute path whose file name matches, taken relative to the file that names it. With
  // pathed, only a path that starts ./, ../, / or a scheme: the gate's `new URL('./worker.js', import.meta.url)` as
  // esbuild and Rollup keep it and Vite renames it ('/assets/worker-HASH.js'). A bare "worker.js" left in a bundle is
  // the gate's other form, `new URL('worker.js', moduleUrl)`, relative to a config key and not to the script; and a
  // bundler's own chunk path ('static/media/worker.HASH.js', webpack's and Next.js's) is relative to a public path
  // the doctor cannot read: either would send the check to a file that was never there.
  const named = (body, base, file, { pathed = false } = {}) => [...body.matchAll(new RegExp(
    `["'\`]((?:${pathed ? '\\.{0,2}/|[a-z][a-z0-9+.-]*://' : ''})(?:[^"'\`\\s]*/)?${file})["'\`]`, 'g'))]
    .flatMap((m) => { try { return [new URL(m[1], base)]; } catch { return []; } });
  // Of the paths a file names, the first that is served (and, when asked, says `needle`); else the first named.
  const pick = async (urls, needle = '') => {
    for (const u of urls) if ((await text(u))?.includes(needle)) return u;
    return urls[0];
  };
  const html = (await text(page)) ?? '';
  // The gate takes moduleUrl relative to the page (new URL(moduleUrl, location)), the worker beside it and the .wasm
  // beside the glue (web/src/h3probe.js and worker.js): the config key wins over what import.meta.url would give.
  const fromConfig = (body) => {
    const m = /\bmoduleUrl["']?\s*:\s*(["'`])([^"'`\s]+)\1/.exec(body);
    if (!m) return null;
    try {
      const module = new URL(m[2], page);
      return { module, worker: new URL(MODULE_FILES.worker.file, module), wasm: new URL(MODULE_FILES.wasm.file, module), from: 'moduleUrl' };
    } catch {
      return null;
    }
  };
  const inline = fromConfig(html);
  if (inline) return inline;
  // The page's scripts, then the modules they import (a path, not a package name), breadth first, at most 30 files.
  const queue = [...html.matchAll(/<script\b[^>]*\bsrc\s*=\s*["']([^"']+)["']/gi)].map((m) => new URL(m[1], page));
  const seen = new Set();
  let worker;
  while (queue.length && seen.size < 30) {
    const script = queue.shift();
    if (seen.has(script.href)) continue;
    seen.add(script.href);
    const body = (await text(script)) ?? '';
    const config = fromConfig(body);
    if (config) return config;
    // The gate names worker.js twice (beside the glue, and beside itself): the one served, which imports the glue.
    const workers = named(body, script, 'worker(?:[-.][\\w-]+)?\\.js', { pathed: true });
    if (workers.length && !worker) worker = await pick(workers, 'h3probe_browser');
    for (const m of body.matchAll(/\b(?:from|import)\s*\(?\s*["']((?:\.{1,2}\/|\/)[^"']+)["']/g)) {
      try { queue.push(new URL(m[1], script)); } catch { /* not a URL */ }
    }
  }
  if (!worker) return {};
  const code = (await text(worker)) ?? '';
  const glue = named(code, worker, 'h3probe_browser[\\w.-]*\\.m?js');
  const wasm = named(code, worker, 'h3probe_browser[\\w.-]*\\.wasm');
  // A worker that names neither (not served, or a build of its own) has them beside it, as the package lays them out.
  return { worker, module: glue.length ? await pick(glue) : new URL(MODULE_FILES.glue.file, worker),
    wasm: wasm.length ? await pick(wasm) : new URL(MODULE_FILES.wasm.file, worker), from: 'scripts' };
}
