// The ClickHouse store's tables, made from the core's schema() as SQLite's are: the run and request columns, a narrow
// per-run table for the report (run_records) whose columns are the core's per-run record, and the value summary over
// it (run_values); their DDL (on one server, or ON CLUSTER: replicated tables read and written through Distributed
// ones), and the layout a database keeps (store_layout), checked when a store is opened to write or to read.
import { clickhouseClient, connectionOf } from './clickhouseConnection.mjs';
import { CLICKHOUSE_GROUP_BY, runValueTuplesSql, sqlString } from './clickhouseRunSql.mjs';
import { COLLECTOR_COLUMNS, OTHER_STORE_ADVICE } from './store.mjs';

// The tables' version: 2, every run with its cold-setup record and the layout kept in the database (store_layout); 3,
// every table keyed by the run, so that a run two collectors wrote is read once (ReplacingMergeTree, read FINAL). A
// database of another version or layout is refused (no migration before 1.0: docs/architecture.md), but for version 2,
// which `h3probe migrate` turns into 3 in place (migrateClickHouseStore()).
export const CLICKHOUSE_STORE_VERSION = 3;

// Each version's engines of the three tables. Version 3: a run's rows have one sorting key whichever collector wrote
// them (run_records' leaves out received_at and region, which are each collector's own), so ReplacingMergeTree folds
// the copies when it merges, and a read with FINAL sees one before it has.
const ENGINES = Object.freeze({
  2: { runs: 'ReplacingMergeTree() ORDER BY run_id', requests: 'MergeTree() ORDER BY (run_id, phase)',
    run_records: 'MergeTree() ORDER BY (arms, region, received_at, run_id)' },
  // A request's idx is a core 'real' column, Nullable here; a sorting key takes no Nullable column (the decoder gives
  // every request an idx: -1 never occurs).
  3: { runs: 'ReplacingMergeTree() ORDER BY run_id', requests: 'ReplacingMergeTree() ORDER BY (run_id, phase, ifNull(idx, -1))',
    run_records: 'ReplacingMergeTree() ORDER BY (arms, run_id)' },
});
const TYPE = { text: 'String', real: 'Nullable(Float64)', flag: 'Nullable(UInt8)' };

/** The report table's per-run class-count columns: one per arm and class, in the core's class order. */
export function classCountColumns(schema) {
  return ['control', 'treatment'].flatMap((arm) => schema.requestClasses.map((c) => ({ arm, cls: c.name, name: `${arm}_${c.name}` })));
}

/** Per metric: the usable values of each arm (no missing ones) and how many usable requests had none. */
export function metricColumns(schema) {
  return schema.metrics.map((m) => ({ metric: m, control: `${m}_control`, treatment: `${m}_treatment`, missing: `${m}_missing` }));
}

/**
 * The run's cold-setup record (run.setup, connection_setup.hpp) as run_records columns: each protocol's outcome code,
 * the first HTTP/3-origin request's code, and per protocol and metric the cold sample's value (an array of 0 or 1
 * value).
 */
export function setupColumns(schema) {
  return {
    first: 'setup_first_h3', outcome: { h2: 'setup_h2_outcome', h3: 'setup_h3_outcome' },
    values: ['h2', 'h3'].flatMap((p) => schema.setupMetrics.map((m) => ({ protocol: p, metric: m.name, name: `setup_${p}_${m.name}` }))),
  };
}

/**
 * The three tables as [name, [column definitions], engine clause], made from the core's schema() (no column list of
 * their own): runs and requests hold the same columns as SQLite's; run_records is the report's per-run table.
 */
