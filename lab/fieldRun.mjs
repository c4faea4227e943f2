// The lab's field mode (`npm run lab -- --field NAME`): per page load, draw a region and a network path from a field
// profile, set the relay to that path through its control channel, move the client to that region's address, and run one
// page load in Chromium. Each beacon goes through Caddy (the edge, which sets the country header from the client address
// and, for a profile with networks, forwards the client as its network's stand-in address) to the real collector
// service; each load is confirmed by its stored run, with the country, region and network it was given.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { peer } from '../web/server/peer.mjs';
import { repoRoot } from '../web/stack/paths.mjs';
import { experimentUrl, searchPage, waitForBeacon } from '../web/launch/pageLoad.mjs';
import { fieldClients } from './fieldNetworks.mjs';
import { describeLoss, drawPath, seededRandom } from './fieldProfile.mjs';
import { startLab } from './startLab.mjs';

const CLI = path.join(repoRoot, 'web', 'bin', 'h3probe.mjs');

/** "1:05:07" / "4:09": a duration in seconds for progress lines. */
export function clock(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h ? 2 : 1, '0');
  return `${h ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
}

/** One page load with one search; resolves to the run the collector stored for it (throws if none within timeoutMs). */
async function fieldSearch(browser, url, db, { timeoutMs = 30000, storedWithinMs = 10000, query = 'quarterly report' } = {}) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await searchPage(page, url, { query, timeoutMs });
    const { pageLoadId, queued } = await waitForBeacon(page, timeoutMs);
    if (!queued) throw new Error(`page load ${pageLoadId}: the browser did not queue the beacon`);
    // The context stays open until the collector has stored the run: closing it could cancel the beacon in flight.
    const find = db.prepare('SELECT run_id, country, region, asn, as_org FROM runs WHERE page_load_id = ?');
    const deadline = Date.now() + storedWithinMs;
    for (;;) {
      const row = find.get(pageLoadId);
      if (row) return row;
      if (Date.now() > deadline) throw new Error(`page load ${pageLoadId}: no run stored by the collector within ${storedWithinMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await context.close();
  }
}

/**
 * profile: a validated field profile (loadProfile); loads; seed; order (the page's arm order: random, h2-first, h3-first);
 * dbPath: the collector's database (replaced); prefix: lab namespace prefix; log(line): progress.
 * Resolves to {loads: [{i, region, country, rttMs, lossy, stored: {run_id, country, region}} | {i, ..., error}], wallMs,
 * relay: {lost, received, bursts} over the run, pids: the lab's processes (all stopped by then)}.
 */
