// `npm start [-- --loads N --order O --aa h2|h3 --browsers chromium,firefox]`: the local end-to-end experiment. Starts
// the stack, drives each headless browser through N page loads with one search each, waits for every beacon, prints the
// report (the table overall and per region, or per browser when there are several, with confidence intervals), writes
// the HTML and JSON reports, and stops what it started. --aa runs an A/A test instead: both arms on HTTP/2 (or HTTP/3),
// on the stack's two origins of that kind, and prints the A/A report.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStack } from '../stack/stack.mjs';
import { stateDir } from '../stack/paths.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';
import { armLabels } from '../report/formatReport.mjs';
import { ENGINES, engineMissing, launchEngine } from '../cli/browsers.mjs';
import { aaConfig, experimentUrl, searchOnce } from '../launch/pageLoad.mjs';

const { values: args } = parseArgs({
  options: {
    loads: { type: 'string', default: '20' },
    db: { type: 'string', default: path.join(stateDir, 'last-run.sqlite') },
    // Random per run, so that order is not confounded with protocol; h2-first is Dropbox's fixed order.
    order: { type: 'string', default: 'random' },
    aa: { type: 'string' },
    html: { type: 'string', default: path.join(stateDir, 'report.html') },
    json: { type: 'string', default: path.join(stateDir, 'report.json') },
    // Each browser runs --loads page loads; with more than one, the report is split by browser.
    browsers: { type: 'string', default: 'chromium' },
  },
});
const engines = args.browsers.split(',').map((b) => b.trim()).filter(Boolean);
for (const e of engines) {
  const missing = engineMissing(e);
  if (missing) {
    console.error(`--browsers: ${missing} (known: ${ENGINES.join(', ')})`);
    process.exit(2);
  }
}
const loads = Number(args.loads);
if (!Number.isInteger(loads) || loads < 1 || loads > 10000) {
  console.error(`--loads must be an integer from 1 to 10000, got "${args.loads}"`);
  process.exit(2);
}
let armsKeys;
try {
  armsKeys = aaConfig({ h2bOrigin: '', h3bOrigin: '' }, args.aa);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const arms = armsKeys.arms ?? 'h2-h3';
const L = armLabels(arms);

// A fresh database per run, so the table describes this run only.
fs.mkdirSync(path.dirname(args.db), { recursive: true });
for (const suffix of ['', '-wal', '-shm']) fs.rmSync(args.db + suffix, { force: true });

const core = await loadH3probeNode();
const stack = await startStack({ core, dbPath: args.db, keepRunDir: false });
let launched;
try {
  console.log(`stack up: page ${stack.urls.page}, HTTP/2 origins ${stack.urls.h2Origin} ${stack.urls.h2bOrigin}, ` +
    `HTTP/3 origins ${stack.urls.h3Origin} ${stack.urls.h3bOrigin}`);
  const aa = aaConfig(stack.urls, args.aa);
  if (aa.arms) console.log(`A/A test, arms ${aa.arms}: control on the first origin, treatment on ${aa.aaOrigin}`);
  const url = experimentUrl(stack, { order: args.order, ...aa });
  const total = loads * engines.length;
  let done = 0;
  for (const engine of engines) {
    launched = await launchEngine(engine, stack);
    for (let i = 1; i <= loads; i++) {
      const run = await searchOnce(launched, stack, url, { expectRuns: ++done });
      const s = run.summary;
      console.log(`[${String(done).padStart(String(total).length)}/${total}] ${engine} run ${run.run_id} ${run.run_order}: ` +
        `${L.control} median ${s.control.median?.toFixed(2) ?? '-'} ms (n=${s.control.n}), ` +
        `${L.treatment} median ${s.treatment.median?.toFixed(2) ?? '-'} ms (n=${s.treatment.n}), ` +
        `fallbacks ${s.treatment.fallbacks}`);
    }
    await launched.close();
    launched = null;
  }

  const protocols = stack.store.db.prepare(`SELECT phase, protocol, count(*) AS n FROM requests
    WHERE phase != 'prewarm' GROUP BY phase, protocol ORDER BY phase, protocol`).all();
  console.log(`\nprotocols seen (nextHopProtocol): ${protocols.map((p) => `${p.phase} ${p.protocol || '(none)'} ${p.n}`).join(', ')}`);
  console.log(`\nh3probe: ${stack.store.countRuns()} runs from ${loads} page loads\n`);
  const { text, htmlPath, jsonPath } = await makeReport(core, { db: stack.store.db, arms, htmlPath: args.html, jsonPath: args.json,
    by: engines.length > 1 ? 'browser' : 'region' });
  console.log(text);
  console.log(`\nbeacons stored in ${args.db} (npm run report -- --db FILE${aa.arms ? ` --arms ${aa.arms}` : ''} for another look, ` +
    'npm run export for NDJSON)');
  console.log(`HTML report: ${htmlPath}\nJSON report: ${jsonPath}`);
} finally {
  await launched?.close().catch(() => {});
  await stack.stop();
}
