// `h3probe doctor --page URL --h2 ORIGIN --h3 ORIGIN --collector URL`: checks a deployment from outside, as a browser
// would meet it, and prints one line per check with the fix for each failing one. What the origins must send is read
// from web/server/originRules.mjs (the rules `h3probe origins` writes), never restated here.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { MODULE_FILES, NOOP, NOOP_HEADERS, ORIGIN_PROTOCOLS, PAYLOAD } from '../server/originRules.mjs';

/** run_id, page_load_id and config_id of everything doctor sends. */
import { DOCTOR_ID } from '../report/testBeacons.mjs';

export { DOCTOR_ID };

export const USAGE = `usage: h3probe doctor --page URL --h2 ORIGIN --h3 ORIGIN --collector URL [options]

Checks from outside what a deployment needs, and prints PASS, FAIL, WARN or SKIP per check with the fix for each
failing one: TLS on every host; the HTTP/2 origin offers no HTTP/3 (no Alt-Svc); the HTTP/3 origin announces it; both
answer /noop as the probe needs (status, no-store, CORS and Timing-Allow-Origin for the page, Server-Timing); the
module's glue, worker and .wasm are served with their types (the worker from the page's origin); the collector's
/healthz; its CORS preflight for the page's origin; a test beacon answered 204.

  --page URL          a page that embeds the probe (its origin is the Origin the checks send)
  --h2 ORIGIN         the HTTP/2 origin, as in the page config (h2Origin)
  --h3 ORIGIN         the HTTP/3 origin (h3Origin)
  --collector URL     the beacon URL, as in the page config (beaconUrl)

options:
  --module URL        the glue h3probe_browser.mjs as served; the config key moduleUrl
  --wasm URL          the .wasm as served
  --worker URL        the worker as served
                      (each default: the file the page's own scripts lead to, a bundler's renamed one included: the
                      worker its gate starts, the glue and .wasm that worker names; where none is found, next to the
                      page, the .wasm and worker beside the glue)
  --healthz URL       the collector's /healthz (default: /healthz on the beacon URL's origin; a proxy that forwards
                      only /beacon, as the generated Caddyfile does, makes that check SKIP: give the collector's own
                      address, e.g. http://127.0.0.1:8787/healthz, from its machine)
  --ca FILE           also trust this CA certificate (PEM), e.g. a staging or local CA
  --resolve HOST:PORT:ADDRESS  connect to ADDRESS for HOST:PORT (curl's form; repeatable), for a deployment not yet in
                      DNS: TLS and the Host header still name HOST (with --browser: Chromium maps HOST to ADDRESS, Firefox
                      takes one address for every name)
  --browser NAME      chromium or firefox: also one real run in that browser, printing the protocols seen
                      (from a checkout of the repository with npm run deps: the browser drivers are not in the package)
  --payload-bytes N   the page config's payloadBytes: also check that both origins answer /noop?bytes=N with N bytes,
                      uncompressed, and the /noop headers (default 0: the no-op only)
  --timeout MS        per request (default 10000)
  --json              print the checks as JSON instead of the table
  --help              this text

The test beacon has run_id, page_load_id and config_id "${DOCTOR_ID}", outcome "error" and no samples: the
collector stores it once (later ones are duplicates, still answered 204); it adds no request to any report figure.
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
      'payload-bytes': { type: 'string' }, resolve: { type: 'string', multiple: true },
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
  else console.log(formatChecks(checks));
  if (checks.some((c) => c.status === 'FAIL')) process.exitCode = 1;
}

/**
 * The parsed options ({page, h2, h3, collector, module, wasm, worker, healthz, ca, browser, timeoutMs, payloadBytes,
 * resolve: Map 'host:port' → address})
 * and every problem.
 */
export function doctorOptions(a) {
  const problems = [];
  const url = (flag, value, { origin = false, required = true, schemes = ['https:'] } = {}) => {
    if (value === undefined) {
      if (required) problems.push(`--${flag} is required`);
      return undefined;
    }
    let u;
    try { u = new URL(value); } catch { problems.push(`--${flag}: "${value}" is not a URL`); return undefined; }
    if (!schemes.includes(u.protocol)) problems.push(`--${flag}: "${value}" must be ${schemes.map((s) => s.slice(0, -1)).join(' or ')}`);
    else if (origin && u.origin !== value.replace(/\/$/, '')) problems.push(`--${flag}: "${value}" must be an origin (no path), like https://h2.example.com`);
    return u;
  };
  const page = url('page', a.page);
  const h2 = url('h2', a.h2, { origin: true });
  const h3 = url('h3', a.h3, { origin: true });
  const collector = url('collector', a.collector, { schemes: ['https:', 'http:'] });
  const moduleUrl = url('module', a.module, { required: false, schemes: ['https:', 'http:'] }) ?? (page && new URL('h3probe_browser.mjs', page));
  const wasm = url('wasm', a.wasm, { required: false, schemes: ['https:', 'http:'] }) ?? (moduleUrl && new URL('h3probe_browser.wasm', moduleUrl));
  const worker = url('worker', a.worker, { required: false, schemes: ['https:', 'http:'] }) ?? (moduleUrl && new URL(MODULE_FILES.worker.file, moduleUrl));
  const healthz = url('healthz', a.healthz, { required: false, schemes: ['https:', 'http:'] }) ?? (collector && new URL('/healthz', collector));
  if (h2 && h3 && h2.origin === h3.origin) problems.push('--h2 and --h3 must be different origins');
  let ca;
  if (a.ca !== undefined) {
    try { ca = fs.readFileSync(a.ca, 'utf8'); } catch (err) { problems.push(`--ca: ${err.message}`); }
  }
  if (a.browser !== undefined && !['chromium', 'firefox'].includes(a.browser)) problems.push(`--browser must be chromium or firefox, not "${a.browser}"`);
  const timeoutMs = a.timeout === undefined ? 10000 : Number(a.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) problems.push(`--timeout: "${a.timeout}" is not a number of milliseconds`);
  const payloadBytes = a['payload-bytes'] === undefined ? 0 : Number(a['payload-bytes']);
  if (!/^\d+$/.test(a['payload-bytes'] ?? '0') || payloadBytes > PAYLOAD.maxBytes) {
    problems.push(`--payload-bytes: "${a['payload-bytes']}" is not a number of bytes from 0 to ${PAYLOAD.maxBytes}`);
  }
  // --resolve HOST:PORT:ADDRESS (curl's form, repeatable): connect there for that host and port, for a deployment not
  // yet in DNS; TLS and the Host header still name the host.
  const resolve = new Map();
  for (const entry of [a.resolve ?? []].flat()) {
    const m = /^([^:[\]]+):(\d{1,5}):\[?([^\]]+)\]?$/.exec(entry);
    if (!m || net.isIP(m[3]) === 0 || Number(m[2]) > 65535) {
      problems.push(`--resolve: "${entry}" is not HOST:PORT:ADDRESS (an IP address: 203.0.113.7, or [2001:db8::7])`);
    } else {
      resolve.set(`${m[1].toLowerCase()}:${Number(m[2])}`, m[3]);
    }
  }
  if (resolve.size && a.browser === 'firefox' && new Set(resolve.values()).size > 1) {
    problems.push('--resolve with --browser firefox: Firefox maps every host name to one address (network.dns.forceResolve): give one address, or use --browser chromium');
  }
  // Which module files were named: the others are looked for in what the page loads (moduleFiles()), then guessed.
  const named = { module: a.module !== undefined, worker: a.worker !== undefined, wasm: a.wasm !== undefined };
  return { options: { page, h2, h3, collector, module: moduleUrl, wasm, worker, healthz, ca, browser: a.browser, timeoutMs, payloadBytes,
    resolve, named }, problems };
}

