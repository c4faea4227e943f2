// Faults the tests inject into the origins' Caddyfile: each one an edit of the text `h3probe origins` writes, so a test
// origin differs from a deployed one only where a fault says so. An edit that finds nothing to change throws: the
// generator's text moved, and the fault would silently not be there.
import { NOOP, NOOP_HEADERS } from '../server/originRules.mjs';

/**
 * h3 false: the HTTP/3 origins on TCP only (no UDP listener, no Alt-Svc: "UDP blocked"); tao false: no
 * Timing-Allow-Origin; noopStatus: /noop answers this status; noopUpstream: /noop is answered by that loopback port (a
 * late answer: Caddy 2.6 has no sleep directive); claimProtocol: Server-Timing names this protocol whatever the request
 * came over (an origin behind a proxy that forwards over HTTP/1.1).
 */
export function injectFaults(text, { h3 = true, tao = true, noopStatus = NOOP.status, noopUpstream = 0, claimProtocol = '' } = {}) {
  let out = text;
  if (!h3) out = edit(out, '\t\tprotocols h1 h2 h3\n', '\t\tprotocols h1 h2\n', 'h3: false');
  if (!tao) out = edit(out, new RegExp(`\\n\\t\\theader ${header('Timing-Allow-Origin').name} [^\\n]*`, 'g'), '', 'tao: false');
  if (noopUpstream) {
    out = edit(out, `\t\trespond ${NOOP.status}\n`, `\t\treverse_proxy 127.0.0.1:${noopUpstream}\n`, 'noopUpstream');
  } else if (noopStatus !== NOOP.status) {
    if (!Number.isInteger(noopStatus) || noopStatus < 100 || noopStatus > 599) throw new Error(`noopStatus: not a status: ${noopStatus}`);
    out = edit(out, `\t\trespond ${NOOP.status}\n`, `\t\trespond ${noopStatus}\n`, 'noopStatus');
  }
  if (claimProtocol) {
    if (!/^[A-Za-z0-9/.]+$/.test(claimProtocol)) throw new Error(`claimProtocol: not a protocol name: ${claimProtocol}`);
    out = edit(out, '{http.request.proto}', claimProtocol, 'claimProtocol');
  }
  return out;
}

function header(name) {
  const h = NOOP_HEADERS.find((x) => x.name === name);
  if (!h) throw new Error(`the production rules send no ${name}`);
  return h;
}

function edit(text, from, to, what) {
  const out = typeof from === 'string' ? text.replaceAll(from, to) : text.replace(from, to);
  if (out === text) throw new Error(`fault ${what}: the origins' Caddyfile has nothing it changes (${String(from).trim()})`);
  return out;
}
