// `h3probe export [--store sqlite:PATH | --store clickhouse://[USER@]HOST[:PORT]/DATABASE[?…] | --db FILE] [--out FILE]`: the stored
// runs as NDJSON (one run per line, its requests nested), for a warehouse; the same lines from either store. Without
// --out, to stdout.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStoreSpec, parseStoreSpec } from '../server/storeSpec.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { DEFAULT_DB } from '../server/store.mjs';

const HELP = `usage: h3probe export [--store SPEC | --db FILE] [--out FILE]
  --store SPEC sqlite:PATH or clickhouse://[USER@]HOST[:PORT]/DATABASE[?secure=1] (docs/clickhouse.md)
  --db FILE    the collector's SQLite database (default ${DEFAULT_DB}): the same as --store sqlite:FILE
  --out FILE   where to write the NDJSON (default: stdout)`;

/** defaults: {db}, used when --db is absent (npm run export passes the dev stack's). */
export async function main(argv, defaults = {}) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: defaults.db ?? DEFAULT_DB },
      store: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (args.help) return console.log(HELP);
  const spec = parseStoreSpec(args.store ?? `sqlite:${args.db}`);
  if (spec.kind === 'sqlite' && !fs.existsSync(spec.path)) throw new Error(`no database at ${spec.path}: pass --db FILE or --store SPEC`);
  const store = await openStoreSpec(spec, await loadH3probeNode(), { readOnly: true });
  const stream = args.out ? fs.createWriteStream(args.out) : process.stdout;
  try {
    const n = await store.exportNdjson(stream);
    if (args.out) {
      await new Promise((resolve, reject) => stream.end((err) => (err ? reject(err) : resolve())));
      console.error(`exported ${n} runs to ${path.resolve(args.out)}`);
    }
  } finally {
    await store.close();
  }
}
