// The ClickHouse store: the same decoded rows as the SQLite store (store.mjs), kept in a ClickHouse database, put
// together from its parts: the connection (clickhouseConnection.mjs: the clickhouse:// URL and an HTTP client), the
// tables and their layout (clickhouseSchema.mjs), a beacon's rows (clickhouseRows.mjs), the beacon log's shipping into
// the tables (clickhouseShipping.mjs), and the store opened to read with the export (clickhouseReadOnly.mjs).
import path from 'node:path';
import { clickhouseClient, connectionOf, INSERT_TIMEOUT_MS, parseClickHouseUrl } from './clickhouseConnection.mjs';
import { exportNdjson, openReadOnlyClickHouse } from './clickhouseReadOnly.mjs';
import { shipBeaconLog } from './clickhouseShipping.mjs';

/**
 * Opens (creating what is missing) the store at a clickhouse:// URL. core: loadH3probeNode(). A beacon is acknowledged
 * once it is in a local log, which goes to ClickHouse in batches (shipBeaconLog()). Options: log (the log's base file
 * name; default from the URL), flushMs, maxBatch, retryMs (shipBeaconLog()'s), readOnly (for the report and export: no
 * log, no inserts, no table made; a database the collector has not made, or of another layout, is an error).
 * Resolves to an object with the SQLite store's methods (queueBeacon, insertBeacon, countRuns, checkWritable,
 * exportNdjson, close) plus flushed() and state().
 */
export async function openClickHouseStore(spec, core, { log: logPath, retryMs, flushMs, maxBatch, readOnly = false, ...unknown } = {}) {
  if (typeof core?.schema !== 'function') throw new Error('openClickHouseStore needs the Node module (loadH3probeNode())');
  // A misspelt option would otherwise be dropped, and the log land where the URL's default puts it.
  const extra = Object.keys(unknown);
  if (extra.length) throw new Error(`openClickHouseStore: unknown option ${extra.join(', ')} (log, retryMs, flushMs, maxBatch, readOnly)`);
  const schema = core.schema();
  const target = typeof spec === 'string' ? parseClickHouseUrl(spec) : spec;
  // In a cluster: an insert through a Distributed table returns once each shard has it (not queued on this host), and
  // both the inserts and the retry check's reads go to the first replica of each shard that answers (in the cluster's
  // order; this host's own first), so that the check reads the replica the rows went to.
  const settings = target.cluster ? { insert_distributed_sync: '1', load_balancing: 'in_order' } : {};
  if (readOnly) return openReadOnlyClickHouse(schema, target, settings);
  // The collector's requests give up after INSERT_TIMEOUT_MS (the batch is then tried again).
  const client = clickhouseClient(connectionOf(target), { database: target.database, settings, timeoutMs: INSERT_TIMEOUT_MS });
  const logFile = path.resolve(logPath ?? target.log);
  const shipped = await shipBeaconLog(schema, target, client, logFile, { retryMs, flushMs, maxBatch });
  return { kind: 'clickhouse', target, client, logFile, ...shipped, exportNdjson: (stream) => exportNdjson(schema, client, stream) };
}
