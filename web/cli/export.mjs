// `h3probe export [--db FILE] [--out FILE]`: the stored runs as NDJSON (one run per line, its requests nested), for a
// warehouse. Without --out, to stdout.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../server/store.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

const HELP = `usage: h3probe export [--db FILE] [--out FILE]
  --db FILE    the collector's SQLite database (default h3probe-beacons.sqlite)
  --out FILE   where to write the NDJSON (default: stdout)`;

/** defaults: {db}, used when --db is absent (npm run export passes the dev stack's). */
export async function main(argv, defaults = {}) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: defaults.db ?? 'h3probe-beacons.sqlite' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (args.help) return console.log(HELP);
  if (!fs.existsSync(args.db)) throw new Error(`no database at ${args.db}: pass --db FILE`);
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
}
