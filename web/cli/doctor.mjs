// `h3probe doctor --page URL --h2 ORIGIN --h3 ORIGIN --collector URL`: checks a deployment from outside, as a browser
// would meet it, and prints one line per check with the fix for each failing one. What the origins must send is read
// from web/server/originRules.mjs (the rules `h3probe origins` writes), never restated here. The checks are a table of
// small functions (CHECKS), each adding its lines; --browser adds one page load in a real browser (doctorBrowser.mjs).
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { MODULE_FILES, NOOP, NOOP_HEADERS, ORIGIN_PROTOCOLS, PAYLOAD } from '../server/originRules.mjs';
import { browserRun } from './doctorBrowser.mjs';
import { request, tlsHandshake } from './doctorHttp.mjs';
import { moduleFiles } from './doctorPage.mjs';
import { parseSearch, SEARCH_HELP } from './search.mjs';

/** run_id, page_load_id and config_id of everything doctor sends. */
import { DOCTOR_ID } from '../report/doctorBeacon.mjs';

export { DOCTOR_ID };

export const USAGE = `usage: h3probe doctor --page URL --h2 ORIGIN --h3 ORIGIN --collector URL [options]

Checks from outside what a deployment needs, and prints PASS, FAIL, WARN or SKIP per check with the fix for each
failing one: TLS on every host; the HTTP/2 origin offers no HTTP/3 (no Alt-Svc); the HTTP/3 origin announces it; both
answer /noop as the probe needs (status, no-store, CORS and Timing-Allow-Origin for the page, Server-Timing); the
module's glue, worker and .wasm are served with their types (the worker from the page's origin); the collector's
/healthz; its CORS preflight for the page's origin; a test beacon answered 204. With --browser, one page load in a
real browser: the page's own scripts and config, its search, and the beacon that load sends (a load_error fails, with
its reason and error text).

  --page URL          a page that embeds the probe (its origin is the Origin the checks send)
  --h2 ORIGIN         the HTTP/2 origin, as in the page config (h2Origin)
  --h3 ORIGIN         the HTTP/3 origin (h3Origin)
  --collector URL     the beacon URL, as in the page config (beaconUrl)

options:
  --browser NAME      chromium or firefox: also load the page in that browser as a sampled user's page load: it
                      opens --page, does --search, and reads the beacon that load sends (kept in the browser: the
                      collector never gets it); FAIL when the load sends a load_error or no beacon, or a request
                      goes over the wrong protocol. The module checks then check the files the page requested.
                      (From a checkout of the repository with npm run deps: the browser drivers are not in the package)
  --search ACTION     with --browser, what a user does to search; the page must then call searchCompleted():
                      ${SEARCH_HELP}
                      (default: none, for a page that calls searchCompleted() by itself)
  --module URL        the glue h3probe_browser.mjs as served; the config key moduleUrl
  --wasm URL          the .wasm as served
  --worker URL        the worker as served
                      (each default: the file the page requested (--browser), else the one the page leads to: its
                      config's moduleUrl where a script sets it, else the worker its gate starts, a bundler's renamed
                      one included, and the glue and .wasm that worker names; where none is found, next to the page,
                      and a file guessed there that answers an error is SKIPped, not checked: --browser checks it)
  --healthz URL       the collector's /healthz (default: /healthz on the beacon URL's origin; a proxy that forwards
                      only /beacon, as the generated Caddyfile does, makes that check SKIP: give the collector's own
                      address, e.g. http://127.0.0.1:8787/healthz, from its machine)
  --ca FILE           also trust this CA certificate (PEM), e.g. a staging or local CA
  --resolve HOST:PORT:ADDRESS  connect to ADDRESS for HOST:PORT (curl's form; repeatable), for a deployment not yet in
                      DNS: TLS and the Host header still name HOST (with --browser: Chromium maps HOST to ADDRESS, Firefox
                      takes one address for every name)
  --connect-to HOST:PORT:ADDRESS:PORT2  the same, to another port too (curl's form; repeatable; Chromium only):
                      how h3probe trial --open's doctor line reaches the trial's servers
  --payload-bytes N   the page config's payloadBytes: also check that both origins answer /noop?bytes=N with N bytes,
                      uncompressed, and the /noop headers (default 0: the no-op only)
  --timeout MS        per request (default 10000)
  --json              print the checks as JSON instead of the table
  --help              this text

The test beacon has run_id, page_load_id and config_id "${DOCTOR_ID}", outcome "error" and no samples: the
collector stores it once (later ones are duplicates, still answered 204); it adds no request to any report figure.
What each failing check and each load_error reason means, and its fix: docs/troubleshooting.md.
Exit status: 0 when nothing FAILs, 1 when a check fails, 2 for bad options.`;