export function clickhouseTables(schema, version = CLICKHOUSE_STORE_VERSION) {
  const col = (c) => `${c.name} ${TYPE[c.type]}`;
  // What the collector adds to a run (store.mjs's COLLECTOR_COLUMNS): received_at always set, the others may be NULL.
  const collectorCol = (c) => `${c.name} ${c.name === 'received_at' ? 'String' : c.type === 'text' ? 'Nullable(String)' : 'Nullable(Float64)'}`;
  const runs = [...schema.runColumns.map(col), ...COLLECTOR_COLUMNS.map(collectorCol)];
  const requests = [...schema.requestColumns.map(col), ...schema.durations.map((d) => `${d.name} Nullable(Float64)`)];
  const records = [
    'run_id String', 'received_at String', 'region String', 'arms String', 'run_order String', 'estimands UInt8',
    ...classCountColumns(schema).map((c) => `${c.name} UInt8`),
    ...metricColumns(schema).flatMap((m) => [`${m.control} Array(Float64)`, `${m.treatment} Array(Float64)`, `${m.missing} UInt8`]),
    // The client's network's label (networkLabel()), for the report's split by network.
    'network Nullable(String)',
    // The run's payload mode (the core's run column payload_bytes): 0, the no-op.
    'payload_bytes UInt32',
    // The connection-setup view's record (setupColumns()).
    ...(({ first, outcome, values }) => [`${outcome.h2} UInt8`, `${outcome.h3} UInt8`, `${first} UInt8`,
      ...values.map((v) => `${v.name} Array(Float64)`)])(setupColumns(schema)),
  ];
  // A retried beacon has the run_id of the first: the store skips it, and when two collectors race (each given the
  // same beacon, neither finding it in), ReplacingMergeTree folds the copies; the readers read FINAL (RUN_RECORDS).
  // The report reads one arms mode and one payload mode from run_records alone.
  const engines = ENGINES[version];
  return [['runs', runs, engines.runs], ['requests', requests, engines.requests], ['run_records', records, engines.run_records]];
}

/**
 * CREATE statements: plain tables, or in a cluster (ON CLUSTER: made on every host at once) the replicated local tables
 * (name_local) plus a Distributed table of the name over them, sharded by run_id (a run's rows of every table on one shard).
 */
function clickhouseSchemaSql(schema, { database, cluster = null, version } = {}) {
  const out = [];
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  for (const [name, columns, engine] of clickhouseTables(schema, version)) {
    const local = cluster ? `${name}_local` : name;
    out.push(`CREATE TABLE IF NOT EXISTS ${database}.${local}${on} (\n  ${columns.join(',\n  ')}\n) ENGINE = ${
      cluster ? replicatedEngine(engine, database, local) : engine}`);
    if (cluster) {
      out.push(`CREATE TABLE IF NOT EXISTS ${database}.${name}${on} AS ${database}.${local}
  ENGINE = Distributed(${cluster}, ${database}, ${local}, cityHash64(run_id))`);
    }
  }
  return out;
}

/**
 * The replicated form of a MergeTree-family engine as clickhouseTables() writes it: its replicas share a ZooKeeper path
 * per shard ({shard}, the servers' macro), database and table, each host one replica ({replica}). path and replica may
 * be given (the store's layout: one path for every host of the cluster).
 */
function replicatedEngine(engine, database, table, { path: zkPath = `/clickhouse/tables/{shard}/${database}/${table}`, replica = '{replica}' } = {}) {
  const m = /^(\w*MergeTree)\((.*)\)( ORDER BY .*)$/s.exec(engine);
  if (!m) throw new Error(`no replicated form of the engine ${engine}`);
  return `Replicated${m[1]}(${[sqlString(zkPath), sqlString(replica), ...(m[2] ? [m[2]] : [])].join(', ')})${m[3]}`;
}

/**
 * The value summary, run_values: per (arms, payload_bytes, metric, day, region, network, s, v) the rows of
 * runValueTuplesSql() summed (cnt: how many, w, n, o: their weights), so that the report's histograms and order
 * statistics read a row per distinct value instead of every value. A SummingMergeTree filled by a materialized view
 * on run_records (each inserted block grouped once more by the view), so a key may hold several rows until merged:
 * readers sum. The day and network are the groupings' expressions (CLICKHOUSE_GROUP_BY) as text, since 18.16 refuses a
 * Nullable column in a sorting key. { columns, engine, select(from): the view's SELECT over the table `from` }.
 */
