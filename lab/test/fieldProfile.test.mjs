// Field profiles for the lab (docs/lab.md): the shipped dropbox-like profile is valid, bad profiles are refused with every
// problem named by its place, and the seeded per-page-load draw follows the profile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProfileError, drawPath, loadProfile, profileProblems, relayCheckLink, seededRandom } from '../fieldProfile.mjs';
import { RELAY_PATH } from '../startRelay.mjs';
import { fieldClients } from '../fieldNetworks.mjs';
import { createAsnLookup } from '../../web/server/networkFor.mjs';
import { createCountryLookup } from '../../web/server/regionFor.mjs';

const hasRelay = fs.existsSync(RELAY_PATH);
const skip = hasRelay ? false : 'needs the native build (npm run build:native)';
const good = () => JSON.parse(fs.readFileSync(new URL('../profiles/dropbox-like.json', import.meta.url), 'utf8'));

test('the shipped dropbox-like profile is valid: EU about 2x and Asia about 3x the North American median RTT', { skip }, () => {
  const p = loadProfile('dropbox-like');
  const median = (name) => p.regions.find((r) => r.region === name).rttMs.median;
  assert.equal(median('Europe') / median('North America'), 2);
  assert.equal(median('Asia') / median('North America'), 3);
  assert.equal(p.regions.reduce((s, r) => s + r.share, 0).toFixed(6), '1.000000');
});

test('a bad profile is refused with every problem named by its JSON path', { skip }, () => {
  const p = good();
  p.format = 'h3probe-field-profile/9';
  p.extra = 1;
  p.regions[0].region = 'Atlantis';
  p.regions[1].country = 'JP';            // Asia for the collector, not Europe
  p.regions[2].share = 0;
  p.regions[2].rttMs.p90 = 10;            // below the median
  p.regions[3].lossyShare = 1.5;
  p.regions[3].lossy.loss = { model: 'gilbert', rate: 0.6, meanBurst: 1 };  // impossible: the relay says why
  p.regions[3].clean.bandwidth = 5;
  const problems = profileProblems(p);
  const expect = [
    /^format: expected "h3probe-field-profile\/1"/,
    /^extra: unknown key/,
    /^regions\[0\]\.region: expected one of the report's regions/,
    /^regions\[1\]\.country: JP is in Asia for the collector, not in Europe/,
    /^regions\[2\]\.share: expected a number above 0/,
    /^regions\[2\]\.rttMs: expected 0 < median <= p90/,
    /^regions\[3\]\.lossyShare: expected a share from 0 to 1/,
    /^regions\[3\]\.lossy: loss: loss rate too high for that burst length/,
    /^regions\[3\]\.clean\.bandwidth: unknown key/,
  ];
  for (const re of expect) assert.ok(problems.some((m) => re.test(m)), `expected a problem like ${re}, got:\n${problems.join('\n')}`);
  assert.equal(problems.length, expect.length, problems.join('\n'));
});

