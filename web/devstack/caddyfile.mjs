// Renders the Caddyfile for the page site and the test origins (a pure function, so its choices can be unit-tested).
import { NOOP, NOOP_HEADERS, caddyPayloadLines } from '../server/originRules.mjs';

/**
 * hosts: {page, h2, h3, and optionally h2b, h3b: a second origin of each kind, for A/A tests}; ports: the same keys and
 * collector; roots: {page, module: the built page module (web/dist)};
 * noopUpstream: port of a local server that answers /noop late (Caddy 2.6 has no sleep directive), or 0;
 * pageCsp: a Content-Security-Policy for the page site; beaconStatus: answer POST /beacon with this status instead of
 * passing it to the collector; roots.fixtures: a folder served at /fixtures/ (e.g. remote configs for tests);
 * bindAddress: the address every site listens on (the lab binds its server namespace's 198.18.0.2);
 * collectorUpstream: where POST /beacon is proxied (default 127.0.0.1:ports.collector);
 * countryByClient: {clientIp: 'US', ...}: the page site sets the country header on proxied beacons from this table, as a
 * CDN's edge does from its geolocation ('XX', "no country", for any other client); countryHeader: its name.
 * forwardedForByClient: {clientIp: 'publicIp', ...}: the edge reports these clients as that address in X-Forwarded-For
 * (the lab's stand-in for a user's public address; any other client as itself).
 */
export function caddyfile({
  certPath, keyPath, hosts, ports, roots, h3 = true, tao = true, noopStatus = 204, noopUpstream = 0, h2Down = false,
  pageCsp = '', beaconStatus = 0, bindAddress = '127.0.0.1', claimProtocol = '', collectorUpstream = '', countryByClient = null,
  countryHeader = 'X-Country-Code', forwardedForByClient = null,
}) {
  const tls = `tls ${q(certPath)} ${q(keyPath)}`;
  const origin = (host, port) => site(host, port, bindAddress, tls, noopRoutes({ tao, noopStatus, noopUpstream, claimProtocol }));
  // Without h3 Caddy opens no UDP socket and sends no Alt-Svc: the "UDP blocked" case. The second origins follow the
  // first ones' settings.
  const h3Protocols = h3 ? 'h1 h2 h3' : 'h1 h2';
  const origins = [
    ...(h2Down ? [] : [['h2', 'h1 h2']]),
    ['h3', h3Protocols],
    ...(h2Down || !hosts.h2b || !ports.h2b ? [] : [['h2b', 'h1 h2']]),
    ...(hosts.h3b && ports.h3b ? [['h3b', h3Protocols]] : []),
  ];
  const blocks = [
    globals(bindAddress, [[ports.page, 'h1 h2'], ...origins.map(([key, protocols]) => [ports[key], protocols])]),
    site(hosts.page, ports.page, bindAddress, tls, pageRoutes({
      upstream: collectorUpstream || `127.0.0.1:${ports.collector}`, roots, pageCsp, beaconStatus, countryByClient, countryHeader,
      forwardedForByClient,
    })),
    ...origins.map(([key]) => origin(hosts[key], ports[key])),
  ];
  return blocks.join('\n');
}

function globals(bindAddress, listeners) {
  // With `bind ADDR` a `servers :PORT` block silently matches nothing in 2.6.2: the key must be the full bound address.
  const servers = listeners.map(([port, protocols]) => `\tservers ${bindAddress}:${port} {\n\t\tprotocols ${protocols}\n\t}`);
  return ['{', '\tadmin off', '\tauto_https off', '\tgrace_period 2s', ...servers, '}', ''].join('\n');
}

function site(host, port, bindAddress, tls, body) {
  if (!/^[0-9.]+$/.test(bindAddress)) throw new Error(`bindAddress must be an IPv4 address: ${bindAddress}`);
  return [`https://${host}:${port} {`, `\tbind ${bindAddress}`, `\t${tls}`, ...body.map((l) => `\t${l}`), '}', ''].join('\n');
}