function clickhouseSummary(schema) {
  const keys = ['arms String', 'payload_bytes UInt32', 'metric String', 'day String', 'region String', 'network String', 's UInt8', 'v Float64'];
  const sums = ['cnt UInt64', 'w UInt64', 'n UInt64', 'o UInt64'];
  const name = (c) => c.split(' ')[0];
  const tuples = metricColumns(schema).map((m) => `arrayMap(u -> (${sqlString(m.metric)}, u.1, u.2, u.3, u.4, u.5), ${runValueTuplesSql(m.control, m.treatment, schema.limits.maxDurationMs)})`);
  return {
    columns: [...keys, ...sums],
    engine: `SummingMergeTree((${sums.map(name).join(', ')})) ORDER BY (${keys.map(name).join(', ')})`,
    select: (from) => `SELECT arms, payload_bytes, t.1 AS metric, ${CLICKHOUSE_GROUP_BY.day} AS day, region, ${CLICKHOUSE_GROUP_BY.network} AS network,
  t.2 AS s, t.3 AS v, count() AS cnt, sum(t.4) AS w, sum(t.5) AS n, sum(t.6) AS o
FROM ${from} ARRAY JOIN arrayConcat(${tuples.join(',\n  ')}) AS t
GROUP BY ${keys.map(name).join(', ')}`,
  };
}

// Makes the value summary where it is missing (in a cluster, ON CLUSTER: the replicated run_values_local and its view
// on every host, a Distributed run_values over them; the view of the replica an insert lands on fills the summary, and
// its replicas copy it). Made with the tables, before the first row: a day the summary does not hold exactly (rows lost
// or doubled) is found by the report's check, which then reads that day's raw rows.
async function ensureSummary(schema, client, database, cluster) {
  const summary = clickhouseSummary(schema);
  const local = cluster ? 'run_values_local' : 'run_values';
  const records = `${database}.${cluster ? 'run_records_local' : 'run_records'}`;
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  await client.query(`CREATE TABLE IF NOT EXISTS ${database}.${local}${on} (\n  ${summary.columns.join(',\n  ')}\n) ENGINE = ${
    cluster ? replicatedEngine(summary.engine, database, local) : summary.engine}`);
  if (cluster) {
    await client.query(`CREATE TABLE IF NOT EXISTS ${database}.run_values${on} AS ${database}.${local}
  ENGINE = Distributed(${cluster}, ${database}, ${local}, rand())`);
  }
  await client.query(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${database}.run_values_view${on} TO ${database}.${local} AS ${summary.select(records)}`);
}

/**
 * What a ClickHouse store holds, from the core's schema(): the version, each table's columns and engine, the value
 * summary's, and the cluster it was made on (if any). A database made with another layout is refused when opened, as
 * one of another version is.
 */
function clickhouseLayout(schema, cluster = null, version = CLICKHOUSE_STORE_VERSION) {
  const summary = clickhouseSummary(schema);
  return JSON.stringify({ version, tables: clickhouseTables(schema, version),
    summary: [summary.columns, summary.engine, summary.select('run_records')], runRecordVersion: schema.runRecordVersion,
    setupRecordVersion: schema.setupRecordVersion, ...(cluster ? { cluster } : {}) });
}

// Why the tables of database (their names: tables) are not a store of this layout: another layout, or tables without
// one; '' when they are, or when there are none.
async function layoutProblem(client, database, tables, layout, migratable) {
  if (tables.includes('store_layout')) {
    const have = await client.json(`SELECT layout FROM ${database}.store_layout`);
    if (have.length && have.every((r) => r.layout === layout)) return '';
    const theirs = (() => { try { return JSON.parse(have[0].layout); } catch { return {}; } })();
    const ours = JSON.parse(layout);
    if (have.length && have.every((r) => r.layout === migratable)) {
      return `is an h3probe store of version 2, whose tables keep twice a run that two collectors both wrote: stop its collectors `
        + `and migrate it in place, every row kept, with the one command h3probe migrate --store and this store's URL`;
    }
    if (theirs.version === ours.version && (theirs.cluster ?? null) !== (ours.cluster ?? null)) {
      const on = (c) => (c ? `on cluster ${c}` : 'on one server, without a cluster');
      return `is an h3probe store made ${on(theirs.cluster)}; the URL asks for one ${on(ours.cluster)}: give the URL it was made with`;
    }
    return `is an h3probe store of version ${theirs.version ?? '?'} whose layout is not this h3probe's (version ${CLICKHOUSE_STORE_VERSION}, its `
      + `tables' columns and the value summary): ${OTHER_STORE_ADVICE}`;
  }
  if (!tables.length) return '';
  return `holds tables (${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}) but no h3probe store layout: a store `
    + `of version 1 or none; this h3probe reads version ${CLICKHOUSE_STORE_VERSION} only: ${OTHER_STORE_ADVICE}`;
}

