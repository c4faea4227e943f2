// The client's network (autonomous system) at ingest: the lookup against rows read from the bundled tables themselves
// (their numeric and their text files, so the two parsers check each other), private and unrouted addresses, the
// locator's choice of address behind proxies, and the collector storing the AS number and name but never the address.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createAsnLookup, defaultAsnDb, networkLabel } from '../../server/networkFor.mjs';
import { createClientLocator } from '../../server/clientLocator.mjs';
import { isNotPublic } from '../../server/regionFor.mjs';
import { startCollector } from '../../server/collector.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { makeReport } from '../../report/makeReport.mjs';
import { EXAMPLE_NETWORKS, syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';

const dir = defaultAsnDb();
const lookup = createAsnLookup(dir);

// The tables' rows as the test reads them: [start, end, asn, org], org unquoted.
function rows(file) {
  return fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean).map((line) => {
    const m = /^([^,]+),([^,]+),(\d+),(.*)$/.exec(line);
    const org = m[4].startsWith('"') ? m[4].slice(1, -1).replaceAll('""', '"') : m[4];
    return [m[1], m[2], Number(m[3]), org];
  });
}
const v4 = rows('asn-ipv4-num.csv');
const v4text = rows('asn-ipv4.csv');
const v6text = rows('asn-ipv6.csv');
const dotted = (n) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
// Rows spread over the table: the first, the last and every step-th.
const spread = (list, count) => Array.from({ length: count }, (_, i) => list[Math.floor((i * (list.length - 1)) / (count - 1))]);
const expected = ([, , asn, org]) => (asn === 0 ? null : { asn, org: org || null });

describe('createAsnLookup: the bundled IP-to-AS tables', () => {
  test('the first, last and middle address of IPv4 ranges spread over the table give that row\'s AS and name', () => {
    let checked = 0;
    for (const row of spread(v4, 401)) {
      const [start, end] = [Number(row[0]), Number(row[1])];
      for (const n of [start, end, Math.floor((start + end) / 2)]) {
        if (isNotPublic(dotted(n))) continue;
        assert.deepEqual(lookup(dotted(n)), expected(row), `${dotted(n)} in ${row.join(',')}`);
        checked++;
      }
    }
    assert.ok(checked > 1000, `checked ${checked} addresses`);
  });

  test('the text table agrees with the numeric one the lookup reads (IPv4 and IPv6 starts)', () => {
    for (const row of [...spread(v4text, 301), ...spread(v6text, 301)]) {
      if (isNotPublic(row[0])) continue;
      assert.deepEqual(lookup(row[0]), expected(row), row.join(','));
      assert.deepEqual(lookup(row[1]), expected(row), row.join(','));
    }
  });

  test('an address in a gap between two ranges has no network', () => {
    const gaps = [];
    for (let i = 1; i < v4.length && gaps.length < 20; i++) {
      const gap = Number(v4[i - 1][1]) + 1;
      if (gap < Number(v4[i][0]) && !isNotPublic(dotted(gap))) gaps.push(dotted(gap));
    }
    assert.equal(gaps.length, 20);
    for (const ip of gaps) assert.equal(lookup(ip), null, ip);
  });

  test('well-known resolvers: 8.8.8.8 and 2001:4860:4860::8888 are Google\'s AS 15169 in these tables, 1.1.1.1 Cloudflare\'s 13335', () => {
    // Checked against the rows first, so that a table that moved them fails here, not later.
    const holder = (n) => v4.find(([s, e]) => Number(s) <= n && n <= Number(e));
    assert.equal(holder(0x08080808)[2], 15169);
    assert.equal(holder(0x01010101)[2], 13335);
    assert.deepEqual(lookup('8.8.8.8'), { asn: 15169, org: 'Google LLC' });
    assert.deepEqual(lookup('::ffff:8.8.8.8'), { asn: 15169, org: 'Google LLC' });
    assert.deepEqual(lookup('2001:4860:4860::8888'), { asn: 15169, org: 'Google LLC' });
    assert.deepEqual(lookup('1.1.1.1'), { asn: 13335, org: 'Cloudflare, Inc.' });
  });

  test('private, loopback, reserved, documentation and malformed addresses have no network', () => {
    for (const ip of ['10.1.2.3', '192.168.1.1', '172.16.5.4', '100.64.0.1', '127.0.0.1', '198.18.0.10', '203.0.113.9',
      '::1', 'fe80::1', 'fd00::1', '2001:db8::1', '240.0.0.1', '', 'not-an-ip', '1.2.3', null, undefined]) {
      assert.equal(lookup(ip), null, String(ip));
    }
  });

  test('the label: "AS15169 Google LLC", a bare number without a name, null without an AS', () => {
    assert.equal(networkLabel(15169, 'Google LLC'), 'AS15169 Google LLC');
    assert.equal(networkLabel(64500, null), 'AS64500');
    assert.equal(networkLabel(null, 'x'), null);
  });

  test('a directory without the tables is an error naming the file', () => {
    assert.throws(() => createAsnLookup(os.tmpdir()), /asn-ipv4-num\.csv/);
  });
});

