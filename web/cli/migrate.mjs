// `h3probe migrate --store clickhouse://…`: a ClickHouse store of version 2 made this h3probe's version in place, every
// row kept (migrateClickHouseStore(), web/server/clickhouseSchema.mjs; docs/clickhouse.md). Stop the store's collectors
// first. A store already of this version is left as it is; an interrupted migration is taken up again.
import { parseArgs } from 'node:util';
import { parseStoreSpec } from '../server/storeSpec.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';
import { redactStoreUrl } from '../server/clickhouseConnection.mjs';
import { migrateClickHouseStore } from '../server/clickhouseSchema.mjs';

const HELP = `usage: h3probe migrate --store clickhouse://[USER@]HOST[:PORT]/DATABASE[?…]
  --store SPEC  a ClickHouse store of version 2 (docs/clickhouse.md), its collectors stopped: made version 3 in place,
                every row kept (a run two collectors both wrote: once)`;

export async function main(argv) {
  const { values: args } = parseArgs({ args: argv, options: { store: { type: 'string' }, help: { type: 'boolean', default: false } } });
  if (args.help) return console.log(HELP);
  if (!args.store) throw new Error(`--store is required\n${HELP}`);
  const spec = parseStoreSpec(args.store);
  if (spec.kind !== 'clickhouse') throw new Error('only a ClickHouse store has an earlier version to migrate from');
  const core = await loadH3probeNode();
  const { migrated } = await migrateClickHouseStore(core.schema(), spec, (line) => console.error(line));
  console.log(migrated ? `migrated ${redactStoreUrl(args.store)}` : `${redactStoreUrl(args.store)} is already of this version: nothing to do`);
}