// The names of the tables of target's database (options: the query's); throws, naming the store, if they are not a
// store of schema's layout (layoutProblem(); a store of version 2 of it: the command that migrates it).
async function layoutTables(client, { url, database, cluster = null }, schema, options) {
  const tables = (await client.json(`SELECT name FROM system.tables WHERE database = ${sqlString(database)}`, options)).map((r) => r.name);
  const problem = await layoutProblem(client, database, tables, clickhouseLayout(schema, cluster), clickhouseLayout(schema, cluster, 2));
  // Only tables of a store and no layout yet: maybe another collector making the store at this moment (its layout last).
  // (A store of version 1, which kept no layout, holds rows.)
  const ours = new Set([...clickhouseTables(schema).map(([name]) => name), 'run_values', 'run_values_view']
    .flatMap((name) => [name, `${name}_local`]));
  if (problem) {
    const beingMade = !tables.includes('store_layout') && tables.every((t) => ours.has(t)) && Number((await client.json(
      `SELECT count() AS n FROM system.parts WHERE database = ${sqlString(database)} AND active AND rows > 0`, options))[0].n) === 0;
    throw Object.assign(new Error(`clickhouse://${new URL(url).host}/${database} ${problem}`), { beingMade });
  }
  return tables;
}

// How long a collector that finds a store half made (its tables empty, no layout yet) waits for the one making it (two
// collectors started at once); in a cluster, as long as a statement ON CLUSTER may take.
const BEING_MADE_WAIT_MS = 10_000;

// Statements ON CLUSTER wait for every host of the cluster (ClickHouse's distributed_ddl_task_timeout, 180 s by default).
const DDL_TIMEOUT_MS = 240_000;

/**
 * Creates the database and tables where missing; throws if the server holds the tables of another version or layout
 * (store_layout, clickhouseLayout()), or tables without a layout. In a cluster (target.cluster) every statement is ON
 * CLUSTER, sent to the URL's server, and the layout table is one replicated table across every host, written last: a
 * store whose layout is there is whole, and opening it again sends no statement that would wait for a host that is
 * down. Making the store needs every host up. version: the layout's (2: an empty database made as the h3probe of
 * version 2 made it, for the test of `h3probe migrate`).
 */