describe('the locator: which address names the network', () => {
  const req = (peer, headers = {}) => ({ socket: { remoteAddress: peer }, headers });
  const locate = createClientLocator({ trustedProxies: '198.51.100.7', lookupCountry: () => 'US' }, {});

  test('a direct peer: its own address, whatever X-Forwarded-For says', () => {
    assert.deepEqual(locate(req('1.1.1.1', { 'x-forwarded-for': '8.8.8.8' })),
      { country: 'US', region: 'North America', asn: 13335, asOrg: 'Cloudflare, Inc.' });
  });

  test('behind a trusted proxy: the nearest untrusted X-Forwarded-For hop, also when a country header names the country', () => {
    const located = locate(req('198.51.100.7', { 'x-forwarded-for': '1.1.1.1, 8.8.8.8', 'cf-ipcountry': 'DE' }));
    assert.deepEqual(located, { country: 'DE', region: 'Europe', asn: 15169, asOrg: 'Google LLC' });
  });

  test('no network for a private client, and none at all with asnDb off', () => {
    assert.equal(locate(req('198.51.100.7', { 'x-forwarded-for': '10.0.0.8' })).asn, null);
    const off = createClientLocator({ asnDb: 'off', lookupCountry: () => null }, {});
    assert.deepEqual(off(req('8.8.8.8')), { country: null, region: 'unknown', asn: null, asOrg: null });
    const fromEnv = createClientLocator({ lookupCountry: () => null }, { H3PROBE_ASN_DB: 'off' });
    assert.equal(fromEnv(req('8.8.8.8')).asn, null);
  });
});

