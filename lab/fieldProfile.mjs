// Field profiles (docs/lab.md, "Field profiles"): a user mix by region, each with an RTT distribution and a share of lossy
// paths, from which `npm run lab -- --field NAME` draws one network path per page load. Loading, validation with every
// problem named by its place in the file, and the seeded draw live here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REGIONS, regionForCountry } from '../web/server/regionForCountry.mjs';
import { RELAY_PATH, relaySettings } from './startRelay.mjs';

const PROFILE_FORMAT = 'h3probe-field-profile/1';
export const PROFILES_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'profiles');
// z of the 90th percentile of the standard normal: a lognormal's sigma from its median and p90.
const Z90 = 1.2815515655446004;
const PATH_KEYS = ['loss', 'jitterMs', 'reorder', 'rateKbps', 'queueMs'];

export class ProfileError extends Error {
  constructor(where, problems) {
    super(`${where}: ${problems.length} problem${problems.length > 1 ? 's' : ''}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Checks a parsed profile; returns the list of problems (empty: valid), each prefixed with its JSON path.
 * checkLink(settings) → null or an error string: the relay's own check of link settings (default: h3probe_relay
 * --check-link, so the link's ranges have one home, lab/relay/link_settings.cpp).
 */
export function profileProblems(profile, { checkLink = relayCheckLink } = {}) {
  const problems = [];
  const bad = (where, what) => problems.push(`${where}: ${what}`);
  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  if (profile === null || typeof profile !== 'object' || Array.isArray(profile)) return ['(top): expected a JSON object'];
  const known = ['format', 'name', 'description', 'regions', 'reference'];
  for (const k of Object.keys(profile)) if (!known.includes(k)) bad(k, `unknown key (known: ${known.join(', ')})`);
  if (profile.format !== PROFILE_FORMAT) bad('format', `expected "${PROFILE_FORMAT}", got ${JSON.stringify(profile.format)}`);
  if (typeof profile.name !== 'string' || !/^[a-z0-9-]{1,40}$/.test(profile.name)) bad('name', 'expected lower-case letters, digits and -');
  if (profile.description !== undefined && typeof profile.description !== 'string') bad('description', 'expected a string');
  if (!Array.isArray(profile.regions) || profile.regions.length === 0) {
    bad('regions', 'expected a non-empty array');
    return problems;
  }
  const seen = new Set();
  let shareSum = 0;
  profile.regions.forEach((r, i) => {
    const at = `regions[${i}]`;
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return bad(at, 'expected an object');
    const rKeys = ['region', 'country', 'share', 'rttMs', 'lossyShare', 'clean', 'lossy', 'networks'];
    for (const k of Object.keys(r)) if (!rKeys.includes(k)) bad(`${at}.${k}`, `unknown key (known: ${rKeys.join(', ')})`);
    if (!REGIONS.includes(r.region)) bad(`${at}.region`, `expected one of the report's regions (${REGIONS.join(', ')}), got ${JSON.stringify(r.region)}`);
    else if (seen.has(r.region)) bad(`${at}.region`, `"${r.region}" is listed twice`);
    seen.add(r.region);
    if (typeof r.country !== 'string' || !/^[A-Z]{2}$/.test(r.country)) bad(`${at}.country`, 'expected an ISO 3166 code of two capital letters');
    else if (REGIONS.includes(r.region) && regionForCountry(r.country) !== r.region) {
      bad(`${at}.country`, `${r.country} is in ${regionForCountry(r.country)} for the collector, not in ${r.region}`);
    }
    if (!isNum(r.share) || r.share <= 0 || r.share > 1) bad(`${at}.share`, 'expected a number above 0 and at most 1');
    else shareSum += r.share;
    const rtt = r.rttMs;
    if (rtt === null || typeof rtt !== 'object') bad(`${at}.rttMs`, 'expected {median, p90, min, max}');
    else {
      for (const k of Object.keys(rtt)) if (!['median', 'p90', 'min', 'max'].includes(k)) bad(`${at}.rttMs.${k}`, 'unknown key (known: median, p90, min, max)');
      for (const k of ['median', 'p90', 'min', 'max']) if (!isNum(rtt[k]) || rtt[k] < 0 || rtt[k] > 10000) bad(`${at}.rttMs.${k}`, 'expected milliseconds from 0 to 10000');
      if (isNum(rtt.median) && isNum(rtt.p90) && !(rtt.p90 >= rtt.median && rtt.median > 0)) bad(`${at}.rttMs`, 'expected 0 < median <= p90');
      if (isNum(rtt.min) && isNum(rtt.max) && isNum(rtt.median) && !(rtt.min <= rtt.median && rtt.median <= rtt.max)) {
        bad(`${at}.rttMs`, 'expected min <= median <= max');
      }
    }
    if (!isNum(r.lossyShare) || r.lossyShare < 0 || r.lossyShare > 1) bad(`${at}.lossyShare`, 'expected a share from 0 to 1');
    for (const kind of ['clean', 'lossy']) {
      const p = r[kind];
      if (p === null || typeof p !== 'object' || Array.isArray(p)) { bad(`${at}.${kind}`, `expected an object of ${PATH_KEYS.join(', ')}`); continue; }
      for (const k of Object.keys(p)) if (!PATH_KEYS.includes(k)) bad(`${at}.${kind}.${k}`, `unknown key (known: ${PATH_KEYS.join(', ')})`);
      if (Object.keys(p).every((k) => PATH_KEYS.includes(k))) {
        const problem = checkLink(relaySettings({ rttMs: isNum(rtt?.median) ? rtt.median : 0, ...p }));
        if (problem) bad(`${at}.${kind}`, problem.replace(/^link\.(up|down)\.?/, '').replace(/^: /, '') || problem);
      }
    }
    if (r.networks !== undefined) networkProblems(r.networks, `${at}.networks`, bad);
  });
  if (problems.length === 0 && Math.abs(shareSum - 1) > 0.001) bad('regions', `the shares add up to ${+shareSum.toFixed(4)}, not 1`);
  if (profile.reference !== undefined && (profile.reference === null || typeof profile.reference !== 'object')) {
    bad('reference', 'expected an object');
  }
  return problems;
}

