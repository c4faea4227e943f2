// The fix for each load_error reason, as h3probe doctor prints it under a failing browser run. The reasons and what
// each means are the core's (H3PROBE_LOAD_ERROR_REASONS in wasm/core/beacon.hpp, schema().loadErrorReasons); these
// are only what to do, keyed by those names: web/test/unit/loadErrorFixes.test.mjs checks that the keys are exactly the
// core's list and that docs/troubleshooting.md gives each one a section. The longer story of each, with the error texts
// that tell causes apart: docs/troubleshooting.md.
export const LOAD_ERROR_FIXES = Object.freeze({
  run_import: 'serve run.js beside the gate (h3probe.js, or your bundle\'s copy of it) as JavaScript: the page loads it when no Worker runs the core',
  worker_import: 'serve worker.js where the page looks for it: beside the gate\'s bundle (a bundler that copies it: Vite), or beside moduleUrl, ' +
    'with the glue and the .wasm. A bundler that cannot follow the gate\'s import of a URL (webpack, Next.js: "Cannot find module", ' +
    '"expression is too dynamic") needs moduleUrl set to where the three files are served',
  glue_import: 'serve h3probe_browser.mjs (the glue) as JavaScript at moduleUrl, or beside worker.js, allowed by the page\'s script-src',
  wasm_fetch: 'serve h3probe_browser.wasm beside the glue with a 2xx status (on another origin: with Access-Control-Allow-Origin for the page)',
  wasm_type: 'serve h3probe_browser.wasm with Content-Type application/wasm',
  csp: 'add \'wasm-unsafe-eval\' to the page\'s script-src (Content-Security-Policy)',
  wasm_compile: 'serve the .wasm unaltered and from the same package version as the glue (a proxy or CDN that rewrites or truncates it, ' +
    'or files of two versions)',
});

/** The anchor of a reason's section in docs/troubleshooting.md. */
export const troubleshootingLink = (reason) => `docs/troubleshooting.md#${reason}`;
