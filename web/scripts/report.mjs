// `npm run report -- [--db FILE] [--since DATE] [--metric NAME] [--arms h2-h3|h2-h2|h3-h3] [--html FILE]
// [--method delta|bootstrap] [--confidence C]`: prints the table overall and per region for the runs of one arms mode
// (default h2-h3, the experiment; the others are A/A tests) and writes the self-contained HTML report.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stateDir } from '../devstack/paths.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      db: { type: 'string', default: path.join(stateDir, 'last-run.sqlite') },
      since: { type: 'string', default: '' },
      metric: { type: 'string', default: 'network_ms' },
      arms: { type: 'string', default: 'h2-h3' },
      html: { type: 'string', default: path.join(stateDir, 'report.html') },
      'no-html': { type: 'boolean', default: false },
      method: { type: 'string', default: 'delta' },
      confidence: { type: 'string', default: '0.95' },
    },
  }));
  const core = await loadH3probeNode();
  const { text, htmlPath } = await makeReport(core, {
    dbPath: args.db, since: args.since, metric: args.metric, arms: args.arms, method: args.method, confidence: Number(args.confidence),
    htmlPath: args['no-html'] ? null : args.html,
  });
  console.log(text);
  if (htmlPath) console.log(`\nHTML report: ${htmlPath}`);
} catch (err) {
  console.error(`report: ${err.message}`);
  process.exit(2);
}
