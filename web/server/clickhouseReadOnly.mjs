// The ClickHouse store opened to read, for the report and the export (no log, no inserts, no DDL), and the NDJSON export
// that it and the collector's store both serve.
import { clickhouseClient, connectionOf, serverAllows } from './clickhouseConnection.mjs';
import { RUNS, sqlString } from './clickhouseRunSql.mjs';
import { checkReadable } from './clickhouseSchema.mjs';
import { COLLECTOR_COLUMNS, EXPORT_PAGE, writeRunsNdjson } from './store.mjs';

const READ_TIMEOUT_MS = 30 * 60_000;

/** One JSON line per run (duplicates folded), its requests nested: the same lines as the SQLite store's export. */
export function exportNdjson(schema, client, stream) {
  const runColumns = [...schema.runColumns.map((c) => c.name), ...COLLECTOR_COLUMNS.map((c) => c.name)];
  return writeRunsNdjson(stream, {
    runsAfter: (after) => client.json(`SELECT ${runColumns.join(', ')} FROM runs WHERE run_id > ${sqlString(after)}
      ORDER BY run_id LIMIT 1 BY run_id LIMIT ${EXPORT_PAGE}`),
    requestsBetween: (first, last) => client.json(`SELECT * FROM requests WHERE run_id >= ${sqlString(first)}
      AND run_id <= ${sqlString(last)} ORDER BY run_id, phase, idx LIMIT 1 BY run_id, phase, idx`),
  });
}

/**
 * The store at target opened read-only: the collector's methods, each refusing or empty, plus exportNdjson. A database
 * the collector has not made, or of another layout, is an error (checkReadable()). settings: sent with every query.
 */
export async function openReadOnlyClickHouse(schema, target, settings) {
  const conn = connectionOf(target);
  const { database } = target;
  // A report's scans of a large table may take minutes. For a user who may write, readonly=2: ClickHouse itself
  // refuses any write or DDL (a query may still set its own settings, as the report's do). A user whose profile is
  // already read-only (an analyst's) is sent what it may: with readonly=1 no settings at all.
  // Asked in the system database: a query in a database that does not exist fails before it runs (checkReadable says why).
  const probe = clickhouseClient(conn, { database: 'system', mayChangeSettings: false, timeoutMs: READ_TIMEOUT_MS });
  const { readonly } = await serverAllows(probe);
  const client = readonly === 0
    ? clickhouseClient(conn, { database, settings: { ...settings, readonly: '2' }, timeoutMs: READ_TIMEOUT_MS })
    : clickhouseClient(conn, { database, settings, timeoutMs: READ_TIMEOUT_MS, mayChangeSettings: readonly === 2 });
  await checkReadable(client, schema, target);
  // Each run once, however many collectors wrote it (RUNS: FINAL).
  const runCount = Number((await client.json(`SELECT count() AS n FROM ${RUNS}`))[0].n);
  const refuse = () => Promise.reject(new Error('this ClickHouse store was opened read-only'));
  return {
    kind: 'clickhouse', target, client, readOnly: true, queueBeacon: refuse, insertBeacon: refuse,
    countRuns: () => runCount, checkWritable: () => ({ ok: false, error: 'read-only' }),
    exportNdjson: (stream) => exportNdjson(schema, client, stream),
    close: async () => {},
  };
}