function pageRoutes({ upstream, roots, pageCsp, beaconStatus, countryByClient, countryHeader, forwardedForByClient }) {
  if (!/^[0-9.]+:\d+$/.test(upstream)) throw new Error(`collector upstream must be IPv4:port: ${upstream}`);
  if (!/^[A-Za-z][\w-]*$/.test(countryHeader)) throw new Error(`bad country header name: ${countryHeader}`);
  const countries = Object.entries(countryByClient ?? {});
  for (const [ip, code] of countries) {
    if (!/^[0-9.]+$/.test(ip) || !/^[A-Z]{2}$/.test(code)) throw new Error(`bad client country entry: ${ip} ${code}`);
  }
  const forwarded = Object.entries(forwardedForByClient ?? {});
  for (const [ip, as] of forwarded) {
    if (!/^[0-9.]+$/.test(ip) || !/^[0-9.]+$/.test(as)) throw new Error(`bad client forwarded-for entry: ${ip} ${as}`);
  }
  const headers = [...(countries.length ? [`\t\theader_up ${countryHeader} {client_country}`] : []),
    // Replaces the X-Forwarded-For that reverse_proxy writes (Caddy 2.6.2 applies header_up after it).
    ...(forwarded.length ? ['\t\theader_up X-Forwarded-For {client_forwarded_for}'] : [])];
  const proxy = headers.length ? [`\treverse_proxy ${upstream} {`, ...headers, '\t}'] : [`\treverse_proxy ${upstream}`];
  return [
    'header Cache-Control no-store',
    ...(pageCsp ? [`header Content-Security-Policy ${q(pageCsp)}`] : []),
    ...(countries.length
      ? ['map {remote_host} {client_country} {', ...countries.map(([ip, code]) => `\t${ip} ${code}`), '\tdefault XX', '}']
      : []),
    ...(forwarded.length
      ? ['map {remote_host} {client_forwarded_for} {', ...forwarded.map(([ip, as]) => `\t${ip} ${as}`), '\tdefault {remote_host}', '}']
      : []),
    '@beacon {', '\tpath /beacon', '\tmethod POST OPTIONS', '}',
    'handle @beacon {', ...(beaconStatus ? [`\trespond ${beaconStatus}`] : proxy), '}',
    ...(roots.fixtures ? staticDir('handle_path /fixtures/*', roots.fixtures) : []),
    ...staticDir('handle_path /h3probe/*', roots.module),
    ...staticDir('handle', roots.page),
  ];
}

function staticDir(opener, root) {
  return [`${opener} {`, `\troot * ${q(root)}`, '\tfile_server', '}'];
}

function noopRoutes({ tao, noopStatus, noopUpstream, claimProtocol }) {
  const answer = noopUpstream ? `reverse_proxy 127.0.0.1:${noopUpstream}` : `respond ${noopStatus}`;
  // The headers are the production rules' (web/server/originRules.mjs); tao false drops Timing-Allow-Origin (a fault case).
  // claimProtocol (a fault case) makes Server-Timing name that protocol whatever the request came over, as an origin
  // behind a proxy that ends the browser's connection and forwards over HTTP/1.1 would.
  const headers = NOOP_HEADERS.filter((h) => tao || h.name !== 'Timing-Allow-Origin').map((h) => (claimProtocol
    && h.name === 'Server-Timing' ? { ...h, caddy: h.caddy.replace('{http.request.proto}', claimProtocol) } : h));
  if (claimProtocol && !/^[A-Za-z0-9/.]+$/.test(claimProtocol)) throw new Error(`claimProtocol: not a protocol name: ${claimProtocol}`);
  return [
    `@noop path ${NOOP.path}`,
    'handle @noop {',
    ...headers.map((h) => `\theader ${h.name} ${/[\s"]/.test(h.caddy) ? `\`${h.caddy}\`` : h.caddy}`),
    ...caddyPayloadLines().map((l) => `\t${l}`),
    `\t${answer}`,
    '}',
    'handle {', '\trespond 404', '}',
  ];
}

function q(value) {
  if (/["\n]/.test(value)) throw new Error(`path not usable in a Caddyfile: ${value}`);
  return `"${value}"`;
}
