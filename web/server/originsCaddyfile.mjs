// Renders a production Caddyfile (Caddy 2.6+) for the two test origins and, optionally, the collector behind Caddy.
// A pure function: `h3probe origins` (web/cli/origins.mjs) prints its result, and the unit tests read it.
//
// One Caddy, one machine: Caddy applies `protocols` per listener (address:port), and every site on the same listener
// shares it, so an HTTP/2-only site and an HTTP/3 site cannot both listen on plain :443. The split is one of:
//   bind   the two hosts on two addresses of the machine (each name's DNS record points at its own address), both on 443;
//   port   the HTTP/2 origin on another TCP port (h2Port, e.g. 8443), the HTTP/3 origin on 443;
//   only   one origin per Caddy (two machines, or two Caddy instances with their own addresses): `only: 'h2'` or 'h3'.
// h3Port and collectorPort (default 443, no flag) move the HTTP/3 origin and the collector site, and aaOrigins adds the
// second origin an A/A test needs (the page config's aaOrigin): the local stack (web/stack/stack.mjs) serves every site
// on a free loopback port from this very text.
import net from 'node:net';
import { NOOP, NOOP_HEADERS, ORIGIN_PROTOCOLS, OTHER_PATHS_STATUS, caddyPayloadLines } from './originRules.mjs';

const HTTPS_PORT = 443;

