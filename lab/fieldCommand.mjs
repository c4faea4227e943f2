// `npm run lab -- --field NAME --loads N [--seed S] [--order random]`: the field run, then the real report on the
// collector's database (text, HTML, JSON), then the lab's p90/p95 per region beside the profile's reference figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { formatComparison, formatNetworkCheck, formatPathSplit, runField, runReport, clock, storedAsDrawn } from './fieldRun.mjs';
import { loadH3probeNode } from '../web/server/h3probeNode.mjs';

/** Resolves to the exit code: 0 when every page load was stored with the region and network it was given, else 1. */
export async function runFieldCommand({ profile, loads, seed, order, out, requestsPerArm = 5 }) {
  const base = path.join(out, `field-${profile.name}`);
  const dbPath = `${base}.sqlite`;
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`field run: profile ${profile.name}, ${loads} page loads, seed ${seed}, order ${order}; load average ${load()}`);
  console.log(`regions: ${profile.regions.map((r) => `${r.region} (${r.country}) ${Math.round(r.share * 100)}%`).join(', ')}`);
  const started = Date.now();
  const loadSamples = [];
  const sampler = setInterval(() => loadSamples.push(os.loadavg()[0]), 60000);
  let result;
  try {
    result = await runField({ profile, loads, seed, order, dbPath, requestsPerArm });
  } finally {
    clearInterval(sampler);
  }
  const failed = result.loads.filter((l) => l.error);
  const mismatched = result.loads.filter((l) => l.stored && !storedAsDrawn(l));
  const byRegion = new Map();
  for (const l of result.loads) {
    const g = byRegion.get(l.region) ?? { loads: 0, lossy: 0, stored: 0 };
    g.loads++;
    if (l.lossy) g.lossy++;
    if (l.stored) g.stored++;
    byRegion.set(l.region, g);
  }
  console.log(`\n${loads} page loads in ${clock(result.wallMs / 1000)}; stored by the collector ${loads - failed.length}, ` +
    `failed ${failed.length}, stored under another region or network ${mismatched.length}; relay dropped ${result.relay.lost} of ` +
    `${result.relay.received} packets in ${result.relay.bursts} bursts`);
  for (const [region, g] of byRegion) console.log(`  ${region}: ${g.loads} loads (${g.lossy} on lossy paths), ${g.stored} stored`);
  console.log(`load average (1 min) during the run: ${loadSamples.length ? `${Math.min(...loadSamples).toFixed(1)}-${Math.max(...loadSamples).toFixed(1)}` : load()}; now ${load()}\n`);

  // What only the lab knows: each page load's drawn path, kept beside the database.
  fs.writeFileSync(`${base}-loads.json`, `${JSON.stringify({ profile: profile.name, seed, order, loads: result.loads }, null, 1)}\n`);
  const report = await runReport({ dbPath, htmlPath: `${base}-report.html`, jsonPath: `${base}-report.json` });
  console.log(`\n== ${profile.name}: the lab beside the reference\n${formatComparison(report, profile)}`);
  console.log(`\n== by path class (the lab's own knowledge; pooled requests, type-7 quantiles, no intervals)\n` +
    formatPathSplit({ core: await loadH3probeNode(), dbPath, loads: result.loads }));
  if (profile.regions.some((r) => r.networks)) {
    console.log('\n== the report by network (h3probe report --by network)');
    const byNetwork = await runReport({ dbPath, htmlPath: `${base}-network.html`, jsonPath: `${base}-network.json`, args: ['--by', 'network'] });
    console.log(`\n== the profile's networks in that report (UDP: as the profile sets it)\n${formatNetworkCheck(byNetwork, profile)}`);
  }
  console.log(`\nbeacons: ${dbPath} (npm run report -- --db ${dbPath})\nreports: ${base}-report.html, ${base}-report.json` +
    `\npaths drawn per page load: ${base}-loads.json`);
  console.log(`field run total ${clock((Date.now() - started) / 1000)}`);
  try {
    const left = execFileSync('ip', ['netns', 'list']).toString().split('\n').filter((l) => l.startsWith('h3lab-'));
    if (left.length) console.log(`warning: namespaces left: ${left.join(', ')}`);
  } catch { /* no ip */ }
  return failed.length === 0 && mismatched.length === 0 ? 0 : 1;
}