/**
 * The one beacon doctor sends: a run of no request, stored at most once per database (run_id is the store's key). Its
 * form is the core's (decode_beacon in wasm/core/beacon.cpp): web/test/unit/doctor.test.mjs decodes it with the core.
 */
export function doctorBeacon(moduleVersion) {
  return {
    schema: 'h3probe/1', run_id: DOCTOR_ID, page_load_id: DOCTOR_ID, config_id: DOCTOR_ID, module_version: moduleVersion,
    order: 'h2-first', arms: 'h2-h3', outcome: 'error', error: 'h3probe doctor: test beacon', run_ms: 0, sample_rate: 1, errors: [], samples: [],
  };
}

export async function main(argv) {
  const { values: a } = parseArgs({
    args: argv,
    strict: true,
    options: {
      page: { type: 'string' }, h2: { type: 'string' }, h3: { type: 'string' }, collector: { type: 'string' },
      module: { type: 'string' }, wasm: { type: 'string' }, worker: { type: 'string' }, healthz: { type: 'string' }, ca: { type: 'string' },
      browser: { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      'payload-bytes': { type: 'string' }, resolve: { type: 'string', multiple: true }, 'connect-to': { type: 'string', multiple: true },
      search: { type: 'string' },
    },
  });
  if (a.help) {
    console.log(USAGE);
    return;
  }
  const { options, problems } = doctorOptions(a);
  if (problems.length) {
    console.error(`h3probe doctor: ${problems.join('\nh3probe doctor: ')}`);
    process.exit(2);
  }
  const checks = await runDoctor(options);
  if (a.json) console.log(JSON.stringify(checks, null, 2));
  else console.log(`${formatChecks(checks)}${options.browser ? '' : `\n\n${NO_PAGE_LOAD}`}`);
  if (checks.some((c) => c.status === 'FAIL')) process.exitCode = 1;
}

/**
 * The parsed options ({page, h2, h3, collector, module, wasm, worker, healthz, ca, browser, search, timeoutMs,
 * payloadBytes, resolve: Map 'host:port' → {address, port (undefined: the URL's)}, named}) and every problem.
 */
export function doctorOptions(a) {
  const problems = [];
  const url = (flag, value, opts) => urlOption(problems, flag, value, opts);
  const loose = { required: false, schemes: ['https:', 'http:'] };
  const page = url('page', a.page);
  const h2 = url('h2', a.h2, { origin: true });
  const h3 = url('h3', a.h3, { origin: true });
  const collector = url('collector', a.collector, { schemes: ['https:', 'http:'] });
  const moduleUrl = url('module', a.module, loose) ?? (page && new URL(MODULE_FILES.glue.file, page));
  const wasm = url('wasm', a.wasm, loose) ?? (moduleUrl && new URL(MODULE_FILES.wasm.file, moduleUrl));
  const worker = url('worker', a.worker, loose) ?? (moduleUrl && new URL(MODULE_FILES.worker.file, moduleUrl));
  const healthz = url('healthz', a.healthz, loose) ?? (collector && new URL('/healthz', collector));
  if (h2 && h3 && h2.origin === h3.origin) problems.push('--h2 and --h3 must be different origins');
  let ca;
  if (a.ca !== undefined) {
    try { ca = fs.readFileSync(a.ca, 'utf8'); } catch (err) { problems.push(`--ca: ${err.message}`); }
  }
  if (a.browser !== undefined && !['chromium', 'firefox'].includes(a.browser)) problems.push(`--browser must be chromium or firefox, not "${a.browser}"`);
  let search = null;
  try { search = parseSearch(a.search ?? ''); } catch (err) { problems.push(err.message); }
  if (search && a.browser === undefined) problems.push('--search is for the page load of --browser: give --browser chromium or firefox');
  const timeoutMs = a.timeout === undefined ? 10000 : Number(a.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) problems.push(`--timeout: "${a.timeout}" is not a number of milliseconds`);
  const payloadBytes = a['payload-bytes'] === undefined ? 0 : Number(a['payload-bytes']);
  if (!/^\d+$/.test(a['payload-bytes'] ?? '0') || payloadBytes > PAYLOAD.maxBytes) {
    problems.push(`--payload-bytes: "${a['payload-bytes']}" is not a number of bytes from 0 to ${PAYLOAD.maxBytes}`);
  }
  const resolve = resolveOptions(a, problems);
  // Which module files were named: the others are taken from the page (the browser's requests, its config, its scripts), then guessed.
  const named = { module: a.module !== undefined, worker: a.worker !== undefined, wasm: a.wasm !== undefined };
  return { options: { page, h2, h3, collector, module: moduleUrl, wasm, worker, healthz, ca, browser: a.browser, search, timeoutMs, payloadBytes,
    resolve, named }, problems };
}

// A URL option: the URL, or undefined (absent, or not valid: the problem is added).
function urlOption(problems, flag, value, { origin = false, required = true, schemes = ['https:'] } = {}) {
  if (value === undefined) {
    if (required) problems.push(`--${flag} is required`);
    return undefined;
  }
  let u;
  try { u = new URL(value); } catch { problems.push(`--${flag}: "${value}" is not a URL`); return undefined; }
  if (!schemes.includes(u.protocol)) problems.push(`--${flag}: "${value}" must be ${schemes.map((s) => s.slice(0, -1)).join(' or ')}`);
  else if (origin && u.origin !== value.replace(/\/$/, '')) problems.push(`--${flag}: "${value}" must be an origin (no path), like https://h2.example.com`);
  return u;
}

// --resolve HOST:PORT:ADDRESS and --connect-to HOST:PORT:ADDRESS:PORT2 (curl's forms, repeatable): connect there for
// that host and port, for a deployment not yet in DNS or a trial's loopback servers; TLS and the Host header still
// name the host. Returns the Map 'host:port' → {address, port}; what Firefox cannot do with them is a problem.
function resolveOptions(a, problems) {
  const resolve = new Map();
  const validPort = (p) => Number(p) >= 1 && Number(p) <= 65535;
  for (const entry of [a.resolve ?? []].flat()) {
    const m = /^([^:[\]]+):(\d{1,5}):\[?([^\]]+)\]?$/.exec(entry);
    if (!m || net.isIP(m[3]) === 0 || !validPort(m[2])) {
      problems.push(`--resolve: "${entry}" is not HOST:PORT:ADDRESS (an IP address: 203.0.113.7, or [2001:db8::7])`);
    } else {
      resolve.set(`${m[1].toLowerCase()}:${Number(m[2])}`, { address: m[3] });
    }
  }
  for (const entry of [a['connect-to'] ?? []].flat()) {
    const m = /^([^:[\]]+):(\d{1,5}):\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
    if (!m || net.isIP(m[3]) === 0 || !validPort(m[2]) || !validPort(m[4])) {
      problems.push(`--connect-to: "${entry}" is not HOST:PORT:ADDRESS:PORT (an IP address: 127.0.0.1, or [::1])`);
    } else {
      resolve.set(`${m[1].toLowerCase()}:${Number(m[2])}`, { address: m[3], port: Number(m[4]) });
    }
  }
  if (resolve.size && a.browser === 'firefox' && new Set([...resolve.values()].map((t) => t.address)).size > 1) {
    problems.push('--resolve with --browser firefox: Firefox maps every host name to one address (network.dns.forceResolve): give one address, or use --browser chromium');
  }
  if (a.browser === 'firefox' && [...resolve.values()].some((t) => t.port)) {
    problems.push('--connect-to with --browser firefox: Firefox cannot send a host to another port; use --browser chromium');
  }
  return resolve;
}

