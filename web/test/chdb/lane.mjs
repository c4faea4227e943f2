// Which ClickHouse the ClickHouse tests run against. `npm test` runs them twice: on Debian's clickhouse-server (18.16),
// and with H3PROBE_CLICKHOUSE_ENGINE=chdb on the current engine (chdb, 26.x) behind chdbServer.mjs. A test that needs
// what only a server process gives (killed and restarted, TLS, users, replicas) says so with needsServer and runs in
// the first lane only.
import path from 'node:path';
import { CLICKHOUSE_ENGINE_ENV, clickhouseScratch } from '../../launch/clickhouse.mjs';
import { chdbInstalled, startChdbServer } from './chdbServer.mjs';

export const onChdb = process.env[CLICKHOUSE_ENGINE_ENV] === 'chdb';

/** A test option: { skip } in the chdb lane, where no clickhouse-server process runs. */
export const needsServer = onChdb ? { skip: 'a clickhouse-server process (Debian 18.16 lane); the chdb lane runs the SQL path' } : {};

/**
 * clickhouseScratch(prefix), whose fresh(name) in the chdb lane starts chdb behind its HTTP server in the scratch
 * directory instead of a clickhouse-server (options for a server's TLS or users are refused there).
 */
export function clickhouseLane(prefix) {
  const scratch = clickhouseScratch(prefix);
  if (!onChdb) return scratch;
  return {
    ...scratch,
    async fresh(name, options = {}) {
      if (Object.keys(options).length) throw new Error(`the chdb lane has no server options (${Object.keys(options).join(', ')})`);
      if (!chdbInstalled()) throw new Error('chdb is not installed: npm run deps');
      const server = await startChdbServer(name, path.join(scratch.tmp, `chdb-${name}`));
      scratch.servers.push(server);
      return server;
    },
  };
}
