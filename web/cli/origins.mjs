// `h3probe origins --h2 HOST --h3 HOST ...`: prints (or writes) a production Caddyfile for the two test origins.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { originsCaddyfile } from '../server/originsCaddyfile.mjs';

export const USAGE = `usage: h3probe origins --h2 HOST --h3 HOST SPLIT [options]

Prints a Caddyfile (Caddy 2.6+) for the probe's two test origins: the HTTP/2-only origin (TCP, no Alt-Svc) and the
HTTP/3 origin (UDP and TCP, Alt-Svc). Both answer GET /noop with 204, Access-Control-Allow-Origin, Timing-Allow-Origin,
Cache-Control: no-store and Server-Timing: proto;desc="<protocol the server saw>"; every other path is 404.

Caddy sets the protocols per listener (address:port), so the two origins need listeners of their own. SPLIT is one of:
  --h2-bind IP --h3-bind IP  two addresses of this machine, both origins on 443 (DNS: each name to its own address)
  --h2-port PORT             the HTTP/2 origin on another TCP port (page config h2Origin: https://HOST:PORT)
  --only h2|h3               one origin per machine (run the generator on each)

options:
  --page-origin URL          a page origin allowed to read the timings (repeatable); default: any (*).
                             The probe sends no credentials, so * is safe
  --collector HOST           also serve the collector at https://HOST/beacon ...
  --collector-upstream H:P   ... proxied to the collector (h3probe collector --port P), e.g. 127.0.0.1:8787
  --collector-bind IP        the collector site's address (with --h2-bind/--h3-bind)
  --tls acme|internal|CERT,KEY  certificates: ACME (default; names must resolve to this machine, ports 80 and 443
                             open), Caddy's internal CA, or certificate and key files
  --email ADDR               the ACME account's e-mail (expiry notices)
  --admin off|ADDR:PORT      Caddy's admin API: off (default; apply a new Caddyfile by restarting Caddy), or a loopback
                             address such as localhost:2019 for \`caddy reload\` and Debian's \`systemctl reload caddy\`
  --out FILE                 write the Caddyfile there instead of printing it
  --help                     this text

Invalid options: every problem is printed and the exit status is 2.`;

export async function main(argv) {
  const { values: a } = parseArgs({
    args: argv,
    strict: true,
    options: {
      h2: { type: 'string' },
      h3: { type: 'string' },
      'h2-bind': { type: 'string' },
      'h3-bind': { type: 'string' },
      'h2-port': { type: 'string' },
      only: { type: 'string' },
      'page-origin': { type: 'string', multiple: true },
      collector: { type: 'string' },
      'collector-upstream': { type: 'string' },
      'collector-bind': { type: 'string' },
      tls: { type: 'string' },
      email: { type: 'string' },
      admin: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (a.help) {
    console.log(USAGE);
    return;
  }
  const text = originsCaddyfile({
    h2: a.h2, h3: a.h3, h2Bind: a['h2-bind'], h3Bind: a['h3-bind'],
    h2Port: a['h2-port'] === undefined ? undefined : /^\d+$/.test(a['h2-port']) ? Number(a['h2-port']) : a['h2-port'],
    only: a.only, pageOrigins: a['page-origin'] ?? [], collector: a.collector, collectorUpstream: a['collector-upstream'],
    collectorBind: a['collector-bind'], tls: a.tls, email: a.email, admin: a.admin,
  });
  if (a.out) fs.writeFileSync(a.out, text);
  else process.stdout.write(text);
}
