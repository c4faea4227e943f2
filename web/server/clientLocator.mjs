// Where a beacon came from, as {country, region, asn, asOrg}, without keeping the address: the TCP peer, unless the peer
// is a trusted proxy, in which case its country header (a CDN's geolocation) or its X-Forwarded-For chain speaks for the
// client. The network (the AS announcing the client's address, networkFor.mjs) comes from the address the rate limit
// sees: the peer, or behind a trusted proxy the first untrusted X-Forwarded-For hop.
import net from 'node:net';
import { createCountryLookup, isLoopback, locateIp, normalizeIp } from './regionFor.mjs';
import { createAsnLookup } from './networkFor.mjs';
import { regionForCountry } from './regionForCountry.mjs';

export const DEFAULT_COUNTRY_HEADERS = Object.freeze(['cf-ipcountry', 'x-country-code']);

/** 'a, b/24, c' (IPs or CIDRs, v4 or v6) → a net.BlockList; throws on an entry that is not one. */
export function parseTrustedProxies(list) {
  const entries = Array.isArray(list) ? list : String(list ?? '').split(',');
  const blocks = new net.BlockList();
  for (const raw of entries.map((e) => String(e).trim()).filter(Boolean)) {
    const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(raw);
    const ip = m && normalizeIp(m[1]);
    const type = ip && net.isIPv4(ip) ? 'ipv4' : 'ipv6';
    const max = type === 'ipv4' ? 32 : 128;
    const prefix = m?.[2] === undefined ? max : Number(m[2]);
    if (!ip || prefix > max) throw new Error(`trusted proxies: "${raw}" is not an IP address or CIDR`);
    blocks.addSubnet(ip, prefix, type);
  }
  return blocks;
}

/**
 * Options (each falls back to its environment variable, then to the default):
 * - trustedProxies: IPs/CIDRs (array or comma-separated) whose headers are believed; env H3PROBE_TRUSTED_PROXIES.
 *   Loopback is always trusted: the local stack's Caddy forwards beacons from there.
 * - countryHeaders: header names carrying an ISO country code set by a trusted proxy, first present wins;
 *   env H3PROBE_COUNTRY_HEADERS; default CF-IPCountry, X-Country-Code.
 * - countryDb: path of an .mmdb country database; env H3PROBE_COUNTRY_DB; default the bundled one.
 * - lookupCountry: ip → code, instead of reading countryDb (tests).
 * - asnDb: a directory of IP-to-AS tables in @ip-location-db/asn's format, or 'off' (no network lookup: asn and asOrg
 *   are null); env H3PROBE_ASN_DB; default the bundled one.
 * - lookupNetwork: ip → {asn, org} or null, instead of reading asnDb (tests).
 * Returns locate(req[, client]) → {country, region, asn, asOrg}, and locate.client(req) → who sent it, with the client's
 * address for the rate limit (below).
 */
export function createClientLocator(opts = {}, env = process.env) {
  const trusted = parseTrustedProxies(opts.trustedProxies ?? env.H3PROBE_TRUSTED_PROXIES ?? '');
  const headerList = opts.countryHeaders ?? (env.H3PROBE_COUNTRY_HEADERS?.split(',') ?? DEFAULT_COUNTRY_HEADERS);
  const countryHeaders = headerList.map((h) => String(h).trim().toLowerCase()).filter(Boolean);
  const lookupCountry = opts.lookupCountry ?? createCountryLookup(opts.countryDb ?? env.H3PROBE_COUNTRY_DB ?? undefined);
  const asnDb = opts.asnDb ?? env.H3PROBE_ASN_DB ?? undefined;
  const lookupNetwork = opts.lookupNetwork ?? (asnDb === 'off' ? () => null : createAsnLookup(asnDb || undefined));

  // BlockList.check builds an address object per call: with no proxy listed, loopback alone is trusted.
  const anyListed = trusted.rules.length > 0;
  const isTrusted = (ip) => {
    const s = normalizeIp(ip);
    if (!s) return false;
    return isLoopback(s) || (anyListed && trusted.check(s, net.isIPv4(s) ? 'ipv4' : 'ipv6'));
  };

  // client: locate.client(req), when the caller already has it (the collector, after the rate limit).
  function locate(req, client = locate.client(req)) {
    const network = lookupNetwork(client.address);
    return { ...where(req, client), asn: network?.asn ?? null, asOrg: network?.org ?? null };
  }
  function where(req, { peer, forwarded, trustedPeer }) {
    if (!trustedPeer) return locateIp(peer, lookupCountry);
    for (const name of countryHeaders) {
      const value = headerValue(req.headers[name]);
      // Cloudflare sends XX for "no country" and T1 for Tor: neither is a country, so the address decides.
      if (value && /^[A-Za-z]{2}$/.test(value) && !/^(XX|T1)$/i.test(value)) {
        const country = value.toUpperCase();
        return { country, region: regionForCountry(country) };
      }
    }
    return locateIp(forwarded ?? peer, lookupCountry);
  }
  /**
   * Who sent the request, worked out once: {peer} (the TCP peer), {trustedPeer}, {forwarded} (behind a trusted proxy,
   * the first untrusted hop of X-Forwarded-For, 'invalid' for a malformed chain, null without one), and {address}: the
   * client's address as the rate limit sees it (never stored): the peer, or the forwarded hop; a malformed chain counts
   * as the proxy itself.
   */
  locate.client = (req) => {
    const peer = req.socket?.remoteAddress;
    if (!isTrusted(peer)) return { peer, trustedPeer: false, forwarded: null, address: peer };
    const forwarded = forwardedClient(req.headers['x-forwarded-for'], isTrusted);
    return { peer, trustedPeer: true, forwarded, address: forwarded && forwarded !== 'invalid' ? forwarded : peer };
  };
  return locate;
}

/**
 * The client in an X-Forwarded-For chain: walking from the nearest hop back, the first address that is not a trusted proxy
 * (earlier entries can be written by anyone). All trusted → the farthest one. Malformed entry on the way → 'invalid'.
 */
export function forwardedClient(header, isTrusted) {
  const value = headerValue(header);
  if (!value) return null;
  const hops = value.split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = normalizeIp(hops[i]);
    if (!ip) return 'invalid';
    if (!isTrusted(ip) || i === 0) return ip;
  }
  return null;
}

function headerValue(v) {
  return (Array.isArray(v) ? v.join(',') : v ?? '').trim();
}