export async function runField({ profile, loads, seed = 1, order = 'random', dbPath, prefix = 'h3lab', log = console.log,
  requestsPerArm = 5 }) {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${dbPath}${suffix}`, { force: true });
  fs.mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  const { clients, clientFor } = fieldClients(profile);
  const lab = await startLab({ prefix, field: { clients, dbPath } });
  const Database = peer('better-sqlite3', 'the lab');
  let db = null;
  const results = [];
  const relayTotals = { lost: 0, received: 0, bursts: 0 };
  const started = Date.now();
  const pids = lab.pids();
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const browser = await lab.launchBrowser();
    // A UDP-blocking network's page loads: Chromium cannot be made to try QUIC to the lab's private-root origins and
    // then fall back (docs/record/platform-notes.md: forced QUIC never falls back, unforced QUIC is never tried), so they run
    // in a Chromium without the force flag, whose HTTP/3 requests go over TCP, as behind a network that drops UDP.
    const blockedBrowser = clients.some((c) => c.network?.udpBlocked) ? await lab.launchBrowser({ forceQuic: false }) : null;
    const random = seededRandom(seed);
    const url = experimentUrl({ urls: lab.urls }, { order, configId: `field-${profile.name}`, requestsPerArm });
    for (let i = 1; i <= loads; i++) {
      const drawn = drawPath(profile, random);
      lab.useClient(clientFor(drawn).address);
      const counters = await lab.setLink(drawn.link);
      if (i > 1) for (const d of ['up', 'down']) {
        relayTotals.lost += counters[d].lost;
        relayTotals.received += counters[d].received;
        relayTotals.bursts += counters[d].loss_bursts;
      }
      const entry = { i, region: drawn.region, country: drawn.country, rttMs: drawn.rttMs, lossy: drawn.lossy, network: drawn.network };
      let status;
      try {
        entry.stored = await fieldSearch(drawn.network?.udpBlocked ? blockedBrowser : browser, url, db);
        const where = `${entry.stored.region} (${entry.stored.country}${entry.stored.asn ? `, AS${entry.stored.asn}` : ''})`;
        status = storedAsDrawn(entry) ? `stored as ${where}` : `STORED AS ${where}, not as drawn`;
      } catch (err) {
        entry.error = err.message.split('\n')[0];
        status = `FAILED: ${entry.error}`;
      }
      results.push(entry);
      const elapsed = (Date.now() - started) / 1000;
      log(`[${i}/${loads}] ${drawn.region} (${drawn.country}${drawn.network ? `, AS${drawn.network.asn}${drawn.network.udpBlocked ? ' UDP blocked' : ''}` : ''}) rtt ${drawn.rttMs} ms, ` +
        `${drawn.lossy ? `lossy: ${describeLoss(drawn.link.loss)}` : 'clean'}: ${status}; ` +
        `${clock(elapsed)} elapsed, ETA ${clock((elapsed / i) * (loads - i))}`);
    }
    const last = await lab.setLink(null);
    for (const d of ['up', 'down']) {
      relayTotals.lost += last[d].lost;
      relayTotals.received += last[d].received;
      relayTotals.bursts += last[d].loss_bursts;
    }
  } finally {
    db?.close();
    await lab.stop();
  }
  return { loads: results, wallMs: Date.now() - started, relay: relayTotals, pids };
}

/** Whether a load's stored run has the country, region and network (AS number, or none) the lab drew for it. */
export function storedAsDrawn(load) {
  const s = load.stored;
  return Boolean(s) && s.country === load.country && s.region === load.region && (s.asn ?? null) === (load.network?.asn ?? null);
}

/**
 * Runs the real report command on the collector's database (`h3probe report --db DB --html H --json J [args]`),
 * printing its text as it comes; resolves to the JSON report.
 */
export function runReport({ dbPath, htmlPath, jsonPath, args = [], write = (s) => process.stdout.write(s) }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'report', '--db', dbPath, '--html', htmlPath, '--json', jsonPath, ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.on('data', (d) => write(d.toString()));
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`h3probe report exited ${code}: ${err.trim()}`));
      else resolve(JSON.parse(fs.readFileSync(jsonPath, 'utf8')));
    });
  });
}

/**
 * The report's network view beside the profile: per network the profile lists, whether the profile blocks UDP there,
 * the runs and the fallback rate the report (--by network) shows for it, or "not shown" (pooled as other, or no run).
 */
export function formatNetworkCheck(report, profile) {
  const header = ['region', 'network', 'UDP', 'runs', 'fallback rate'];
  const rows = [];
  for (const r of profile.regions) {
    for (const n of r.networks ?? []) {
      const g = report.groups.find((x) => x.name === `AS${n.asn}` || x.name.startsWith(`AS${n.asn} `));
      rows.push([r.region, g?.name ?? `AS${n.asn}`, n.udpBlocked ? 'blocked' : 'open', g ? String(g.runs) : 'not shown',
        g ? `${(100 * g.fallback.rate).toFixed(1)}%` : '']);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const fmt = (v, d = 1) => (v === null || v === undefined ? 'n/a' : `${v > 0 ? '+' : ''}${v.toFixed(d)}`);
const interval = ([lo, hi], d = 1) => (lo === null || hi === null ? 'n/a' : `[${fmt(lo, d)}, ${fmt(hi, d)}]`);

/**
 * The lab's p90 and p95 per group beside the profile's reference figures (Dropbox's, for dropbox-like): runs,
 * Δ ms and Δ % with their intervals (* : the cell's Δ excludes 0, in ms and in % alike), and what the reference says.
 */
export function formatComparison(report, profile) {
  const ref = new Map((profile.reference?.rows ?? []).map((r) => [r.group, r]));
  const header = ['group', 'runs', 'p90 Δ ms [95% CI]', 'p90 Δ % [95% CI]', 'p95 Δ ms [95% CI]', 'p95 Δ % [95% CI]', 'reference p90', 'reference p95'];
  const rows = report.groups.map((g) => {
    const at = (p) => g.analysis.rows.find((r) => Math.abs(r.p - p) < 1e-9);
    const cell = (p, unit) => {
      const r = at(p);
      if (!r) return 'n/a';
      return unit === 'ms' ? `${fmt(r.diff_ms)} ${interval(r.ci_ms)}${r.significant ? ' *' : ''}`
        : `${fmt(r.diff_pct)}% ${r.ci_pct_unbounded ? 'unbounded' : interval(r.ci_pct)}${r.significant ? ' *' : ''}`;
    };
    const name = g.name === 'overall' ? 'overall' : g.name;
    return [name, String(g.runs), cell(0.9, 'ms'), cell(0.9, '%'), cell(0.95, 'ms'), cell(0.95, '%'),
      ref.get(name)?.p90 ?? '', ref.get(name)?.p95 ?? ''];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') +
    `\nΔ = HTTP/3 − HTTP/2 of network_ms; * = the interval excludes 0; reference: ${profile.reference?.source ?? 'none'}`;
}

/**
 * HTTP/2 → HTTP/3 quantiles of the stored usable requests, split by the path class the lab drew (lossy or clean), overall
 * and per region: point estimates over the pooled requests (the report's intervals need its grouping; the field cannot
 * see path classes at all). loads: runField()'s, with stored.run_id.
 */
export function formatPathSplit({ core, dbPath, loads, percentiles = [0.5, 0.9, 0.95] }) {
  const Database = peer('better-sqlite3', 'the lab');
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  const classOf = new Map(loads.filter((l) => l.stored).map((l) => [l.stored.run_id, l]));
  const groups = new Map();
  try {
    const rows = db.prepare(`SELECT run_id, request_class, network_ms FROM requests
      WHERE request_class IN ('usable_control', 'usable_treatment') AND network_ms IS NOT NULL`).iterate();
    for (const { run_id: runId, request_class: cls, network_ms: ms } of rows) {
      const l = classOf.get(runId);
      if (!l) continue;
      const kind = l.lossy ? 'lossy' : 'clean';
      for (const key of [`all, ${kind}`, `${l.region}, ${kind}`]) {
        if (!groups.has(key)) groups.set(key, { runs: new Set(), h2: [], h3: [] });
        const g = groups.get(key);
        g.runs.add(runId);
        g[cls === 'usable_control' ? 'h2' : 'h3'].push(ms);
      }
    }
  } finally {
    db.close();
  }
  const lines = [];
  for (const [key, g] of [...groups].sort(([a], [b]) => (a.startsWith('all') === b.startsWith('all') ? (a < b ? -1 : 1) : a.startsWith('all') ? -1 : 1))) {
    if (!g.h2.length || !g.h3.length) continue;
    const a = core.quantiles(g.h2, percentiles);
    const b = core.quantiles(g.h3, percentiles);
    const cells = percentiles.map((p, i) => `p${Math.round(p * 100)} ${a[i].toFixed(1)} → ${b[i].toFixed(1)} ms (${fmt((b[i] / a[i] - 1) * 100)}%)`);
    lines.push(`${key.padEnd(24)} ${String(g.runs.size).padStart(4)} runs  ${cells.join('  ')}`);
  }
  return lines.join('\n');
}