// A region's networks: [{asn, share, udpBlocked}], each AS once, shares adding up to 1. Whether the network tables know
// an address of each AS in the region's country is checked when the lab picks them (fieldNetworks.mjs).
function networkProblems(networks, at, bad) {
  if (!Array.isArray(networks) || networks.length === 0) return bad(at, 'expected a non-empty array of {asn, share, udpBlocked}');
  const seen = new Set();
  let sum = 0;
  networks.forEach((n, j) => {
    const here = `${at}[${j}]`;
    if (n === null || typeof n !== 'object' || Array.isArray(n)) return bad(here, 'expected an object');
    for (const k of Object.keys(n)) if (!['asn', 'share', 'udpBlocked'].includes(k)) bad(`${here}.${k}`, 'unknown key (known: asn, share, udpBlocked)');
    if (!Number.isInteger(n.asn) || n.asn < 1 || n.asn > 4294967295) bad(`${here}.asn`, 'expected an AS number (a whole number from 1)');
    else if (seen.has(n.asn)) bad(`${here}.asn`, `AS${n.asn} is listed twice`);
    seen.add(n.asn);
    if (typeof n.share !== 'number' || !(n.share > 0 && n.share <= 1)) bad(`${here}.share`, 'expected a number above 0 and at most 1');
    else sum += n.share;
    if (n.udpBlocked !== undefined && typeof n.udpBlocked !== 'boolean') bad(`${here}.udpBlocked`, 'expected true or false');
  });
  if (Math.abs(sum - 1) > 0.001 && networks.every((n) => typeof n?.share === 'number')) bad(at, `the shares add up to ${+sum.toFixed(4)}, not 1`);
  return undefined;
}

/** The relay's verdict on link settings: null if valid, else its message. Needs the native build. */
export function relayCheckLink(settings) {
  try {
    execFileSync(RELAY_PATH, ['--check-link', JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'pipe'] });
    return null;
  } catch (err) {
    if (err.status === 2) return err.stdout.toString().trim();
    throw new Error(`could not run ${RELAY_PATH} --check-link (run "npm run build:native"): ${err.message}`);
  }
}

/** A profile by name (lab/profiles/NAME.json) or by file path; throws ProfileError listing every problem. */
export function loadProfile(nameOrPath, opts = {}) {
  const file = /[/\\]|\.json$/.test(nameOrPath) ? nameOrPath : path.join(PROFILES_DIR, `${nameOrPath}.json`);
  if (!fs.existsSync(file)) {
    const names = fs.readdirSync(PROFILES_DIR).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
    throw new ProfileError(nameOrPath, [`no such profile (shipped: ${names.join(', ')}; or give a file path)`]);
  }
  let profile;
  try {
    profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ProfileError(file, [`not JSON: ${err.message}`]);
  }
  const problems = profileProblems(profile, opts);
  if (problems.length) throw new ProfileError(file, problems);
  return profile;
}

/** A seeded uniform [0, 1) generator (splitmix32-style); the same seed gives the same sequence. */
export function seededRandom(seed) {
  let s = (Number(seed) >>> 0) ^ 0x9e3779b9;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

/**
 * One page load's path: the region (by share), its RTT (lognormal with the profile's median and p90, clamped to
 * [min, max], rounded to 0.1 ms), lossy or clean (lossyShare), the relay link for it (seeded from `random`), and, when
 * the region lists networks, the network (by share: {asn, udpBlocked}; null otherwise).
 */
export function drawPath(profile, random) {
  const region = pick(profile.regions, random());
  const { median, p90, min, max } = region.rttMs;
  const sigma = p90 > median ? Math.log(p90 / median) / Z90 : 0;
  // Box-Muller: one standard normal from two uniforms (1 - u keeps the log away from 0).
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const rttMs = Math.round(Math.min(max, Math.max(min, median * Math.exp(sigma * z))) * 10) / 10;
  const lossy = random() < region.lossyShare;
  const pathClass = lossy ? region.lossy : region.clean;
  const seed = Math.floor(random() * 2 ** 32);
  // The network is drawn last, so that a profile without networks draws the same paths as before they existed.
  const network = region.networks ? pick(region.networks, random()) : null;
  return { region: region.region, country: region.country, rttMs, lossy, link: { rttMs, seed, ...pathClass },
    network: network ? { asn: network.asn, udpBlocked: Boolean(network.udpBlocked) } : null };
}

// The entry of list whose share holds u (uniform [0, 1)); the last for rounding leftovers.
function pick(list, u) {
  for (const x of list) {
    if (u < x.share) return x;
    u -= x.share;
  }
  return list[list.length - 1];
}

/** "gilbert 3% bursts 2.5" / "bernoulli 0.5%" / "no loss": a path's loss in a progress line. */
export function describeLoss(loss) {
  if (!loss || loss.model === 'none' || loss === 0) return 'no loss';
  if (typeof loss === 'number') return `bernoulli ${+(loss * 100).toFixed(3)}%`;
  if (loss.model === 'gilbert') return `gilbert ${+(loss.rate * 100).toFixed(3)}% bursts ${loss.meanBurst ?? 1}`;
  if (loss.model === 'bernoulli') return `bernoulli ${+(loss.rate * 100).toFixed(3)}%`;
  return loss.model;
}
