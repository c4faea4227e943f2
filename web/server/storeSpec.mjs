// The store behind `--store`: `sqlite:PATH` (the embedded default, store.mjs) or `clickhouse://HOST:PORT/DATABASE`
// (clickhouseStore.mjs). Both give the collector the same methods: queueBeacon, insertBeacon, countRuns, checkWritable,
// exportNdjson, close.
import { openStore } from './store.mjs';
import { openClickHouseStore, parseClickHouseUrl } from './clickhouseStore.mjs';

/** 'sqlite:PATH', a bare PATH (SQLite), or 'clickhouse://…' → {kind: 'sqlite', path} | {kind: 'clickhouse', ...}. */
export function parseStoreSpec(spec) {
  if (typeof spec !== 'string' || spec === '') throw new Error('--store wants sqlite:PATH or clickhouse://HOST:PORT/DATABASE');
  if (spec.startsWith('clickhouse://')) return { kind: 'clickhouse', ...parseClickHouseUrl(spec) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) throw new Error(`--store "${spec}": only sqlite:PATH and clickhouse://HOST:PORT/DATABASE`);
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
