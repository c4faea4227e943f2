// `npm run lab`: the real experiment (test page + WASM probe in Chromium, Caddy h2/h3 origins) through the packet relay at
// several link settings; prints per setting the h2/h3 quantiles and their difference with its intervals, and the fidelity
// fit (docs/design.md). --aa adds at each lossless RTT the two A/A tests (h2/h2 and h3/h3 on two origins of one kind),
// whose every interval must cover 0. --field NAME is the field mode instead (fieldRun.mjs, docs/lab.md): --loads page
// loads, each on a path drawn from the profile, every beacon through the real collector, then the real report.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadH3probeNode } from '../web/server/h3probeNode.mjs';
import { PAYLOAD } from '../web/server/originRules.mjs';
import { labUnavailableReason } from './createLabNetwork.mjs';
import { fidelityFit } from './fidelityFit.mjs';
import { formatFidelity, formatIntervals, formatLabTable } from './formatLabTable.mjs';
import { formatSetupTable } from './formatSetupTable.mjs';
import { measureSetting } from './measureSetting.mjs';
import { startLab } from './startLab.mjs';
import { stateDir } from '../web/stack/paths.mjs';
import { loadProfile } from './fieldProfile.mjs';
import { runFieldCommand } from './fieldCommand.mjs';

const { values: args } = parseArgs({
  options: {
    loads: { type: 'string', default: '10' },
    rtts: { type: 'string', default: '0,25,50,100' },          // lossless settings (the fidelity fit uses these)
    lossy: { type: 'string', default: '50:0.01,50:0.03' },     // RTT:loss settings
    // Random per run (order not confounded with protocol); h2-first is Dropbox's fixed order, to compare against.
    order: { type: 'string', default: 'random' },
    aa: { type: 'boolean', default: false },
    'requests-per-arm': { type: 'string', default: '5' },     // parallel requests per arm (the field experiment: 5)
    // Payload sizes (config payloadBytes), each setting run once per size: 0 the no-op, e.g. 0,131072 to compare.
    'payload-bytes': { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    // The link's rate each way (0: unlimited). A rate spaces back-to-back datagrams as a real access link does; Caddy
    // 2.6.2's quic-go drops the second of two Initial datagrams that arrive together (docs/lab.md, "Connection setup").
    'rate-kbps': { type: 'string', default: '0' },
    'relay-check': { type: 'string', default: '30' },
    // Page loads per lossless RTT for the fidelity pass, which sends 1 request per arm: with 5 in parallel, the zero-delay
    // intercept on this busy 2-core machine includes CPU queueing that added delay hides, so it is no constant (docs/lab.md).
    'fidelity-loads': { type: 'string', default: '8' },
    field: { type: 'string' },                                  // a field profile: name (lab/profiles/) or file
    out: { type: 'string', default: stateDir },                 // field mode: where the database and reports go          // TCP handshakes timed through the relay at 0 and 50 ms; 0: skip
  },
});
const loads = Number(args.loads);
const maxLoads = args.field ? 100000 : 1000;
if (!Number.isInteger(loads) || loads < 1 || loads > maxLoads) {
  console.error(`--loads must be an integer from 1 to ${maxLoads}, got "${args.loads}"`);
  process.exit(2);
}
const seed = Number(args.seed);
if (!Number.isInteger(seed) || seed < 0) {
  console.error(`--seed must be a non-negative integer, got "${args.seed}"`);
  process.exit(2);
}
if (!['random', 'h2-first', 'h3-first'].includes(args.order)) {
  console.error(`--order must be random, h2-first or h3-first, got "${args.order}"`);
  process.exit(2);
}
if (args.field !== undefined) {
  let profile;
  try {
    profile = loadProfile(args.field);
  } catch (err) {
    console.error(`lab: ${err.message}`);
    process.exit(2);
  }
  const reason = labUnavailableReason();
  if (reason) {
    console.error(`lab: ${reason}`);
    process.exit(1);
  }
  process.exit(await runFieldCommand({ profile, loads, seed, order: args.order, out: args.out,
    requestsPerArm: Number(args['requests-per-arm']) }));
}
const rateKbps = Number(args['rate-kbps']);
if (!Number.isInteger(rateKbps) || rateKbps < 0) {
  console.error(`--rate-kbps must be a non-negative integer (0: unlimited), got "${args['rate-kbps']}"`);
  process.exit(2);
}
const rate = rateKbps > 0 ? { rateKbps } : {};
const lossless = args.rtts.split(',').filter(Boolean).map((r) => ({ rttMs: Number(r), loss: 0, seed, ...rate }));
const lossy = args.lossy.split(',').filter(Boolean).map((s) => s.split(':').map(Number)).map(([rttMs, loss]) => ({ rttMs, loss, seed, ...rate }));
const payloads = args['payload-bytes'].split(',').filter(Boolean).map(Number);
if (payloads.length === 0 || payloads.some((b) => !Number.isInteger(b) || b < 0 || b > PAYLOAD.maxBytes)) {
  console.error(`--payload-bytes: whole numbers of bytes from 0 to ${PAYLOAD.maxBytes}, comma-separated, got "${args['payload-bytes']}"`);
  process.exit(2);
}
// Each entry: the link, aa (null: the experiment; 'h2' or 'h3': an A/A test of that protocol) and the payload size.
const settings = [
  ...lossless.flatMap((link) => [{ link, aa: null }, ...(args.aa ? [{ link, aa: 'h2' }, { link, aa: 'h3' }] : [])]),
  ...lossy.map((link) => ({ link, aa: null })),
].flatMap((s) => payloads.map((payloadBytes) => ({ ...s, payloadBytes })));
if ([...lossless, ...lossy].some((s) => !Number.isFinite(s.rttMs) || s.rttMs < 0 || !(s.loss >= 0 && s.loss < 1))) {
  console.error('bad --rtts or --lossy (e.g. --rtts 0,25,50 --lossy 50:0.03)');
  process.exit(2);
}

const unavailable = labUnavailableReason();
if (unavailable) {
  console.error(`lab: ${unavailable}`);
  process.exit(1);
}

const core = await loadH3probeNode();
const started = Date.now();
const lab = await startLab();
try {
  if (Number(args['relay-check']) > 0) {
    console.log('relay check: TCP handshake time (SYN -> SYN-ACK) from the client namespace, through the relay');
    for (const rttMs of [0, 50]) {
      await lab.setLink({ rttMs, loss: 0, seed });
      const out = execFileSync('ip', ['netns', 'exec', lab.names.cli, process.execPath,
        path.join(path.dirname(new URL(import.meta.url).pathname), 'tcpPing.mjs'), lab.addresses.srv, String(lab.ports.h2),
        args['relay-check']]).toString();
      const times = JSON.parse(out);
      const q = (p) => core.quantiles(times, [p])[0];
      const counters = await lab.setLink(null);
      console.log(`  rtt ${rttMs} ms: n=${times.length} min ${q(0).toFixed(3)} p50 ${q(0.5).toFixed(3)} p90 ${q(0.9).toFixed(3)} ` +
        `max ${q(1).toFixed(3)} ms (overhead at p50 ${(q(0.5) - rttMs).toFixed(3)} ms); relay lateness mean ` +
        `${counters.up.late_mean_us}/${counters.down.late_mean_us} us, max ${counters.up.late_max_us}/${counters.down.late_max_us} us (up/down)`);
    }
  }

  const browser = await lab.launchBrowser();
  const results = [];
  for (const { link, aa, payloadBytes } of settings) {
    const r = await measureSetting({
      lab, browser, core, link, aa, loads, order: args.order,
      pageConfig: { requestsPerArm: Number(args['requests-per-arm']), ...(payloadBytes ? { payloadBytes } : {}) },
      onLoad: (i, beacon, err) => {
        if (err) console.log(`  [${i}/${loads}] failed: ${err.message.split('\n')[0]}`);
      },
    });
    results.push(r);
    const proto = r.protocols.map((p) => `${p.phase} ${p.protocol || '(none)'} ${p.n}`).join(', ');
    console.log(`${r.label}: ${r.runs}/${loads} runs in ${(r.wallMs / 1000).toFixed(1)} s; warm medians h2 ${r.warm.h2.median?.toFixed(2)} ` +
      `(n=${r.warm.h2.n}) h3 ${r.warm.h3.median?.toFixed(2)} (n=${r.warm.h3.n}); ${proto}; relay dropped ` +
      `${r.counters.up.lost}/${r.counters.up.received} up, ${r.counters.down.lost}/${r.counters.down.received} down`);
  }

  const fitsOf = (rs) => ({
    h2: fidelityFit(rs.map((r) => ({ rttMs: r.link.rttMs, median: r.warm.h2.median }))),
    h3: fidelityFit(rs.map((r) => ({ rttMs: r.link.rttMs, median: r.warm.h3.median }))),
  });
  const fidelityLoads = Number(args['fidelity-loads']);
  const single = [];
  if (fidelityLoads > 0) {
    for (const link of lossless) {
      const r = await measureSetting({ lab, browser, core, link, loads: fidelityLoads, order: args.order,
        pageConfig: { requestsPerArm: 1 } });
      console.log(`fidelity pass ${r.label}, 1 request per arm: warm medians h2 ${r.warm.h2.median?.toFixed(2)} (n=${r.warm.h2.n}) ` +
        `h3 ${r.warm.h3.median?.toFixed(2)} (n=${r.warm.h3.n})`);
      single.push(r);
    }
  }

  console.log(`\n${formatLabTable(results)}\n`);
  console.log(`${formatIntervals(results)}\n`);
  const setupTable = formatSetupTable(results);
  if (setupTable) console.log(`${setupTable}\n`);
  console.log('fidelity (docs/design.md): median warm-connection network_ms vs injected RTT; tolerance max(3 ms, 5%)');
  if (single.length) console.log(`-- 1 request per arm (the rule):\n${formatFidelity(fitsOf(single))}`);
  console.log(`-- ${args['requests-per-arm']} parallel requests per arm (the table above):\n` +
    formatFidelity(fitsOf(results.filter((r) => r.link.loss === 0 && !r.aa && !r.payloadBytes))));
  console.log(`\nlab: ${results.length} settings x ${loads} page loads in ${((Date.now() - started) / 1000).toFixed(0)} s`);
} finally {
  await lab.stop();
}
