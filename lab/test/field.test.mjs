// The lab's field mode end to end (docs/lab.md): a few page loads over two regions of a small profile, two networks in
// each (one blocking UDP), each load on a path the relay sets through its control channel, every beacon through the lab's
// Caddy (which sets the country header from the client address and forwards the client as its network's stand-in
// address) to the real collector service; then the real report command, by region and by network. Teardown leaves no
// namespace or process.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { labNamespaces, labUnavailableReason } from '../createLabNetwork.mjs';
import { loadProfile } from '../fieldProfile.mjs';
import { formatNetworkCheck, formatPathSplit, runField, runReport } from '../fieldRun.mjs';
import { loadH3probeNode } from '../../web/server/h3probeNode.mjs';

const PREFIX = 'h3lab-field'; // not the `npm run lab` names
const LOADS = 6;
// Draws both regions, all four networks, and a network that does not block UDP on a lossy and on a clean path (asserted below).
const SEED = 5;
const unavailable = labUnavailableReason();

describe('lab field mode (profile draw, relay control channel, Caddy edge, collector service, report)', {
  skip: unavailable ? `lab unavailable: ${unavailable}` : false,
}, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-field-e2e-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const profileFile = path.join(dir, 'two-regions.json');
  fs.writeFileSync(profileFile, JSON.stringify({
    format: 'h3probe-field-profile/1', name: 'two-regions',
    regions: [
      { region: 'North America', country: 'CA', share: 0.5, rttMs: { median: 20, p90: 40, min: 5, max: 80 }, lossyShare: 0.5,
        clean: { loss: { model: 'none' } }, lossy: { loss: { model: 'gilbert', rate: 0.03, meanBurst: 2 }, jitterMs: 2 },
        networks: [{ asn: 577, share: 0.5 }, { asn: 812, share: 0.5, udpBlocked: true }] },
      { region: 'Asia', country: 'JP', share: 0.5, rttMs: { median: 60, p90: 100, min: 20, max: 200 }, lossyShare: 0.5,
        clean: { loss: { model: 'none' } }, lossy: { loss: { model: 'gilbert', rate: 0.03, meanBurst: 2 }, jitterMs: 2 },
        networks: [{ asn: 2497, share: 0.5, udpBlocked: true }, { asn: 4713, share: 0.5 }] },
    ],
  }));
  const dbPath = path.join(dir, 'field.sqlite');
  let result;
  let report;

  test('every page load is stored by the collector with the country and region the lab drew for it', async () => {
    result = await runField({ profile: loadProfile(profileFile), loads: LOADS, seed: SEED, dbPath, prefix: PREFIX, log: () => {} });
    assert.equal(result.loads.length, LOADS);
    assert.deepEqual(result.loads.filter((l) => l.error).map((l) => `${l.i}: ${l.error}`), [], 'no page load failed');
    const drawn = new Set(result.loads.map((l) => l.region));
    assert.deepEqual([...drawn].sort(), ['Asia', 'North America'], 'both regions drawn');
    assert.deepEqual([...new Set(result.loads.map((l) => l.network.asn))].sort((a, b) => a - b), [577, 812, 2497, 4713], 'all four networks drawn');
    // The network too: the collector's own lookup of the stand-in address the edge forwarded.
    for (const l of result.loads) {
      assert.deepEqual([l.stored.country, l.stored.region, l.stored.asn], [l.country, l.region, l.network.asn], `load ${l.i}`);
    }
    // The database itself, after the collector drained: one run per load, under the drawn country.
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(dbPath, { readonly: true });
    try {
      const rows = db.prepare('SELECT run_id, country, region FROM runs').all();
      assert.equal(rows.length, LOADS);
      const byRun = new Map(rows.map((r) => [r.run_id, r]));
      for (const l of result.loads) assert.equal(byRun.get(l.stored.run_id)?.country, l.country);
    } finally {
      db.close();
    }
  });

  test('the report command gives a row per region with the runs the lab drew there', async () => {
    assert.ok(result, 'the field run ran');
    report = await runReport({ dbPath, htmlPath: path.join(dir, 'r.html'), jsonPath: path.join(dir, 'r.json'), write: () => {} });
    const runsOf = (name) => report.groups.find((g) => g.name === name)?.runs;
    assert.equal(report.groups[0].runs, LOADS);
    for (const region of ['North America', 'Asia']) {
      assert.equal(runsOf(region), result.loads.filter((l) => l.region === region).length, region);
    }
    assert.ok(fs.statSync(path.join(dir, 'r.html')).size > 1000);
    // The lab's own split by drawn path class counts every stored run once, under the class it was drawn with.
    const split = formatPathSplit({ core: await loadH3probeNode(), dbPath, loads: result.loads });
    const runsOfClass = (kind) => Number(new RegExp(`^all, ${kind} +(\\d+) runs`, 'm').exec(split)?.[1] ?? 0);
    assert.equal(runsOfClass('lossy'), result.loads.filter((l) => l.lossy).length, split);
    assert.equal(runsOfClass('clean'), result.loads.filter((l) => !l.lossy).length, split);
  });

  test('the report by network shows each network, the UDP-blocking ones with every HTTP/3 request fallen back', async () => {
    assert.ok(result, 'the field run ran');
    const byNetwork = await runReport({ dbPath, htmlPath: path.join(dir, 'n.html'), jsonPath: path.join(dir, 'n.json'),
      args: ['--by', 'network', '--min-network-runs', '1'], write: () => {} });
    const check = formatNetworkCheck(byNetwork, loadProfile(profileFile));
    for (const l of result.loads) {
      const g = byNetwork.groups.find((x) => x.name.startsWith(`AS${l.network.asn} `));
      assert.ok(g, `AS${l.network.asn} is a group:\n${check}`);
      assert.equal(g.runs, result.loads.filter((x) => x.network.asn === l.network.asn).length, check);
      assert.ok(g.fallback.completed > 0, check);
      assert.equal(g.fallback.rate, l.network.udpBlocked ? 1 : 0, check);
    }
    const rogers = result.loads.filter((l) => l.network.asn === 812).length;
    assert.match(check, new RegExp(`AS812 Rogers[^\\n]* blocked +${rogers} +100\\.0%`));
  });

  test('teardown leaves no lab namespace and none of the lab processes', () => {
    assert.ok(result, 'the field run ran');
    const names = Object.values(labNamespaces(PREFIX));
    const left = execFileSync('ip', ['netns', 'list']).toString().split('\n').map((l) => l.split(' ')[0]);
    assert.deepEqual(left.filter((n) => names.includes(n)), [], 'no lab namespace left');
    for (const [what, pid] of Object.entries(result.pids)) {
      assert.ok(pid, `${what} had a pid`);
      assert.throws(() => process.kill(pid, 0), /ESRCH/, `${what} (pid ${pid}) is gone`);
    }
  });
});
