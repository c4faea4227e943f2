// `npm run clickhouse [-- --port 8123 --name local --fresh]`: a local ClickHouse server (Debian's clickhouse-server) with
// its config and data under .h3probe/clickhouse/NAME, in the foreground until Ctrl-C. It prints the --store URL for
// `npm run collector`, `npm run report` and `npm run export`.
import { parseArgs } from 'node:util';
import { planClickHouse, startClickHouse, clickhouseVersion } from '../launch/clickhouse.mjs';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.H3PROBE_CLICKHOUSE_PORT ?? '8123' },
    name: { type: 'string', default: 'local' },
    database: { type: 'string', default: 'h3probe' },
    fresh: { type: 'boolean', default: false },
  },
});
const httpPort = Number(args.port);
if (!Number.isInteger(httpPort) || httpPort < 1 || httpPort > 65535) {
  console.error(`clickhouse: --port wants a TCP port, got "${args.port}"`);
  process.exit(2);
}
const server = await startClickHouse(await planClickHouse(args.name, { httpPort }), { fresh: args.fresh, keepHttpPort: true });
console.log(`ClickHouse ${await clickhouseVersion(server.url)} on ${server.url} (data in ${server.dir})`);
console.log(`store: --store clickhouse://127.0.0.1:${httpPort}/${args.database}   (Ctrl-C stops it)`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(0);
  });
}
await server.exited;
if (!stopping) {
  console.error('clickhouse-server exited on its own; see its log in .h3probe/clickhouse/');
  process.exit(1);
}