/**
 * The checks, in the order they run and print: each an async function of the run's context (ctx: the options o, add(),
 * get(), the page's origin, and what earlier checks learned: alpn, spkis, the module files the page requested).
 */
export const CHECKS = Object.freeze([
  ['TLS of every host', checkTls],
  ['the two origins', checkOrigins],
  ['a page load in a browser (--browser)', checkBrowser],
  ['the module files', checkModuleFiles],
  ['the collector\'s /healthz', checkHealthz],
  ['the collector\'s CORS preflight', checkPreflight],
  ['the collector takes a beacon', checkTestBeacon],
]);

/** Runs every check; resolves to [{ status: PASS|FAIL|WARN|SKIP, check, detail, fix }]. */
export async function runDoctor(o) {
  const checks = [];
  const ca = o.ca ? [...tls.rootCertificates, o.ca] : undefined;
  const resolve = o.resolve ?? new Map();
  const ctx = {
    o, ca, resolve, pageOrigin: o.page.origin, alpn: {}, spkis: [], requested: {},
    add: (status, check, detail, fix = '') => checks.push({ status, check, detail, fix }),
    get: (url, opts = {}) => request(url, { ca, timeoutMs: o.timeoutMs, resolve, ...opts }),
  };
  for (const [, check] of CHECKS) await check(ctx);
  return checks;
}