/** Every problem with the options, as messages (empty: usable). */
export function originsProblems(opts) {
  const { h2, h3, h2Bind, h3Bind, h2Port = HTTPS_PORT, h3Port = HTTPS_PORT, collectorPort = HTTPS_PORT, only, pageOrigins = [],
    collector, collectorUpstream, collectorBind, email, tls = 'acme', admin = 'off', aaOrigins = [] } = opts;
  const problems = [];
  if (only !== undefined && only !== 'h2' && only !== 'h3') problems.push(`--only must be h2 or h3, not "${only}"`);
  const wants = { h2: only !== 'h3', h3: only !== 'h2' };
  for (const [key, host] of [['h2', h2], ['h3', h3]]) {
    if (!wants[key]) continue;
    if (!host) problems.push(`--${key} HOST is required`);
    else if (!isHostName(host)) problems.push(`--${key}: "${host}" is not a host name (give e.g. ${key}.example.com: no scheme, port or path)`);
  }
  if (wants.h2 && wants.h3 && h2 && h3 && h2.toLowerCase() === h3.toLowerCase()) {
    problems.push('--h2 and --h3 must be different host names: one origin would carry both arms over HTTP/3 once Alt-Svc is learned');
  }
  for (const [flag, addr] of [['--h2-bind', h2Bind], ['--h3-bind', h3Bind], ['--collector-bind', collectorBind]]) {
    if (addr !== undefined && !net.isIP(addr)) problems.push(`${flag}: "${addr}" is not an IPv4 or IPv6 address`);
  }
  for (const [flag, port] of [['--h2-port', h2Port], ['h3Port', h3Port], ['collectorPort', collectorPort]]) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(`${flag}: "${port}" is not a port number`);
  }
  if (!only) {
    const binds = h2Bind !== undefined || h3Bind !== undefined;
    if (binds && (h2Bind === undefined || h3Bind === undefined)) {
      problems.push('--h2-bind and --h3-bind go together: one address for each origin');
    } else if (binds && h2Bind === h3Bind && h2Port === h3Port) {
      problems.push('--h2-bind and --h3-bind must differ (or give --h2-port): both origins would share one listener');
    } else if (!binds && h2Port === h3Port) {
      problems.push('the HTTP/2-only and the HTTP/3 origin cannot share one listener (Caddy sets protocols per address:port): ' +
        'give --h2-bind IP --h3-bind IP (two addresses, both on 443), or --h2-port PORT (the HTTP/2 origin on another port), ' +
        'or --only h2|h3 (one origin per machine)');
    }
  }
  problems.push(...aaProblems(aaOrigins, { h2: wants.h2 && h2, h3: wants.h3 && h3 }, [
    ...(wants.h2 ? [listenerKey(h2Bind, h2Port)] : []), ...(wants.h3 ? [listenerKey(h3Bind, h3Port)] : [])]));
  for (const o of pageOrigins) {
    if (!isHttpsOrigin(o)) problems.push(`--page-origin: "${o}" is not an origin like https://app.example.com (no path)`);
  }
  if (Boolean(collector) !== Boolean(collectorUpstream)) problems.push('--collector HOST and --collector-upstream HOST:PORT go together');
  if (collector) {
    if (!isHostName(collector)) problems.push(`--collector: "${collector}" is not a host name`);
    else if ([h2, h3].some((h) => h && h.toLowerCase() === collector.toLowerCase())) {
      problems.push('--collector must be a host name of its own, not one of the test origins');
    }
    if (!isUpstream(collectorUpstream)) problems.push(`--collector-upstream: "${collectorUpstream}" is not HOST:PORT (e.g. 127.0.0.1:8787)`);
  }
  if (collectorBind !== undefined && !collector) problems.push('--collector-bind needs --collector');
  if (collector && collectorBind === undefined && !only && (h2Bind !== undefined || h3Bind !== undefined)) {
    problems.push('--collector-bind IP is needed with --h2-bind/--h3-bind: a site without bind listens on every address of port 443');
  }
  if (email !== undefined && !/^[^\s@"{}]+@[^\s@"{}]+\.[^\s@"{}]+$/.test(email)) problems.push(`--email: "${email}" is not an e-mail address`);
  const files = tlsFiles(tls);
  if (tls !== 'acme' && tls !== 'internal' && !files) problems.push(`--tls must be acme, internal or CERT,KEY (two file paths), not "${tls}"`);
  if (files && files.some((f) => /["\n\r]/.test(f) || f === '')) problems.push('--tls: the certificate and key paths may not be empty or contain quotes');
  if (email !== undefined && tls !== 'acme' && tls !== 'internal') problems.push('--email is for ACME certificates (--tls acme)');
  if (admin !== 'off' && !isLoopbackAdmin(admin)) {
    problems.push(`--admin must be off or a loopback address and port (localhost:2019, 127.0.0.1:2019, [::1]:2019), not "${admin}"`);
  }
  return problems;
}

/** The Caddyfile text; throws an Error listing every problem if the options are not usable. */
export function originsCaddyfile(opts) {
  const problems = originsProblems(opts);
  if (problems.length) throw new Error(problems.join('\n'));
  const { h2, h3, h2Bind, h3Bind, h2Port = HTTPS_PORT, h3Port = HTTPS_PORT, collectorPort = HTTPS_PORT, only, pageOrigins = [],
    collector, collectorUpstream, collectorBind, email, tls = 'acme', admin = 'off', aaOrigins = [] } = opts;
  const origins = [];
  if (only !== 'h3') origins.push({ kind: 'h2', host: h2.toLowerCase(), bind: h2Bind, port: h2Port });
  if (only !== 'h2') origins.push({ kind: 'h3', host: h3.toLowerCase(), bind: h3Bind, port: h3Port });
  for (const o of aaOrigins) origins.push({ kind: o.kind, host: o.host.toLowerCase(), bind: o.bind, port: o.port ?? HTTPS_PORT, aa: true });
  const tlsLine = tlsDirective(tls);

  // Caddy's admin API (default localhost:2019) changes the running config without authentication: any local process could
  // reroute the origins. Off by default (reload by restarting Caddy); a loopback address when `caddy reload` is wanted.
  const globals = ['{', `\tadmin ${admin}`];
  if (email) globals.push(`\temail ${email}`);
  // Otherwise Caddy installs its local root into the machine's trust store (it runs update-ca-certificates as root).
  if (tls === 'internal') globals.push('\tskip_install_trust');
  // Without ACME no HTTP challenge needs port 80, and the origins serve the probe's HTTPS fetches only: no redirect
  // listener on 80, so two Caddys (a second deployment on one host, the local stack beside a trial) never contend for it.
  if (tls !== 'acme') globals.push('\tauto_https disable_redirects');
  for (const o of origins) {
    globals.push(`\t# the ${o.aa ? 'A/A test\'s second ' : ''}${o.kind === 'h2' ? 'HTTP/2-only' : 'HTTP/3'} origin's listener`);
    globals.push(`\tservers ${listenerKey(o.bind, o.port)} {`, `\t\tprotocols ${ORIGIN_PROTOCOLS[o.kind].join(' ')}`, '\t}');
  }
  globals.push('}');

  // `caddy fmt` keeps the comment right above the global options block.
  const blocks = [`${header(opts, origins)}\n${globals.join('\n')}`];
  for (const o of origins) {
    blocks.push(siteBlock(siteAddress(o.host, o.port), o.bind, tlsLine, noopRoutes(pageOrigins)));
  }
  if (collector) {
    blocks.push(siteBlock(siteAddress(collector.toLowerCase(), collectorPort), collectorBind, tlsLine, collectorRoutes(collectorUpstream)));
  }
  return `${blocks.join('\n\n')}\n`;
}

// The A/A test's second origins: each {kind: 'h2'|'h3', host, bind, port (default 443)}, a name and a listener of its own.
function aaProblems(aaOrigins, hosts, listeners) {
  const problems = [];
  const names = Object.values(hosts).filter(Boolean).map((h) => h.toLowerCase());
  const taken = [...listeners];
  for (const o of Array.isArray(aaOrigins) ? aaOrigins : [null]) {
    const { kind, host, bind, port = HTTPS_PORT } = o ?? {};
    if (kind !== 'h2' && kind !== 'h3') {
      problems.push(`aaOrigins: each is {kind: 'h2' or 'h3', host, bind, port}, not ${JSON.stringify(kind)}`);
      continue;
    }
    if (!isHostName(host)) problems.push(`aaOrigins: "${host}" is not a host name`);
    else if (names.includes(host.toLowerCase())) problems.push(`aaOrigins: ${host} is already an origin's name`);
    else names.push(host.toLowerCase());
    if (bind !== undefined && !net.isIP(bind)) problems.push(`aaOrigins: "${bind}" is not an IPv4 or IPv6 address`);
    if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(`aaOrigins: "${port}" is not a port number`);
    else if (taken.includes(listenerKey(bind, port))) problems.push(`aaOrigins: ${host} would share the listener ${listenerKey(bind, port)}`);
    else taken.push(listenerKey(bind, port));
  }
  return problems;
}

function header(opts, origins) {
  const lines = [
    '# h3probe test origins, generated by `h3probe origins`. Caddy 2.6 or later.',
    ...origins.map((o) => `# ${o.aa ? 'A/A, ' : ''}${o.kind === 'h2' ? 'HTTP/2 only (TCP, no Alt-Svc)' : 'HTTP/3 (UDP and TCP, Alt-Svc)'}: ` +
      `https://${o.host}${o.port === HTTPS_PORT ? '' : `:${o.port}`}${o.bind ? ` on ${o.bind}` : ''}`),
    '# Caddy sets protocols per listener (address:port): the two origins must not share one.',
  ];
  if ((opts.tls ?? 'acme') === 'acme') lines.push('# Certificates: ACME (each name must resolve here and ports 80/443 be reachable).');
  return lines.join('\n');
}

function noopRoutes(pageOrigins) {
  const lines = [`@noop path ${NOOP.path}`];
  // One `header` line per origin in a block: Caddy 2.6 ORs them (one line with several values is a parse error).
  if (pageOrigins.length) lines.push('@fromPage {', ...pageOrigins.map((o) => `\theader Origin ${o}`), '}');
  lines.push('handle @noop {');
  for (const h of NOOP_HEADERS) {
    if (pageOrigins.length && h.name === 'Access-Control-Allow-Origin') {
      // CORS allows one origin per answer: echo the page's origin when it is one of the listed ones (no credentials).
      lines.push(`\theader @fromPage ${h.name} {http.request.header.Origin}`, '\theader Vary Origin');
    } else if (pageOrigins.length && h.name === 'Timing-Allow-Origin') {
      lines.push(`\theader ${h.name} ${caddyValue(pageOrigins.join(', '))}`);
    } else {
      lines.push(`\theader ${h.name} ${caddyValue(h.caddy)}`);
    }
  }
  // The payload mode (/noop?bytes=N), then the no-op itself.
  lines.push(...caddyPayloadLines().map((l) => `\t${l}`));
  lines.push(`\trespond ${NOOP.status}`, '}', 'handle {', `\trespond ${OTHER_PATHS_STATUS}`, '}');
  return lines;
}

function collectorRoutes(upstream) {
  // Only the beacon endpoint is public. Caddy's reverse_proxy sends the client's address in X-Forwarded-For (and drops
  // one sent by the client); the collector believes it because the proxy's connection comes from loopback.
  return ['@beacon path /beacon', 'handle @beacon {', `\treverse_proxy ${upstream}`, '}', 'handle {', `\trespond ${OTHER_PATHS_STATUS}`, '}'];
}

function siteBlock(address, bind, tlsLine, body) {
  return [`${address} {`, ...(bind ? [`\tbind ${bind}`] : []), ...(tlsLine ? [`\t${tlsLine}`] : []), ...body.map((l) => `\t${l}`), '}'].join('\n');
}

function siteAddress(host, port) {
  return port === HTTPS_PORT ? `https://${host}` : `https://${host}:${port}`;
}

function listenerKey(bind, port) {
  // With `bind ADDR` the servers key must be the full bound address (Caddy 2.6.2: `:PORT` then silently matches nothing).
  if (!bind) return `:${port}`;
  return net.isIPv6(bind) ? `[${bind}]:${port}` : `${bind}:${port}`;
}

function tlsDirective(tls) {
  if (tls === 'acme') return '';
  if (tls === 'internal') return 'tls internal';
  const [cert, key] = tlsFiles(tls);
  return `tls "${cert}" "${key}"`;
}

function tlsFiles(tls) {
  const parts = String(tls).split(',');
  return parts.length === 2 && tls !== 'acme' && tls !== 'internal' ? parts.map((p) => p.trim()) : null;
}

function caddyValue(value) {
  if (/^[^\s"`{}]+$/.test(value)) return value;
  if (!value.includes('`')) return `\`${value}\``;
  throw new Error(`header value not usable in a Caddyfile: ${value}`);
}

function isHostName(s) {
  if (typeof s !== 'string' || s.length > 253 || net.isIP(s)) return false;
  const labels = s.split('.');
  return labels.length >= 2 && labels.every((l) => /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(l));
}

function isHttpsOrigin(s) {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' && u.origin === s && isHostName(u.hostname);
  } catch {
    return false;
  }
}

function isLoopbackAdmin(s) {
  const m = /^(localhost|127\.0\.0\.1|\[::1\]):(\d{1,5})$/.exec(String(s));
  return Boolean(m) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

function isUpstream(s) {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(String(s ?? ''));
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return false;
  const host = m[1].replace(/^\[|\]$/g, '');
  return net.isIP(host) !== 0 || host === 'localhost' || isHostName(host);
}