export async function ensureClickHouseTables(schema, target, { version = CLICKHOUSE_STORE_VERSION } = {}) {
  const { url, database, cluster = null } = target;
  const layout = clickhouseLayout(schema, cluster, version);
  const client = clickhouseClient(connectionOf(target), { timeoutMs: cluster ? DDL_TIMEOUT_MS : 120_000 });
  const where = `clickhouse://${new URL(url).host}/${database}`;
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  if (cluster) {
    const known = (await client.json('SELECT DISTINCT cluster FROM system.clusters')).map((r) => r.cluster);
    if (!known.includes(cluster)) {
      throw new Error(`${where}: the server has no cluster ${cluster} in its remote_servers (it has: ${known.join(', ') || 'none'})`);
    }
  }
  let tables;
  for (const deadline = Date.now() + (cluster ? DDL_TIMEOUT_MS : BEING_MADE_WAIT_MS); ;) {
    try {
      tables = await layoutTables(client, target, schema);
      break;
    } catch (err) {
      if (!err.beingMade || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  if (cluster && tables.includes('store_layout')) return;
  if (!tables.length) await client.query(`CREATE DATABASE IF NOT EXISTS ${database}${on}`);
  for (const sql of clickhouseSchemaSql(schema, { database, cluster, version })) await client.query(sql);
  await ensureSummary(schema, client, database, cluster);
  if (!tables.includes('store_layout')) {
    // A MergeTree, as every table here: ClickHouse Cloud offers no Log engines. In a cluster one replicated table
    // across all hosts ({shard}-{replica}: a replica name unique in the cluster), so that a reader on any host finds it.
    const engine = 'MergeTree() ORDER BY tuple()';
    await client.query(`CREATE TABLE IF NOT EXISTS ${database}.store_layout${on} (layout String) ENGINE = ${cluster
      ? replicatedEngine(engine, database, 'store_layout', { path: `/clickhouse/tables/all/${database}/store_layout`, replica: '{shard}-{replica}' })
      : engine}`);
    await client.query(`INSERT INTO ${database}.store_layout FORMAT JSONEachRow\n${JSON.stringify({ layout })}`);
  }
}

/**
 * For the report and the export, which read what the collector made and make nothing: throws if target's database holds
 * no tables, or tables of another layout than schema's (clickhouseLayout()), saying so.
 */
export async function checkReadable(client, schema, { url, database, cluster }) {
  // Asked in the system database: a query in a database that does not exist fails before it runs.
  const tables = await layoutTables(client, { url, database, cluster }, schema, { settings: { database: 'system' } });
  if (!tables.length) {
    throw new Error(`the ClickHouse store at ${url} has no h3probe tables in database ${database}: the collector makes them when it `
      + `opens the store (h3probe collector --store clickhouse://…/${database}); the report and the export only read`);
  }
}

/**
 * `h3probe migrate`: a store of version 2 (plain MergeTree requests and run_records, where a run two collectors both
 * wrote stays twice) made version 3 in place, every row kept: for requests and run_records each, the new table beside
 * the old (name_v3; in a cluster name_v3_local on every host, written through a Distributed name_v3 with the store's own
 * sharding), filled with INSERT … SELECT, checked (the new table read FINAL holds every distinct key of the old), then
 * swapped in by RENAME, the old kept as name_v2 until the layout says 3, then dropped. The value summary's view is made
 * again on the new run_records (its table run_values stays: a cell it holds twice is read from run_records, as any
 * cell the summary does not hold exactly). The collectors must be stopped. An interrupted migration is taken up again
 * by the same command. log(line): progress. Resolves to { migrated (false: already version 3), rows: {table: n} }.
 */
export async function migrateClickHouseStore(schema, target, log = () => {}) {
  const { url, database, cluster = null } = target;
  const client = clickhouseClient(connectionOf(target), { timeoutMs: 24 * 3_600_000,
    settings: cluster ? { insert_distributed_sync: '1', load_balancing: 'in_order' } : {} });
  const where = `clickhouse://${new URL(url).host}/${database}`;
  const on = cluster ? ` ON CLUSTER ${cluster}` : '';
  const db = (t) => `${database}.${t}`;
  const local = (t) => (cluster ? `${t}_local` : t);
  const layout = clickhouseLayout(schema, cluster);
  const old = clickhouseLayout(schema, cluster, 2);
  const tables = new Set((await client.json(`SELECT name FROM system.tables WHERE database = ${sqlString(database)}`)).map((r) => r.name));
  const have = tables.has('store_layout') ? (await client.json(`SELECT layout FROM ${db('store_layout')}`)).map((r) => r.layout) : [];
  if (have.length && have.every((l) => l === layout)) return { migrated: false, rows: {} };
  if (!have.length || !have.every((l) => l === old)) {
    throw new Error(`${where} is not an h3probe store of version 2 of this h3probe's tables: nothing to migrate (${OTHER_STORE_ADVICE})`);
  }
  const changed = clickhouseTables(schema).filter(([name]) => name === 'requests' || name === 'run_records');
  const keyOf = { requests: 'run_id, phase, ifNull(idx, -1)', run_records: 'arms, run_id' };
  const rows = {};
  // Swapped already (an earlier run stopped after its RENAME): only the view, the layout and the old tables are left.
  const swapped = changed.every(([name]) => tables.has(local(`${name}_v2`)));
  if (!swapped) {
    for (const [name, columns, engine] of changed) {
      for (const t of [...(cluster ? [`${name}_v3`] : []), local(`${name}_v3`)]) await client.query(`DROP TABLE IF EXISTS ${db(t)}${on}`);
      const fresh = local(`${name}_v3`);
      await client.query(`CREATE TABLE ${db(fresh)}${on} (\n  ${columns.join(',\n  ')}\n) ENGINE = ${
        cluster ? replicatedEngine(engine, database, fresh) : engine}`);
      if (cluster) {
        await client.query(`CREATE TABLE ${db(`${name}_v3`)}${on} AS ${db(fresh)}
  ENGINE = Distributed(${cluster}, ${database}, ${fresh}, cityHash64(run_id))`);
      }
      log(`${name}: copying into ${name}_v3 (${engine})`);
      await client.query(`INSERT INTO ${db(`${name}_v3`)} SELECT * FROM ${db(name)}`,
        { settings: cluster ? { insert_deduplicate: '0' } : {} });
      const [n] = await client.json(`SELECT (SELECT count() FROM ${db(`${name}_v3`)} FINAL) AS fresh,
        (SELECT uniqExact(${keyOf[name]}) FROM ${db(name)}) AS distinct_keys, (SELECT count() FROM ${db(name)}) AS rows`);
      if (Number(n.fresh) !== Number(n.distinct_keys)) {
        throw new Error(`${where}: ${name}_v3 holds ${n.fresh} rows of the ${n.distinct_keys} distinct ones of ${name}: nothing swapped, run the migration again`);
      }
      rows[name] = { rows: Number(n.rows), distinct: Number(n.fresh) };
      log(`${name}: ${n.rows} rows copied, ${n.fresh} distinct (copies of a run another collector also wrote folded)`);
      if (cluster) await client.query(`DROP TABLE ${db(`${name}_v3`)}${on}`);
    }
    // The value summary's view reads the table it was made on: made again on the new one once it is in place.
    await client.query(`DROP TABLE IF EXISTS ${db('run_values_view')}${on}`);
    await client.query(`RENAME TABLE ${changed.map(([name]) => `${db(local(name))} TO ${db(local(`${name}_v2`))}, ${
      db(local(`${name}_v3`))} TO ${db(local(name))}`).join(', ')}${on}`);
  }
  await ensureSummary(schema, client, database, cluster);
  await client.query(`TRUNCATE TABLE ${db('store_layout')}`);
  await client.query(`INSERT INTO ${db('store_layout')} FORMAT JSONEachRow\n${JSON.stringify({ layout })}`);
  for (const [name] of changed) await client.query(`DROP TABLE IF EXISTS ${db(local(`${name}_v2`))}${on}`);
  log(`${where}: version ${CLICKHOUSE_STORE_VERSION}`);
  return { migrated: true, rows };
}