// TLS, once per host, with the ALPN protocols an HTTP/2 client offers; the servers' key hashes for the browser run.
async function checkTls(ctx) {
  const { o, add } = ctx;
  const hosts = new Map();
  for (const [role, u] of [['page', o.page], ['HTTP/2 origin', o.h2], ['HTTP/3 origin', o.h3], ['collector', o.collector]]) {
    if (u.protocol !== 'https:') continue;
    if (!hosts.has(u.host)) hosts.set(u.host, { u, roles: [] });
    hosts.get(u.host).roles.push(role);
  }
  for (const [host, { u, roles }] of hosts) {
    const r = await tlsHandshake(u, { ca: ctx.ca, timeoutMs: o.timeoutMs, resolve: ctx.resolve });
    ctx.alpn[host] = r.alpn;
    if (r.spki && !ctx.spkis.includes(r.spki)) ctx.spkis.push(r.spki);
    if (r.error) {
      add('FAIL', `TLS ${host} (${roles.join(', ')})`, r.error,
        /self.signed|unable to get local issuer|unable to verify/i.test(r.error)
          ? 'serve a certificate from a public CA (browsers follow Alt-Svc to HTTP/3 only for those), or give --ca FILE for a staging CA'
          : /altname|Hostname/i.test(r.error) ? `the certificate must cover ${u.hostname}`
            : `make https://${host} answer over TLS (DNS, firewall on TCP ${u.port || 443}, the server running)`);
    } else {
      add('PASS', `TLS ${host} (${roles.join(', ')})`, `${r.protocol}, ALPN ${r.alpn || 'none'}, certificate valid until ${r.validTo}`);
    }
  }
}