describe('the collector stores the AS number and name, never the address', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-network-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('a beacon forwarded for 8.8.8.8 by the local proxy: asn 15169, as_org Google LLC, and no column holds the address', async () => {
    const core = await loadH3probeNode();
    const store = openStore(path.join(tmp, 'beacons.sqlite'), core);
    const collector = await startCollector({ port: 0, store, core, rateLimit: 0 });
    const beacons = [...syntheticBeacons({ runs: 3, seed: 5, days: 1 })].map((b) => b.beacon);
    const post = (beacon, forwardedFor) => new Promise((resolve, reject) => {
      const r = http.request({ host: '127.0.0.1', port: collector.port, method: 'POST', path: '/beacon', agent: false,
        headers: { 'X-Forwarded-For': forwardedFor } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
      r.on('error', reject);
      r.end(JSON.stringify(beacon));
    });
    try {
      assert.equal(await post(beacons[0], '8.8.8.8'), 204);
      assert.equal(await post(beacons[1], '2001:4860:4860::8888'), 204);
      assert.equal(await post(beacons[2], '10.9.8.7'), 204);
    } finally {
      await collector.close();
    }
    const byRun = new Map(store.db.prepare('SELECT * FROM runs').all().map((r) => [r.run_id, r]));
    const row = (b) => byRun.get(b.run_id);
    assert.deepEqual([row(beacons[0]).asn, row(beacons[0]).as_org, row(beacons[0]).country], [15169, 'Google LLC', 'US']);
    assert.deepEqual([row(beacons[1]).asn, row(beacons[1]).as_org], [15169, 'Google LLC']);
    assert.deepEqual([row(beacons[2]).asn, row(beacons[2]).as_org, row(beacons[2]).region], [null, null, 'unknown']);
    // Every table and view the store has, every value: none is one of the addresses.
    const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").pluck().all();
    const text = tables.map((t) => JSON.stringify(store.db.prepare(`SELECT * FROM ${t}`).all(), (k, v) => (Buffer.isBuffer(v) || v?.type === 'Buffer' ? undefined : v))).join('\n');
    for (const ip of ['8.8.8.8', '2001:4860:4860::8888', '10.9.8.7']) assert.ok(!text.includes(ip), `${ip} is stored somewhere`);
    store.close();
  });
});

describe('report --by network (SQLite)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-netreport-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('one group per network with enough runs, the rest pooled as other; the UDP-blocking network\'s fallback rate shows', async () => {
    const core = await loadH3probeNode();
    const dbPath = path.join(tmp, 'networks.sqlite');
    const store = openStore(dbPath, core);
    for (const { beacon, meta } of syntheticBeacons({ runs: 200, seed: 3, days: 2, networks: EXAMPLE_NETWORKS })) {
      store.insertBeacon(core.decodeBeacon(JSON.stringify(beacon)), meta);
    }
    store.close();
    const { report, text } = await makeReport(core, { dbPath, by: 'network', htmlPath: path.join(tmp, 'r.html'), jsonPath: path.join(tmp, 'r.json') });
    const runs = Object.fromEntries(report.groups.map((g) => [g.name, g.runs]));
    // Every 100 runs: 40, 25, 20, 10 and 3 + 2 (the two small networks, under the default 10 runs each, pooled).
    assert.deepEqual(runs, { overall: 200, 'AS15169 Google LLC': 80, 'AS13335 Cloudflare, Inc.': 50, AS64500: 40, unknown: 20, other: 10 });
    assert.equal(report.groups.at(-1).name, 'other', 'other comes last');
    // The SQL's label is networkLabel()'s.
    const [google, cloudflare, unnamed] = EXAMPLE_NETWORKS;
    assert.deepEqual(report.groups.slice(1, 4).map((g) => g.name), [google, cloudflare, unnamed].map((n) => networkLabel(n.asn, n.org)));
    assert.deepEqual(report.pooled, { minRuns: 10, values: 2 });
    const rate = (name) => report.groups.find((g) => g.name === name).fallback.rate;
    assert.equal(rate('AS13335 Cloudflare, Inc.'), 1);
    for (const name of ['AS15169 Google LLC', 'AS64500', 'unknown', 'other']) assert.ok(rate(name) < 0.2, `${name}: ${rate(name)}`);
    // The text's network table, the pooled line and the data's credit; the HTML links DB-IP; the JSON has it all.
    assert.match(text, /^AS13335 Cloudflare, Inc\. +50 +100\.0%/m);
    assert.match(text, /^networks with fewer than 10 runs: 2, pooled as "other"/m);
    assert.match(text, /CC BY 4\.0/);
    const html = fs.readFileSync(path.join(tmp, 'r.html'), 'utf8');
    assert.match(html, /<td>AS13335 Cloudflare, Inc\.<\/td><td>50<\/td>/);
    assert.match(html, /<a href="https:\/\/db-ip\.com">IP Geolocation by DB-IP<\/a>/);
    const json = JSON.parse(fs.readFileSync(path.join(tmp, 'r.json'), 'utf8'));
    assert.equal(json.by, 'network');
    assert.equal(json.groups.find((g) => g.name === 'AS13335 Cloudflare, Inc.').fallback.rate, 1);

    // A higher minimum pools more; a bad one is refused with the option's name.
    const fewer = await makeReport(core, { dbPath, by: 'network', minGroupRuns: 45 });
    assert.deepEqual(fewer.report.groups.map((g) => [g.name, g.runs]),
      [['overall', 200], ['AS15169 Google LLC', 80], ['AS13335 Cloudflare, Inc.', 50], ['other', 70]]);
    assert.deepEqual(fewer.report.pooled, { minRuns: 45, values: 4 });
    await assert.rejects(makeReport(core, { dbPath, by: 'network', minGroupRuns: 0 }), /--min-network-runs/);

    // A young store: no network has the minimum, so every run is in other (and the connection-setup view's too).
    const young = await makeReport(core, { dbPath, by: 'network', minGroupRuns: 1000, jsonPath: path.join(tmp, 'young.json') });
    assert.deepEqual(young.report.groups.map((g) => [g.name, g.runs]), [['overall', 200], ['other', 200]]);
    assert.deepEqual(young.report.pooled, { minRuns: 1000, values: 6 });
    assert.deepEqual(young.report.connectionSetup.groups.map((g) => g.name), ['overall', 'other']);
    assert.equal(young.report.connectionSetup.groups[1].runs, young.report.connectionSetup.groups[0].runs);
  });
});
