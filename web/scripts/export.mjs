// `npm run export -- [--db FILE] [--out FILE]`: the stored runs as NDJSON (one run per line, its requests nested), for a
// warehouse. Without --out, to stdout.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stateDir } from '../devstack/paths.mjs';
import { openStore } from '../server/store.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: path.join(stateDir, 'last-run.sqlite') },
    out: { type: 'string' },
  },
});
if (!fs.existsSync(args.db)) {
  console.error(`export: no database at ${args.db}: run "npm start" first or pass --db FILE`);
  process.exit(2);
}
const store = openStore(args.db, await loadH3probeNode());
const stream = args.out ? fs.createWriteStream(args.out) : process.stdout;
try {
  const n = await store.exportNdjson(stream);
  if (args.out) {
    await new Promise((resolve, reject) => stream.end((err) => (err ? reject(err) : resolve())));
    console.error(`exported ${n} runs to ${path.resolve(args.out)}`);
  }
} finally {
  store.close();
}
