// What the two test origins must do for the probe, and how the module's files must be served, in one place. The
// Caddyfile generator (`h3probe origins`) and the local stack's Caddyfile write these rules, `h3probe doctor` checks a
// deployment against them; docs/deploying.md (its table and nginx snippets) is checked against them
// (web/test/unit/originsCaddyfile.test.mjs, stackCaddyfile.test.mjs, deployingDoc.test.mjs).

/** The no-op endpoint: GET with any query string, answered with this status and no body. */
export const NOOP = Object.freeze({ path: '/noop', status: 204 });

/**
 * The payload mode (config payloadBytes): GET /noop?bytes=N (with any other query parameters) answers status 200 with a
 * body of exactly N bytes, uncompressed, for N from 1 to maxBytes (the core's kMaxPayloadBytes, schema().limits
 * .maxPayloadBytes, checked by a unit test), and 400 with no body for any other value: an origin must not build an
 * answer of any size a stranger asks for. The /noop headers (NOOP_HEADERS) go with it.
 */
export const PAYLOAD = Object.freeze({ query: 'bytes', status: 200, badStatus: 400, maxBytes: 1048576,
  contentType: 'application/octet-stream' });

/**
 * The Caddyfile lines (inside the /noop handler, after its headers) that answer the payload mode with no backend: the
 * templates handler runs Go's text/template with Sprig's functions over the `respond` body, which repeats one byte N
 * times (Caddy sets the Content-Length). Its actions are delimited by [[ ]], not Go's {{ }}: a Caddyfile reads `{$` as
 * an environment variable, and `caddy fmt` (2.6) breaks braces inside a backquoted token into blocks.
 */
export function caddyPayloadLines() {
  const n = `atoi (.Req.URL.Query.Get "${PAYLOAD.query}")`;
  const body = `[[ $n := ${n} ]][[ if or (lt $n 1) (gt $n ${PAYLOAD.maxBytes}) ]][[ httpError ${PAYLOAD.badStatus} ]][[ end ]]` +
    '[[ repeat $n "x" ]]';
  return [
    `@payload query ${PAYLOAD.query}=*`,
    'handle @payload {',
    `\theader Content-Type ${PAYLOAD.contentType}`,
    '\ttemplates {',
    `\t\tmime ${PAYLOAD.contentType}`,
    '\t\tbetween [[ ]]',
    '\t}',
    `\trespond \`${body}\` ${PAYLOAD.status}`,
    '}',
  ];
}

/**
 * The response headers of /noop on both origins. `caddy` and `nginx`: the value as written in each server's config
 * (a placeholder or variable where the server fills it in). `required: false`: diagnostic only, the probe works without it.
 */
export const NOOP_HEADERS = Object.freeze([
  Object.freeze({
    name: 'Access-Control-Allow-Origin', value: '*', caddy: '*', nginx: '*', required: true,
    why: 'the probe fetches the origins cross-origin (CORS, no credentials): without it the fetch fails',
  }),
  Object.freeze({
    name: 'Timing-Allow-Origin', value: '*', caddy: '*', nginx: '*', required: true,
    why: 'without it the browser zeroes the timing phases and hides serverTiming (result timing_unavailable)',
  }),
  Object.freeze({
    name: 'Cache-Control', value: 'no-store', caddy: 'no-store', nginx: 'no-store', required: true,
    why: 'a cached answer has no network time (result cache_hit)',
  }),
  Object.freeze({
    // "proto" is the core's kServerTimingProtocol, which the module looks for (checked by originsCaddyfile.test.mjs); the
    // server names it knows (HTTP/2.0, HTTP/3.0, ...) are the core's too: schema().serverProtocols.
    name: 'Server-Timing', value: 'proto;desc="<the protocol the server saw>"',
    caddy: 'proto;desc="{http.request.proto}"', nginx: 'proto;desc="$server_protocol"', required: false,
    why: 'the protocol as the server saw it (HTTP/2.0, HTTP/3.0), readable next to nextHopProtocol in Resource Timing',
  }),
]);

/**
 * The protocols each origin's listener speaks. The HTTP/2 origin must never offer HTTP/3 (no UDP socket, no Alt-Svc),
 * or browsers that learned h3 would carry the control arm over it; the HTTP/3 origin offers h3 and announces it with
 * Alt-Svc (which Caddy sends for a listener with h3).
 */
export const ORIGIN_PROTOCOLS = Object.freeze({ h2: Object.freeze(['h1', 'h2']), h3: Object.freeze(['h1', 'h2', 'h3']) });

/** Any path but /noop on a test origin. */
export const OTHER_PATHS_STATUS = 404;

// HTML's JavaScript MIME types: a module script (the glue, the worker) under any other type is refused.
const JAVASCRIPT_TYPES = Object.freeze(['text/javascript', 'application/javascript', 'application/ecmascript',
  'application/x-ecmascript', 'application/x-javascript', 'text/ecmascript', 'text/javascript1.0', 'text/javascript1.1',
  'text/javascript1.2', 'text/javascript1.3', 'text/javascript1.4', 'text/javascript1.5', 'text/jscript',
  'text/livescript', 'text/x-ecmascript', 'text/x-javascript']);

/**
 * The module's files as the page's server must serve them (wherever they are: next to the bundle, a CDN). `types`:
 * the Content-Types a browser accepts, the first the one to send. The glue and the worker are module scripts; the
 * .wasm is compiled while it streams (WebAssembly.compileStreaming), which refuses any type but application/wasm.
 * `why`: what a page meets when the file is misserved. `loadError`: the reason of the load_error beacon a sampled page
 * load sends when the file is served with another type (a name from the core's list, schema().loadErrorReasons).
 */
export const MODULE_FILES = Object.freeze({
  glue: Object.freeze({
    file: 'h3probe_browser.mjs',
    types: JAVASCRIPT_TYPES,
    loadError: 'glue_import',
    why: 'a module script under any other type is refused ("Failed to fetch dynamically imported module"): no run; each sampled page load sends only a load_error beacon, reason glue_import',
  }),
  worker: Object.freeze({
    file: 'worker.js',
    types: JAVASCRIPT_TYPES,
    why: 'a module Worker under any other type fails to load, and none starts from another origin than the page\'s: every run then falls back to the page\'s main thread, where the probe works on the page\'s own thread (the beacon\'s context.worker_fallback says why)',
  }),
  wasm: Object.freeze({
    file: 'h3probe_browser.wasm',
    types: Object.freeze(['application/wasm']),
    loadError: 'wasm_type',
    why: 'WebAssembly.compileStreaming refuses any other type: no run; each sampled page load sends only a load_error beacon, reason wasm_type',
  }),
});
