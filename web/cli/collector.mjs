// `h3probe collector [--port 8787] [--host 127.0.0.1] [--db FILE]`: the beacon collector on its own, as deployed.
import { parseArgs } from 'node:util';
import { openStore } from '../server/store.mjs';
import { startCollector } from '../server/collector.mjs';
import { loadH3probeNode } from '../server/h3probeNode.mjs';

export async function main(argv) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      db: { type: 'string', default: 'h3probe-beacons.sqlite' },
    },
  });
  const core = await loadH3probeNode();
  const store = openStore(args.db, core);
  const collector = await startCollector({ port: Number(args.port), host: args.host, store, core });
  console.log(JSON.stringify({ listening: `http://${args.host}:${collector.port}/beacon`, db: args.db }));

  const shutdown = async () => {
    await collector.close();
    store.close();
    console.log(JSON.stringify({ counts: collector.counts }));
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