// The two origins: protocols, Alt-Svc, and /noop by the rules (and the payload mode's /noop?bytes=N when asked).
async function checkOrigins(ctx) {
  const { o, add, get, pageOrigin } = ctx;
  for (const kind of ['h2', 'h3']) {
    const origin = o[kind];
    const name = kind === 'h2' ? 'HTTP/2 origin' : 'HTTP/3 origin';
    const speaks = ORIGIN_PROTOCOLS[kind];
    if (ctx.alpn[origin.host] !== undefined && speaks.includes('h2') && ctx.alpn[origin.host] !== 'h2') {
      add('FAIL', `${name} speaks HTTP/2`, `TLS ALPN chose ${ctx.alpn[origin.host] || 'nothing'}, not h2`,
        'turn HTTP/2 on for this host (Caddy: protocols of its listener; nginx: http2 on)');
    }
    const noopUrl = new URL(`${NOOP.path}?h3probe-doctor=${Date.now()}`, origin);
    let res;
    try {
      res = await get(noopUrl, { headers: { origin: pageOrigin } });
    } catch (err) {
      add('FAIL', `${name} GET ${NOOP.path}`, err.message, `make ${origin.origin}${NOOP.path} reachable`);
      continue;
    }
    const altSvc = res.headers['alt-svc'];
    const announcesH3 = typeof altSvc === 'string' && /(^|,)\s*h3(-\d+)?=/.test(altSvc);
    if (speaks.includes('h3')) {
      if (announcesH3) add('PASS', `${name} announces HTTP/3`, `Alt-Svc: ${altSvc}`);
      else add('FAIL', `${name} announces HTTP/3`, altSvc ? `Alt-Svc: ${altSvc} (no h3)` : 'no Alt-Svc header',
        'enable HTTP/3 on this host (UDP 443 open) so that it sends Alt-Svc: h3=":443"; `h3probe origins` writes such a Caddyfile');
    } else if (announcesH3) {
      add('FAIL', `${name} offers no HTTP/3`, `Alt-Svc: ${altSvc}`,
        'the control arm must never use HTTP/3: turn HTTP/3 off for this host and send no Alt-Svc (a listener of its own: docs/deploying.md, "The two origins")');
    } else {
      add('PASS', `${name} offers no HTTP/3`, altSvc ? `Alt-Svc: ${altSvc}` : 'no Alt-Svc');
    }
    if (res.status === NOOP.status) add('PASS', `${name} ${NOOP.path} status`, String(res.status));
    else add('FAIL', `${name} ${NOOP.path} status`, `${res.status}, not ${NOOP.status}`, `answer GET ${NOOP.path} (any query) with ${NOOP.status} and no body`);
    for (const rule of NOOP_HEADERS) {
      const problem = headerProblem(rule, res.headers[rule.name.toLowerCase()], pageOrigin);
      const label = `${name} ${NOOP.path} ${rule.name}`;
      if (!problem) add('PASS', label, res.headers[rule.name.toLowerCase()]);
      else add(rule.required ? 'FAIL' : 'WARN', label, problem, `send ${rule.name}: ${rule.value} (${rule.why})`);
    }
    if (o.payloadBytes > 0) await checkPayload(ctx, origin, name);
  }
}

// The payload mode: N bytes, as a browser asks (it accepts compressed answers), with the /noop headers that matter.
async function checkPayload({ o, add, get, pageOrigin }, origin, name) {
  const label = `${name} ${NOOP.path}?${PAYLOAD.query}=${o.payloadBytes}`;
  const fix = `answer GET ${NOOP.path}?${PAYLOAD.query}=N with ${PAYLOAD.status} and N bytes, uncompressed (docs/deploying.md, ` +
    '"The payload mode"; `h3probe origins` writes such a Caddyfile)';
  let res;
  try {
    res = await get(new URL(`${NOOP.path}?h3probe-doctor=${Date.now()}&${PAYLOAD.query}=${o.payloadBytes}`, origin),
      { headers: { origin: pageOrigin, 'accept-encoding': 'gzip, deflate, br' } });
  } catch (err) {
    add('FAIL', label, err.message, fix);
    return;
  }
  const encoding = res.headers['content-encoding'];
  const problems = [
    ...(res.status === PAYLOAD.status ? [] : [`status ${res.status}, not ${PAYLOAD.status}`]),
    ...(encoding && encoding !== 'identity' ? [`Content-Encoding ${encoding}: the body's size on the wire is not N`] : []),
    ...(res.size === o.payloadBytes ? [] : [`${res.size} bytes, not ${o.payloadBytes}`]),
    ...NOOP_HEADERS.filter((rule) => rule.required && headerProblem(rule, res.headers[rule.name.toLowerCase()], pageOrigin))
      .map((rule) => `${rule.name}: ${headerProblem(rule, res.headers[rule.name.toLowerCase()], pageOrigin)}`),
  ];
  if (problems.length) add('FAIL', label, problems.join('; '), fix);
  else add('PASS', label, `${res.status}, ${res.size} bytes, no-store, CORS and Timing-Allow-Origin`);
}

// One page load in a real browser (--browser): the files it requested become the ones the module checks check.
async function checkBrowser(ctx) {
  if (ctx.o.browser) ctx.requested = await browserRun(ctx.o, ctx.add, ctx.spkis, ctx.get);
}

/**
 * What the table printed without --browser leaves out, said under it: every file can be served while the page's loads
 * still fail (a bundler that rewrote the module's imports), which only a browser loading the page sees.
 */
export const NO_PAGE_LOAD = 'Not checked: a page load. Every file above can be served while the page\'s bundle fails to load them;\n' +
  '--browser chromium (with --search as a user searches) loads the page as a user\'s browser does.';

