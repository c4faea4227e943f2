// The store behind `--store`: `sqlite:PATH` (the embedded default, store.mjs) or `clickhouse://HOST:PORT/DATABASE`
// (clickhouseStore.mjs). Both give the collector the same methods: queueBeacon, insertBeacon, countRuns, checkWritable,
// exportNdjson, close.
import { openStore } from './store.mjs';
import { parseClickHouseUrl, redactStoreUrl } from './clickhouseConnection.mjs';
import { openClickHouseStore } from './clickhouseStore.mjs';

/** 'sqlite:PATH', a bare PATH (SQLite), or 'clickhouse://…' → {kind: 'sqlite', path} | {kind: 'clickhouse', ...parseClickHouseUrl()}. */
export function parseStoreSpec(spec) {
  if (typeof spec !== 'string' || spec === '') throw new Error('--store wants sqlite:PATH or clickhouse://HOST:PORT/DATABASE');
  // The target keeps its password non-enumerable (out of logs and JSON): it is given the kind, not copied.
  if (spec.startsWith('clickhouse://')) return Object.assign(parseClickHouseUrl(spec), { kind: 'clickhouse' });
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) throw new Error(`--store "${redactStoreUrl(spec)}": only sqlite:PATH and clickhouse://HOST:PORT/DATABASE`);
  const file = spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : spec;
  if (!file) throw new Error('--store sqlite: wants a file path (sqlite:PATH)');
  return { kind: 'sqlite', path: file };
}

/**
 * Opens the store a spec names; resolves to the store (its kind in .kind). options.readOnly (the report, the export):
 * the store is read and changed in no way. The ClickHouse store's other options: openClickHouseStore().
 */
export async function openStoreSpec(spec, core, options = {}) {
  const parsed = typeof spec === 'string' ? parseStoreSpec(spec) : spec;
  if (parsed.kind === 'clickhouse') return openClickHouseStore(parsed, core, options);
  const store = openStore(parsed.path, core, { readOnly: options.readOnly });
  return { kind: 'sqlite', path: parsed.path, ...store };
}
