// Client IP → its network, {asn, org}: the autonomous system that announces the address and the organisation's name,
// from the IP-to-ASN tables shipped in an npm package (@ip-location-db/asn: RouteViews, the RIRs' delegations via the
// NRO, and DB-IP's ASN Lite names; CC BY 4.0, attribution in docs/report.md). Loopback, private and reserved addresses
// have no network. The tables are read once into sorted typed arrays, so a lookup is one binary search (~20 steps).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { peerFile } from './peer.mjs';
import { isNotPublic, normalizeIp } from './regionFor.mjs';

/** The network tables used unless others are given: the directory of @ip-location-db/asn (an optional peer dependency). */
export function defaultAsnDb() {
  return path.dirname(peerFile('@ip-location-db/asn', 'asn-ipv4-num.csv', 'the IP-to-network (AS) lookup'));
}

/**
 * The credit the network tables' licence (CC BY 4.0) asks wherever their results are shown: the report prints it under a
 * split by network, and its HTML links DB-IP as DB-IP's licence asks of pages that show its data.
 */
export const NETWORK_DATA_CREDIT = Object.freeze({
  text: 'AS numbers and names: Route Views, the RIRs via the NRO, and DB-IP (db-ip.com), CC BY 4.0, through @ip-location-db/asn',
  link: { text: 'IP Geolocation by DB-IP', href: 'https://db-ip.com' },
});

/** The group label of a network, as the report prints it: "AS15169 Google LLC"; "AS64500" without a name; null without an AS. */
export function networkLabel(asn, org) {
  if (asn === null || asn === undefined) return null;
  return org ? `AS${asn} ${org}` : `AS${asn}`;
}

// One table (IPv4 or IPv6): ranges sorted by start, each address as `words` big-endian 32-bit words.
function emptyTable(words, capacity) {
  return { words, n: 0, start: new Uint32Array(capacity * words), end: new Uint32Array(capacity * words),
    asn: new Uint32Array(capacity), org: new Uint32Array(capacity) };
}

// The CSV's fourth field: the organisation, quoted when it holds a comma or a quote ("" inside for ").
function unquote(s) {
  return s.length >= 2 && s[0] === '"' && s.at(-1) === '"' ? s.slice(1, -1).replaceAll('""', '"') : s;
}

// Writes the number text (decimal, up to 128 bits) into `words` 32-bit words at out[at..].
function putNumber(text, words, out, at) {
  if (words === 1) {
    out[at] = Number(text);
    return;
  }
  let v = BigInt(text);
  for (let w = words - 1; w >= 0; w--) {
    out[at + w] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
}

// Reads a "-num.csv" file (start,end,asn,org per line, numeric addresses, ascending) into a table.
function readTable(file, words, orgs, orgIndex) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const t = emptyTable(words, lines.length);
  for (const line of lines) {
    if (!line) continue;
    const a = line.indexOf(',');
    const b = line.indexOf(',', a + 1);
    const c = line.indexOf(',', b + 1);
    if (a < 0 || b < 0 || c < 0) throw new Error(`${file}: not a start,end,asn,organisation line: ${line.slice(0, 80)}`);
    const asn = Number(line.slice(b + 1, c));
    if (!Number.isInteger(asn) || asn < 0 || asn > 0xffffffff) throw new Error(`${file}: bad AS number in: ${line.slice(0, 80)}`);
    const org = unquote(line.slice(c + 1).trim());
    let k = orgIndex.get(org);
    if (k === undefined) {
      k = orgs.length;
      // A copy: a slice would keep the whole file's text alive.
      orgs.push(Buffer.from(org, 'utf8').toString('utf8'));
      orgIndex.set(org, k);
    }
    putNumber(line.slice(0, a), words, t.start, t.n * words);
    putNumber(line.slice(a + 1, b), words, t.end, t.n * words);
    t.asn[t.n] = asn;
    t.org[t.n] = k;
    t.n++;
  }
  return t;
}

// -1, 0, 1: the address in key (words) against entry i of arr.
function compare(key, arr, i, words) {
  for (let w = 0; w < words; w++) {
    const x = arr[i * words + w];
    if (key[w] !== x) return key[w] < x ? -1 : 1;
  }
  return 0;
}

// The entry whose range holds key, or -1: the last start at or below key, if its end is at or above it.
function find(t, key) {
  if (t.words === 1) return find1(t, key[0]);
  let lo = 0;
  let hi = t.n - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (compare(key, t.start, mid, t.words) >= 0) {
      at = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return at >= 0 && compare(key, t.end, at, t.words) <= 0 ? at : -1;
}

// find() for one-word addresses, without the word loop.
function find1(t, k) {
  const { start, end } = t;
  let lo = 0;
  let hi = t.n - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (start[mid] <= k) {
      at = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return at >= 0 && end[at] >= k ? at : -1;
}

const key4 = new Uint32Array(1);
const key6 = new Uint32Array(4);

// A dotted IPv4 address (valid: normalizeIp checked it) as a 32-bit number.
function parse4(s) {
  let v = 0;
  let part = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 46) {
      v = (v * 256) + part;
      part = 0;
    } else {
      part = part * 10 + ch - 48;
    }
  }
  return v * 256 + part;
}

// An IPv6 address as 4 big-endian 32-bit words in key6 (the text is valid: normalizeIp checked it).
function parse6(s) {
  const [head, tail = null] = s.split('::');
  const parts = (x) => (x ? x.split(':') : []);
  let groups = parts(head);
  let rest = tail === null ? [] : parts(tail);
  // An embedded IPv4 address at the end (::ffff:1.2.3.4 is normalized away before, others are rare) is two groups.
  const last = (tail === null ? groups : rest);
  if (last.length && last.at(-1).includes('.')) {
    const [a, b, c, d] = last.pop().split('.').map(Number);
    last.push(((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
  }
  if (tail !== null) groups = [...groups, ...Array(8 - groups.length - rest.length).fill('0'), ...rest];
  rest = groups.map((g) => parseInt(g, 16));
  for (let w = 0; w < 4; w++) key6[w] = ((rest[2 * w] << 16) | rest[2 * w + 1]) >>> 0;
  return key6;
}

/**
 * Reads the network tables once (dir: a directory with asn-ipv4-num.csv and asn-ipv6-num.csv, the format of
 * @ip-location-db/asn; default the package's); returns ip → {asn, org} or null (not public, or in no announced range).
 */
export function createAsnLookup(dir = defaultAsnDb()) {
  const key = path.resolve(dir);
  if (!loaded.has(key)) loaded.set(key, readTables(key));
  return loaded.get(key);
}

// The lookups read so far, by directory: a process that starts several collectors (the tests start many) reads the
// tables once.
const loaded = new Map();

function readTables(dir) {
  const orgs = [];
  const orgIndex = new Map();
  const v4 = readTable(path.join(dir, 'asn-ipv4-num.csv'), 1, orgs, orgIndex);
  const v6 = readTable(path.join(dir, 'asn-ipv6-num.csv'), 4, orgs, orgIndex);
  return (ip) => {
    const s = normalizeIp(ip);
    if (!s || isNotPublic(s)) return null;
    let t;
    let key;
    if (net.isIPv4(s)) {
      key4[0] = parse4(s);
      t = v4;
      key = key4;
    } else {
      t = v6;
      key = parse6(s);
    }
    const i = find(t, key);
    // AS 0 is "not routed" in the RIR data: no network.
    if (i < 0 || t.asn[i] === 0) return null;
    return { asn: t.asn[i], org: orgs[t.org[i]] || null };
  };
}