// The module's files, fetched as the page fetches them (with its Origin when they are on another origin). Each one
// fails the deployment: without any of them there is no run (the main-thread fallback imports the same worker.js). Which files: named by a flag, else requested by the page in the browser run, else those
// the page leads to (its moduleUrl config, its scripts), else beside the page; the line says which.
async function checkModuleFiles(ctx) {
  const { o, add, get, pageOrigin } = ctx;
  const flags = { glue: 'module', worker: 'worker', wasm: 'wasm' };
  const found = await moduleFiles(o.page, get);
  const FROM = { flag: 'named by --%s', requested: 'as the page requested it', moduleUrl: 'from the page\'s moduleUrl',
    scripts: 'as the page\'s scripts name it', guessed: 'not found in the page: guessed beside it' };
  for (const file of ['glue', 'worker', 'wasm']) {
    const flag = flags[file];
    const [u, from] = (o.named?.[flag] && [o[flag], 'flag']) || (ctx.requested?.[flag] && [ctx.requested[flag], 'requested'])
      || (found[flag] && [found[flag], found.from]) || [o[flag], 'guessed'];
    const where = FROM[from].replace('%s', flag);
    const rule = MODULE_FILES[file];
    const label = `module ${file} ${u.pathname.split('/').pop()}`;
    const unsure = from === 'guessed' ? '; the page did not say where: --browser chromium loads it and checks the files it requests' : '';
    let res;
    try {
      res = await get(u, { headers: u.origin === pageOrigin ? {} : { origin: pageOrigin } });
    } catch (err) {
      add('FAIL', label, `${err.message} (${where})`, `serve ${u.href}${unsure}`);
      continue;
    }
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (res.status !== 200 && from === 'guessed') {
      // Neither the page nor a browser load said where the file is, and it is not beside the page: a bundler that names
      // its chunks by hash alone (webpack's js/347.js) leaves nothing a fetch can follow. Failing here would fail every
      // working webpack or Next.js page; the file is not checked, and the line says what checks it.
      add('SKIP', label, `not checked: the page does not say where its ${file} is, and ${u.href} answered ${res.status}`,
        `run with --browser chromium (and --search as a user searches) to check the files the page requests, or name it with --${flag}`);
    } else if (res.status !== 200) {
      add('FAIL', label, `GET ${u.href}: ${res.status} (${where})`, `serve the package's web/dist/${rule.file} there (or point --${flag} at it)` +
        (file === 'worker' ? `: without it no run starts (the main-thread fallback imports the same file), and each sampled load sends a load_error, worker_import. A bundler that does not copy it (esbuild) needs it copied next to the bundle: docs/embedding.md, "Bundlers"` : ''));
    } else if (!rule.types.includes(type)) {
      add('FAIL', label, `Content-Type ${type || '(none)'} (${where})`, `serve it as ${rule.types[0]} (${rule.why})`);
    } else if (file === 'worker' && u.origin !== pageOrigin) {
      add('FAIL', label, `on another origin than the page (${u.origin})`, `serve worker.js, the glue and the .wasm from the page's origin (${rule.why})`);
    } else if (u.origin !== pageOrigin && !allows(res.headers['access-control-allow-origin'], pageOrigin)) {
      add('FAIL', label, `on another origin without Access-Control-Allow-Origin for ${pageOrigin}`, 'send Access-Control-Allow-Origin for the page, or serve the module from the page\'s origin');
    } else {
      add('PASS', label, `${res.status}, Content-Type ${type} (${where})`);
    }
  }
}

async function checkHealthz({ o, add, get }) {
  try {
    const res = await get(o.healthz);
    let body = {};
    try { body = JSON.parse(res.body); } catch { /* not the collector's answer */ }
    if (res.status === 200 && body.status === 'ok') add('PASS', 'collector /healthz', `${res.status} ${res.body.slice(0, 80)}`);
    else if (res.status === 404 && o.healthz.origin === o.collector.origin && body.status === undefined) {
      add('SKIP', 'collector /healthz', `${o.healthz.href}: 404 (the proxy forwards the beacon path only)`,
        'give --healthz with the collector\'s own address, e.g. http://127.0.0.1:8787/healthz from its machine');
    } else {
      add('FAIL', 'collector /healthz', `${res.status} ${res.body.slice(0, 120)}`, 'the collector runs but cannot store: see its log (disk, database permissions)');
    }
  } catch (err) {
    add('FAIL', 'collector /healthz', err.message, 'start the collector (h3probe collector) and check the address');
  }
}