test('shares that do not add up to 1, a region twice, and an unreadable file are errors too', { skip }, () => {
  const p = good();
  p.regions[0].share = 0.5;
  assert.deepEqual(profileProblems(p), ['regions: the shares add up to 1.1, not 1']);
  const q = good();
  q.regions[1].region = 'North America';
  q.regions[1].country = 'CA';
  assert.ok(profileProblems(q).some((m) => m === 'regions[1].region: "North America" is listed twice'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-profile-'));
  try {
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, '{"format": ');
    assert.throws(() => loadProfile(file), (err) => err instanceof ProfileError && /not JSON/.test(err.message));
    assert.throws(() => loadProfile('no-such-profile'), /no such profile \(shipped: dropbox-like/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the relay checks link settings the profile cannot express wrongly by itself', { skip }, () => {
  assert.equal(relayCheckLink({ up: { delayMs: 10, loss: { model: 'gilbert', rate: 0.02, meanBurst: 2 } } }), null);
  assert.match(relayCheckLink({ up: { delayMs: -1 } }), /^link\.up\.delayMs: expected a number from 0/);
});

test('the draw is seeded and follows the shares, the RTT median and p90, and the lossy shares', { skip }, () => {
  const p = loadProfile('dropbox-like');
  const a = Array.from({ length: 20 }, ((r) => () => drawPath(p, r))(seededRandom(5)));
  const b = Array.from({ length: 20 }, ((r) => () => drawPath(p, r))(seededRandom(5)));
  assert.deepEqual(a, b);
  const random = seededRandom(1);
  const n = 20000;
  const by = new Map(p.regions.map((r) => [r.region, { rtts: [], lossy: 0 }]));
  for (let i = 0; i < n; i++) {
    const d = drawPath(p, random);
    const g = by.get(d.region);
    g.rtts.push(d.rttMs);
    if (d.lossy) g.lossy++;
    assert.equal(d.link.rttMs, d.rttMs);
    assert.ok(Number.isInteger(d.link.seed));
  }
  for (const r of p.regions) {
    const g = by.get(r.region);
    const share = g.rtts.length / n;
    assert.ok(Math.abs(share - r.share) < 0.015, `${r.region}: share ${share} vs ${r.share}`);
    const sorted = g.rtts.sort((x, y) => x - y);
    const q = (f) => sorted[Math.floor(f * (sorted.length - 1))];
    assert.ok(Math.abs(q(0.5) / r.rttMs.median - 1) < 0.06, `${r.region}: median ${q(0.5)} vs ${r.rttMs.median}`);
    assert.ok(Math.abs(q(0.9) / r.rttMs.p90 - 1) < 0.08, `${r.region}: p90 ${q(0.9)} vs ${r.rttMs.p90}`);
    assert.ok(sorted[0] >= r.rttMs.min && sorted.at(-1) <= r.rttMs.max);
    assert.ok(Math.abs(g.lossy / g.rtts.length - r.lossyShare) < 0.03, `${r.region}: lossy share`);
  }
});

test('networks: each region of the shipped profile has some that block UDP; bad network lists are refused by path', { skip }, () => {
  for (const r of loadProfile('dropbox-like').regions) {
    const blocked = r.networks.filter((n) => n.udpBlocked).reduce((s, n) => s + n.share, 0);
    assert.ok(blocked > 0 && blocked < 0.5, `${r.region}: UDP-blocking share ${blocked}`);
  }
  const p = good();
  p.regions[0].networks = [{ asn: 7922, share: 0.5 }, { asn: 7922, share: 0.3, udpBlocked: 'yes' }, { asn: -4, share: 0.1, where: 1 }];
  p.regions[1].networks = [];
  assert.deepEqual(profileProblems(p), [
    'regions[0].networks[1].asn: AS7922 is listed twice',
    'regions[0].networks[1].udpBlocked: expected true or false',
    'regions[0].networks[2].where: unknown key (known: asn, share, udpBlocked)',
    'regions[0].networks[2].asn: expected an AS number (a whole number from 1)',
    'regions[0].networks: the shares add up to 0.9, not 1',
    'regions[1].networks: expected a non-empty array of {asn, share, udpBlocked}',
  ]);
});

test('the network is drawn by its share within the region; a region without networks draws none', { skip }, () => {
  const p = loadProfile('dropbox-like');
  delete p.regions[3].networks;
  const random = seededRandom(2);
  const counts = new Map();
  for (let i = 0; i < 20000; i++) {
    const d = drawPath(p, random);
    if (d.region === p.regions[3].region) {
      assert.equal(d.network, null);
      continue;
    }
    const key = `${d.region}/${d.network.asn}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const r of p.regions.slice(0, 3)) {
    const total = r.networks.reduce((s, n) => s + (counts.get(`${r.region}/${n.asn}`) ?? 0), 0);
    for (const n of r.networks) {
      const share = (counts.get(`${r.region}/${n.asn}`) ?? 0) / total;
      assert.ok(Math.abs(share - n.share) < 0.03, `${r.region} AS${n.asn}: ${share} vs ${n.share}`);
    }
  }
});

test('each network of the shipped profile gets a stand-in address the collector\'s own lookups place in its AS and country', { skip }, () => {
  const p = loadProfile('dropbox-like');
  const { clients, clientFor } = fieldClients(p);
  const lookupNetwork = createAsnLookup();
  const lookupCountry = createCountryLookup();
  assert.equal(clients.length, p.regions.reduce((s, r) => s + r.networks.length, 0));
  assert.equal(new Set(clients.map((c) => c.address)).size, clients.length, 'one lab address per network');
  for (const c of clients) {
    assert.equal(lookupNetwork(c.network.standIn).asn, c.network.asn, c.network.standIn);
    assert.equal(lookupCountry(c.network.standIn), c.country, c.network.standIn);
    assert.equal(clientFor({ region: c.region, network: { asn: c.network.asn } }), c);
  }
  assert.throws(() => fieldClients({ regions: [{ ...p.regions[0], networks: [{ asn: 4713, share: 1 }] }] }), /no address of AS4713 in US/);
});