/** Runs every check; resolves to [{ status: PASS|FAIL|WARN|SKIP, check, detail, fix }]. */
export async function runDoctor(o) {
  const checks = [];
  const add = (status, check, detail, fix = '') => checks.push({ status, check, detail, fix });
  const pageOrigin = o.page.origin;
  const ca = o.ca ? [...tls.rootCertificates, o.ca] : undefined;
  const resolve = o.resolve ?? new Map();
  const get = (url, opts = {}) => request(url, { ca, timeoutMs: o.timeoutMs, resolve, ...opts });

  // TLS, once per host, with the ALPN protocols an HTTP/2 client offers.
  const hosts = new Map();
  for (const [role, u] of [['page', o.page], ['HTTP/2 origin', o.h2], ['HTTP/3 origin', o.h3], ['collector', o.collector]]) {
    if (u.protocol !== 'https:') continue;
    const key = u.host;
    if (!hosts.has(key)) hosts.set(key, { u, roles: [] });
    hosts.get(key).roles.push(role);
  }
  const alpn = {};
  const spkis = [];
  for (const [host, { u, roles }] of hosts) {
    const r = await tlsHandshake(u, { ca, timeoutMs: o.timeoutMs, resolve });
    alpn[host] = r.alpn;
    if (r.spki && !spkis.includes(r.spki)) spkis.push(r.spki);
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

  // The two origins: protocols, Alt-Svc, and /noop by the rules.
  for (const kind of ['h2', 'h3']) {
    const origin = o[kind];
    const name = kind === 'h2' ? 'HTTP/2 origin' : 'HTTP/3 origin';
    const speaks = ORIGIN_PROTOCOLS[kind];
    if (alpn[origin.host] !== undefined && speaks.includes('h2') && alpn[origin.host] !== 'h2') {
      add('FAIL', `${name} speaks HTTP/2`, `TLS ALPN chose ${alpn[origin.host] || 'nothing'}, not h2`,
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
    if (o.payloadBytes > 0) await checkPayload(origin, name);
  }

  // The payload mode: N bytes, as a browser asks (it accepts compressed answers), with the /noop headers that matter.
  async function checkPayload(origin, name) {
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

  // The module's files, fetched as the page fetches them (with its Origin when they are on another origin). Each one
  // fails the deployment: without the glue or the .wasm there is no run, and without the worker every run falls back
  // to the page's main thread. Those not named by a flag are the ones the page's own scripts lead to, where found.
  const flags = { glue: 'module', worker: 'worker', wasm: 'wasm' };
  const found = await moduleFiles(o, get);
  // The files checked, and those the browser run uses: named by a flag, else found, else beside the page.
  const files = Object.fromEntries(Object.values(flags).map((flag) => [flag, (!o.named?.[flag] && found[flag]) || o[flag]]));
  for (const file of ['glue', 'worker', 'wasm']) {
    const u = files[flags[file]];
    const rule = MODULE_FILES[file];
    const label = `module ${file} ${u.pathname.split('/').pop()}`;
    let res;
    try {
      res = await get(u, { headers: u.origin === pageOrigin ? {} : { origin: pageOrigin } });
    } catch (err) {
      add('FAIL', label, err.message, `serve ${u.href}`);
      continue;
    }
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (res.status !== 200) {
      add('FAIL', label, `GET ${u.href}: ${res.status}`, `serve the package's web/dist/${rule.file} there (or point --${flags[file]} at it)` +
        (file === 'worker' ? `: without it every run falls back to the page's main thread. A bundler that does not copy it (esbuild) needs it copied next to the bundle: docs/embedding.md, "Bundlers"` : ''));
    } else if (!rule.types.includes(type)) {
      add('FAIL', label, `Content-Type ${type || '(none)'}`, `serve it as ${rule.types[0]} (${rule.why})`);
    } else if (file === 'worker' && u.origin !== pageOrigin) {
      add('FAIL', label, `on another origin than the page (${u.origin})`, `serve worker.js, the glue and the .wasm from the page's origin (${rule.why})`);
    } else if (u.origin !== pageOrigin && !allows(res.headers['access-control-allow-origin'], pageOrigin)) {
      add('FAIL', label, `on another origin without Access-Control-Allow-Origin for ${pageOrigin}`, 'send Access-Control-Allow-Origin for the page, or serve the module from the page\'s origin');
    } else {
      add('PASS', label, `${res.status}, Content-Type ${type}`);
    }
  }

  // The collector: health, CORS preflight, one test beacon.
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
  if (o.collector.origin === pageOrigin) {
    add('PASS', 'collector CORS preflight', 'same origin as the page: no CORS needed');
  } else {
    try {
      const res = await get(o.collector, { method: 'OPTIONS', headers: { origin: pageOrigin, 'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type' } });
      const methods = String(res.headers['access-control-allow-methods'] ?? '');
      if (res.status >= 200 && res.status < 300 && allows(res.headers['access-control-allow-origin'], pageOrigin) && /\bPOST\b/.test(methods)) {
        add('PASS', 'collector CORS preflight', `${res.status}, Access-Control-Allow-Origin ${res.headers['access-control-allow-origin']}`);
      } else {
        add('FAIL', 'collector CORS preflight', `${res.status}, Access-Control-Allow-Origin ${res.headers['access-control-allow-origin'] ?? '(none)'}`,
          res.status === 502 || res.status === 503 || res.status === 504 ? 'the proxy cannot reach the collector: start it, check --collector-upstream'
            : `allow the page's origin: h3probe collector --allowed-origins ${pageOrigin} (or *)`);
      }
    } catch (err) {
      add('FAIL', 'collector CORS preflight', err.message, 'make the beacon URL reachable');
    }
  }
  try {
    const body = JSON.stringify(doctorBeacon(PACKAGE_VERSION));
    const res = await get(o.collector, { method: 'POST', body, headers: { origin: pageOrigin, 'content-type': 'text/plain;charset=UTF-8' } });
    if (res.status === 204) add('PASS', 'collector test beacon', `204 (run_id ${DOCTOR_ID})`);
    else add('FAIL', 'collector test beacon', `${res.status} ${res.body.slice(0, 120)}`,
      res.status === 502 || res.status === 503 || res.status === 504 ? 'the proxy cannot reach the collector: start it, check --collector-upstream'
        : res.status === 403 ? `allow the page's origin: h3probe collector --allowed-origins ${pageOrigin}`
          : res.status === 404 ? 'point --collector at the beacon URL the page sends to (the collector\'s --path, /beacon by default)'
            : 'see the collector\'s log');
  } catch (err) {
    add('FAIL', 'collector test beacon', err.message, 'make the beacon URL reachable');
  }

  if (o.browser) await browserRun({ ...o, ...files }, add, spkis);
  return checks;
}

/**
 * The module files the page loads, as its own scripts name them: the worker that the gate's code in one of the page's
 * scripts (or a module they import) starts (`new URL('./worker.js', import.meta.url)`, or a bundler's renamed worker-HASH.js), then the glue and
 * the .wasm that worker names. { worker, module, wasm }: each a URL, or undefined where not found (a page that loads
 * the gate from elsewhere, moduleUrl set at run time): the checks then use the default beside the page.
 */
async function moduleFiles(o, get) {
  const fetched = new Map();
  const text = async (u) => {
    if (!fetched.has(u.href)) {
      fetched.set(u.href, await get(u).then((r) => (r.status === 200 ? r.body : null), () => null));
    }
    return fetched.get(u.href);
  };
  // Every quoted relative or absolute path whose file name matches, taken relative to the file that names it.
  const named = (body, base, file) => [...body.matchAll(new RegExp(`["'\`]((?:[^"'\`\\s]*/)?${file})["'\`]`, 'g'))]
    .flatMap((m) => { try { return [new URL(m[1], base)]; } catch { return []; } });
  // Of the paths a file names, the first that is served (and, when asked, says `needle`); else the first named.
  const pick = async (urls, needle = '') => {
    for (const u of urls) if ((await text(u))?.includes(needle)) return u;
    return urls[0];
  };
  const html = (await text(o.page)) ?? '';
  // The page's scripts, then the modules they import (a path, not a package name), breadth first, at most 30 files.
  const queue = [...html.matchAll(/<script\b[^>]*\bsrc\s*=\s*["']([^"']+)["']/gi)].map((m) => new URL(m[1], o.page));
  const seen = new Set();
  let worker;
  while (queue.length && seen.size < 30 && !worker) {
    const script = queue.shift();
    if (seen.has(script.href)) continue;
    seen.add(script.href);
    const body = (await text(script)) ?? '';
    // The gate names worker.js twice (beside the glue, and beside itself): the one served, which imports the glue.
    const workers = named(body, script, 'worker(?:[-.][\\w-]+)?\\.js');
    if (workers.length) worker = await pick(workers, 'h3probe_browser');
    for (const m of body.matchAll(/\b(?:from|import)\s*\(?\s*["']((?:\.{1,2}\/|\/)[^"']+)["']/g)) {
      try { queue.push(new URL(m[1], script)); } catch { /* not a URL */ }
    }
  }
  if (!worker) return {};
  const code = (await text(worker)) ?? '';
  const glue = named(code, worker, 'h3probe_browser[\\w.-]*\\.m?js');
  const wasm = named(code, worker, 'h3probe_browser[\\w.-]*\\.wasm');
  return { worker, module: glue.length ? await pick(glue) : undefined, wasm: wasm.length ? await pick(wasm) : undefined };
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

// The address --resolve gives for a URL's host and port (undefined: the system's resolver).
const resolvedAddress = (u, resolve) => resolve?.get(`${u.hostname.toLowerCase()}:${Number(u.port || (u.protocol === 'https:' ? 443 : 80))}`);

function tlsHandshake(u, { ca, timeoutMs, resolve: map }) {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: resolvedAddress(u, map) ?? u.hostname, port: Number(u.port || 443), servername: u.hostname, ca,
      ALPNProtocols: ['h2', 'http/1.1'] });
    const done = (r) => { clearTimeout(timer); socket.destroy(); resolve(r); };
    const timer = setTimeout(() => done({ error: `no TLS answer in ${timeoutMs} ms` }), timeoutMs);
    socket.once('secureConnect', () => {
      const cert = socket.getPeerX509Certificate();
      const spki = createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
      done({ protocol: socket.getProtocol(), alpn: socket.alpnProtocol || '', validTo: cert.validTo, spki });
    });
    socket.once('error', (err) => done({ error: err.message }));
  });
}

/** One HTTP/1.1 request; resolves to { status, headers, body, size } (body as text, at most 64 KB kept; size: its bytes). */
function request(u, { method = 'GET', headers = {}, body, ca, timeoutMs, resolve: map }) {
  return new Promise((resolve, reject) => {
    const lib = u.protocol === 'https:' ? https : http;
    const address = resolvedAddress(u, map);
    const lookup = address && ((host, options, done) => (options?.all ? done(null, [{ address, family: net.isIP(address) }])
      : done(null, address, net.isIP(address))));
    const req = lib.request(u, { method, headers: { 'user-agent': 'h3probe-doctor', ...headers }, ca, agent: false, timeout: timeoutMs,
      ...(lookup ? { lookup } : {}) }, (res) => {
      let text = '';
      let size = 0;
      res.on('data', (d) => {
        size += d.length;
        if (text.length < 65536) text += d.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text, size }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`${method} ${u.href}: ${err.message}`)));
    req.end(body);
  });
}

/** The table: one line per check, the fix under each failing (or skipped) one. */
export function formatChecks(checks) {
  const width = Math.max(...checks.map((c) => c.check.length));
  const lines = checks.map((c) => `${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.detail}${c.fix && c.status !== 'PASS' ? `\n      fix: ${c.fix}` : ''}`);
  const count = (s) => checks.filter((c) => c.status === s).length;
  lines.push('', `${count('PASS')} passed, ${count('FAIL')} failed, ${count('WARN')} warnings, ${count('SKIP')} skipped`);
  return lines.join('\n');
}

/**
 * One real run in a browser, from the page's origin: the package's own gate and run (web/dist) imported into the page
 * from blob: URLs, configured with the deployment's origins and the served glue (moduleUrl), one searchCompleted(). The
 * beacon is kept in the tab (navigator.sendBeacon replaced there, and in the worker, which sends it with a keepalive
 * fetch, that fetch): its samples say which protocol each request used, and the report gets no doctor run. The browser
 * drivers (browsers.mjs) need playwright-core and puppeteer-core, which the package does not pull in.
 */
async function browserRun(o, add, spkis) {
  const label = `${o.browser} run`;
  let drivers;
  try {
    drivers = { ...await import('./browsers.mjs'), ...await import('./chromium.mjs'), ...await import('./firefox.mjs') };
  } catch (err) {
    add('SKIP', label, `the browser drivers cannot load (${err.code ?? err.message})`,
      'npm install playwright-core puppeteer-core beside h3probe (or run doctor from a checkout after npm run deps), with Chromium or Firefox ESR installed');
    return;
  }
  const missing = drivers.engineMissing(o.browser);
  if (missing) {
    add('SKIP', label, missing, 'install the browser, or leave out --browser');
    return;
  }
  // A private CA (--ca): Chromium accepts the servers' keys by hash and must be told to use QUIC (it follows Alt-Svc
  // only for public roots); Firefox accepts any certificate under automation and maps the h3 origin to h3 itself.
  const h3Port = Number(o.h3.port || 443);
  const privateCa = Boolean(o.ca);
  const stackLike = {
    hosts: { h3: o.h3.hostname }, ports: { h3: h3Port },
    chromiumArgs: ({ forceQuic, extra = [] }) => drivers.chromiumArgs({ spki: spkis.join(','),
      quicOrigins: [`${o.h3.hostname}:${h3Port}`], forceQuic, extra,
      hostResolverRules: o.resolve?.size ? [...o.resolve].map(([hostPort, address]) => `MAP ${hostPort.split(':')[0]} ${address}`).join(', ') : null }),
  };
  let launched;
  try {
    if (o.browser === 'chromium') {
      launched = await drivers.launchEngine('chromium', stackLike, { forceQuic: privateCa });
    } else {
      const browser = await drivers.launchFirefox(stackLike, { extraPrefs: { 'network.dns.forceResolve': o.resolve?.size ? [...o.resolve.values()][0] : '',
        ...(privateCa ? {} : { 'network.http.http3.alt-svc-mapping-for-testing': '' }) } });
      launched = { engine: 'firefox', browser, close: () => browser.close() };
    }
  } catch (err) {
    add('FAIL', label, `the browser did not start: ${err.message.split('\n')[0]}`, 'check the browser installation');
    return;
  }
  try {
    const tab = await drivers.openTab(launched);
    await tab.page.goto(o.page.href);
    const dist = (file) => fs.readFileSync(new URL(`../dist/${file}`, import.meta.url), 'utf8');
    const config = { h2Origin: o.h2.origin, h3Origin: o.h3.origin, beaconUrl: o.collector.href, configId: DOCTOR_ID,
      sampleRate: 1, moduleUrl: o.module.href };
    const r = await tab.page.evaluate(async ({ gate, run, config, workerUrl }) => {
      const beacons = [];
      navigator.sendBeacon = (url, body) => { beacons.push(String(body)); return true; };
      const blob = (text) => URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
      // The served worker, run from a wrapper whose keepalive fetch (the beacon's) posts the beacon to the page.
      const NativeWorker = Worker;
      window.Worker = function DoctorWorker(url, options) {
        const worker = new NativeWorker(blob(`import ${JSON.stringify(workerUrl)};
          const send = fetch;
          self.fetch = (url, init) => (init && init.keepalive ? (postMessage({ doctorBeacon: String(init.body) }),
            Promise.resolve(new Response(null, { status: 204 }))) : send(url, init));`), options);
        worker.addEventListener('message', ({ data }) => data.doctorBeacon && beacons.push(data.doctorBeacon));
        return worker;
      };
      try {
        const m = await import(blob(gate.replace('"./run.js"', JSON.stringify(blob(run)))));
        m.configure(config);
        const outcome = await m.searchCompleted();
        const status = await m.whenDone();
        return { outcome, errors: status.errors ?? [], beacon: beacons[0] ?? null };
      } catch (err) {
        return { outcome: 'import_failed', errors: [String(err)], beacon: null };
      }
    }, { gate: dist('h3probe.js'), run: dist('run.js'), config, workerUrl: o.worker.href });
    const samples = r.beacon ? JSON.parse(r.beacon).samples : [];
    const seen = (phase) => samples.filter((x) => x.phase === phase).map((x) => `${x.result}/${x.protocol || '-'}`);
    const tally = (list) => Object.entries(list.reduce((acc, k) => ({ ...acc, [k]: (acc[k] ?? 0) + 1 }), {})).map(([k, n]) => `${k}×${n}`).join(' ');
    const control = seen('control');
    const treatment = seen('treatment');
    // Where the core ran: in this run the worker is the one the page loads (named by --worker, or found from the page).
    const context = r.beacon ? JSON.parse(r.beacon).context ?? {} : {};
    const where = context.run_context === 'main' ? `; on the main thread (worker_fallback ${context.worker_fallback})` : '';
    const detail = `control ${tally(control) || 'none'}; treatment ${tally(treatment) || 'none'}${where}${r.errors.length ? `; errors: ${r.errors.join('; ')}` : ''}`;
    if (r.outcome === 'import_failed') {
      add('SKIP', label, `the page did not let doctor import the module from a blob: URL (${r.errors[0]})`, 'a CSP without blob: in script-src: check the page by hand');
    } else if (r.outcome !== 'started' || !r.beacon) {
      add('FAIL', label, `searchCompleted() resolved to ${r.outcome}; ${detail}`, 'read the errors: the module files, the origins\' CORS, the page\'s CSP (connect-src for both origins)');
    } else if (control.length && control.every((x) => x === 'ok/h2') && treatment.length && treatment.every((x) => x === 'ok/h3')) {
      add('PASS', label, detail);
    } else if (treatment.some((x) => x === 'ok/h2') && control.every((x) => x === 'ok/h2')) {
      add('WARN', label, detail, 'the treatment arm fell back to HTTP/2: UDP 443 blocked on this network, or the browser has not learned Alt-Svc (a private CA without --ca)');
    } else {
      add('FAIL', label, detail, 'the control arm must be ok/h2 and the treatment arm ok/h3: see the failing checks above');
    }
  } catch (err) {
    add('FAIL', label, err.message.split('\n')[0], `check that ${o.page.href} loads in ${o.browser}`);
  } finally {
    await launched.close().catch(() => {});
  }
}