const proxyDown = (status) => status === 502 || status === 503 || status === 504;

async function checkPreflight({ o, add, get, pageOrigin }) {
  if (o.collector.origin === pageOrigin) {
    add('PASS', 'collector CORS preflight', 'same origin as the page: no CORS needed');
    return;
  }
  try {
    const res = await get(o.collector, { method: 'OPTIONS', headers: { origin: pageOrigin, 'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type' } });
    const methods = String(res.headers['access-control-allow-methods'] ?? '');
    if (res.status >= 200 && res.status < 300 && allows(res.headers['access-control-allow-origin'], pageOrigin) && /\bPOST\b/.test(methods)) {
      add('PASS', 'collector CORS preflight', `${res.status}, Access-Control-Allow-Origin ${res.headers['access-control-allow-origin']}`);
    } else {
      add('FAIL', 'collector CORS preflight', `${res.status}, Access-Control-Allow-Origin ${res.headers['access-control-allow-origin'] ?? '(none)'}`,
        proxyDown(res.status) ? 'the proxy cannot reach the collector: start it, check --collector-upstream'
          : `allow the page's origin: h3probe collector --allowed-origins ${pageOrigin} (or *)`);
    }
  } catch (err) {
    add('FAIL', 'collector CORS preflight', err.message, 'make the beacon URL reachable');
  }
}

async function checkTestBeacon({ o, add, get, pageOrigin }) {
  try {
    const body = JSON.stringify(doctorBeacon(PACKAGE_VERSION));
    const res = await get(o.collector, { method: 'POST', body, headers: { origin: pageOrigin, 'content-type': 'text/plain;charset=UTF-8' } });
    if (res.status === 204) add('PASS', 'collector test beacon', `204 (run_id ${DOCTOR_ID})`);
    else add('FAIL', 'collector test beacon', `${res.status} ${res.body.slice(0, 120)}`,
      proxyDown(res.status) ? 'the proxy cannot reach the collector: start it, check --collector-upstream'
        : res.status === 403 ? `allow the page's origin: h3probe collector --allowed-origins ${pageOrigin}`
          : res.status === 404 ? 'point --collector at the beacon URL the page sends to (the collector\'s --path, /beacon by default)'
            : 'see the collector\'s log');
  } catch (err) {
    add('FAIL', 'collector test beacon', err.message, 'make the beacon URL reachable');
  }
}

/** Why a /noop response header breaks its rule (null: it holds), for a page at pageOrigin. */
function headerProblem(rule, value, pageOrigin) {
  if (value === undefined) return 'missing';
  const v = String(value);
  switch (rule.name) {
    case 'Access-Control-Allow-Origin': return allows(v, pageOrigin) ? null : `${v} does not allow ${pageOrigin}`;
    case 'Timing-Allow-Origin': return v.split(',').map((s) => s.trim()).some((s) => s === '*' || s === pageOrigin) ? null : `${v} does not list ${pageOrigin}`;
    case 'Cache-Control': return v.split(',').map((s) => s.trim().toLowerCase()).includes(rule.value) ? null : `${v}, not ${rule.value}`;
    case 'Server-Timing': {
      const name = rule.value.split(';')[0];
      return v.split(',').some((m) => m.trim().split(';')[0] === name) ? null : `no "${name}" metric in ${v}`;
    }
    default: return v === rule.value ? null : `${v}, not ${rule.value}`;
  }
}

const allows = (acao, origin) => acao === '*' || acao === origin;

const PACKAGE_VERSION = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** The table: one line per check, the fix under each failing (or skipped) one. */
export function formatChecks(checks) {
  const width = Math.max(...checks.map((c) => c.check.length));
  const lines = checks.map((c) => `${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.detail}${c.fix && c.status !== 'PASS' ? `\n      fix: ${c.fix}` : ''}`);
  const count = (s) => checks.filter((c) => c.status === s).length;
  lines.push('', `${count('PASS')} passed, ${count('FAIL')} failed, ${count('WARN')} warnings, ${count('SKIP')} skipped`);
  return lines.join('\n');
}
