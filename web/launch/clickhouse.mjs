// A local ClickHouse server (Debian's clickhouse-server 18.16) run as a child process with its own config and data
// under .h3probe/clickhouse/NAME, never the system service: `npm run clickhouse`, the tests and bench:clickhouse use it.
// Several can run at once (each its own ports), and a set of them with a ZooKeeper can be one cluster of shards and
// replicas (remote_servers, macros, ON CLUSTER), which is how the cluster tests build real replicated and Distributed
// tables on one machine.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clickhouseClient } from '../server/clickhouseStore.mjs';
import { freePort } from '../cli/ports.mjs';
import { startZooKeeper } from './zookeeper.mjs';
import { stateDir } from '../stack/paths.mjs';

export const CLICKHOUSE_BINARY = '/usr/sbin/clickhouse-server';

/** The environment variable that picks the ClickHouse tests' engine: unset, Debian's server; chdb, the current engine
 *  behind web/test/chdb/chdbServer.mjs (npm test sets it for its second ClickHouse lane). */
export const CLICKHOUSE_ENGINE_ENV = 'H3PROBE_CLICKHOUSE_ENGINE';

/** Whether the server binary is installed (web/scripts/ensure_deps.sh installs it). */
export const clickhouseInstalled = () => fs.existsSync(CLICKHOUSE_BINARY);

const xmlEscape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// clusters: { name: [ [ {host, tcpPort}, ... the shard's replicas ], ... one per shard ] }, each shard with
// internal_replication (an insert through a Distributed table goes to one replica; ReplicatedMergeTree copies it).
// replication: { zookeeper: {host, port}, shard, replica }: the ZooKeeper, this server's {shard} and {replica} macros,
// and the queue of ON CLUSTER statements.
// tls: { certPath, keyPath }: the HTTP interface speaks only HTTPS (https_port), as ClickHouse Cloud's does.
function configXml({ dir, httpPort, tcpPort, interserverPort, clusters = {}, replication = null, tls = null }) {
  const replica = (s) => `<replica><host>${xmlEscape(s.host ?? '127.0.0.1')}</host><port>${s.tcpPort}</port></replica>`;
  const remote = Object.entries(clusters).map(([name, shards]) => `    <${name}>\n${shards.map((replicas) => `      <shard>
        <internal_replication>true</internal_replication>
        ${replicas.map(replica).join('\n        ')}
      </shard>`).join('\n')}\n    </${name}>`).join('\n');
  // A session of 6 s (ClickHouse's default: 30 s): a replica killed and started again waits for its old session to
  // expire before it replicates again.
  const coordination = replication ? `  <zookeeper>
    <node><host>${xmlEscape(replication.zookeeper.host)}</host><port>${replication.zookeeper.port}</port></node>
    <session_timeout_ms>6000</session_timeout_ms>
  </zookeeper>
  <macros><shard>${xmlEscape(replication.shard)}</shard><replica>${xmlEscape(replication.replica)}</replica></macros>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
` : '';
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${xmlEscape(path.join(dir, 'log', 'server.log'))}</log>
    <errorlog>${xmlEscape(path.join(dir, 'log', 'server.err.log'))}</errorlog>
    <size>10M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
${tls ? `  <https_port>${httpPort}</https_port>
  <openSSL><server>
    <certificateFile>${xmlEscape(tls.certPath)}</certificateFile>
    <privateKeyFile>${xmlEscape(tls.keyPath)}</privateKeyFile>
    <verificationMode>none</verificationMode>
    <loadDefaultCAFile>false</loadDefaultCAFile>
    <cacheSessions>true</cacheSessions>
    <disableProtocols>sslv2,sslv3,tlsv1,tlsv1_1</disableProtocols>
    <preferServerCiphers>true</preferServerCiphers>
  </server></openSSL>` : `  <http_port>${httpPort}</http_port>`}
  <tcp_port>${tcpPort}</tcp_port>
  <interserver_http_port>${interserverPort}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <path>${xmlEscape(path.join(dir, 'data'))}/</path>
  <tmp_path>${xmlEscape(path.join(dir, 'tmp'))}/</tmp_path>
  <user_files_path>${xmlEscape(path.join(dir, 'user_files'))}/</user_files_path>
  <format_schema_path>${xmlEscape(path.join(dir, 'format_schemas'))}/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <remote_servers>
${remote}
  </remote_servers>
${coordination}  <query_log>
    <database>system</database>
    <table>query_log</table>
    <flush_interval_milliseconds>1000</flush_interval_milliseconds>
  </query_log>
</yandex>
`;
}

// users: { NAME: { password, readonly } } (readonly: a profile with readonly=1, an analyst's); without it, a passwordless
// default user. With it, default has a password too (ADMIN_PASSWORD), so that no one connects without one.
export const ADMIN_PASSWORD = 'h3probe-admin-test';
// profile: more settings of the default profile (e.g. small insert blocks, for a test of an insert cut off midway).
function usersXml(users = null, profile = {}) {
  const all = users ? { default: { password: ADMIN_PASSWORD }, ...users } : { default: { password: '' } };
  const user = (name, u) => `    <${name}>
      <password>${xmlEscape(u.password)}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>${u.readonly ? 'analyst' : 'default'}</profile>
      <quota>default</quota>
    </${name}>`;
  return `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>12000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
      <log_queries>1</log_queries>
${Object.entries(profile).map(([k, v]) => `      <${k}>${xmlEscape(v)}</${k}>`).join('\n')}
    </default>
    <analyst>
      <readonly>1</readonly>
      <log_queries>1</log_queries>
    </analyst>
  </profiles>
  <users>
${Object.entries(all).map(([name, u]) => user(name, u)).join('\n')}
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;
}

/** Picks the ports of a server to be started later (so that a cluster's config can name every shard first). */
export async function planClickHouse(name = 'local', { httpPort, exclude: taken = [] } = {}) {
  const exclude = [...taken, ...(httpPort ? [httpPort] : [])];
  const take = async () => { const p = await freePort({ exclude }); exclude.push(p); return p; };
  return { name, dir: path.join(stateDir, 'clickhouse', name), httpPort: httpPort ?? await take(), tcpPort: await take(),
    interserverPort: await take() };
}

/**
 * Starts clickhouse-server with its config and data in plan.dir (from planClickHouse()); fresh: remove the data first.
 * Options: tls ({certPath, keyPath}: HTTPS only), users and profile (see usersXml()), clusters, fresh. Resolves once its HTTP
 * interface answers, to { url (http(s)://127.0.0.1:PORT), admin (a connection for clickhouseClient()), httpPort,
 * tcpPort, dir, pid, stop(), kill() }. stop() sends SIGTERM and resolves when the process has exited (kill(): SIGKILL, as a crash).
 */
export async function startClickHouse(plan, options = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(plan, options);
    } catch (err) {
      // Another process took one of the picked ports between picking and binding: pick others (a cluster's shards
      // name each other's ports in their configs, so only a lone server can move).
      // A previous server on the same data still exiting holds its lock for a moment: wait and try again.
      if (attempt < 5 && /Cannot lock file/.test(err.message)) {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const movable = Object.keys(options.clusters ?? {}).length === 0;
      if (!movable || attempt >= 3 || !/Address already in use/.test(err.message)) throw err;
      Object.assign(plan, await planClickHouse(plan.name, { httpPort: options.keepHttpPort ? plan.httpPort : undefined }));
    }
  }
}

/**
 * Starts one cluster named `cluster` as real servers on this machine: shards, a list per shard of the names of its
 * replicas (planClickHouse(name) each; [[a], [b]]: 2 shards × 1 replica, [[a, b]]: 1 shard × 2 replicas), and the
 * ZooKeeper they coordinate through (startZooKeeper(); the replicas' tables and the ON CLUSTER statements need it, so
 * every cluster has one). Each server's {shard} and {replica} macros are its shard's number and its own name. Resolves
 * to { plans, servers (flat, in shard order), shards (the servers by shard), clusters, zookeeper, stop() (servers, then
 * ZooKeeper) }. A server's ports are written into every server's config, so when another process takes one between
 * picking and binding (a server's own outgoing connections draw from the same ephemeral range), every started server is
 * stopped and all of them are planned and started again.
 */
export async function startClickHouseCluster(cluster, shards, options = {}) {
  const zookeeper = await startZooKeeper(`${cluster}-${process.pid}`);
  try {
    for (let attempt = 1; ; attempt++) {
      const plans = [];
      // Ports free now are not yet held by the servers planned before: each plan leaves out the ones already handed out.
      const byShard = [];
      for (const names of shards) {
        const row = [];
        for (const name of names) {
          const plan = await planClickHouse(name, { exclude: plans.flatMap((p) => [p.httpPort, p.tcpPort, p.interserverPort]) });
          plans.push(plan);
          row.push(plan);
        }
        byShard.push(row);
      }
      const clusters = { [cluster]: byShard.map((row) => row.map((p) => ({ host: '127.0.0.1', tcpPort: p.tcpPort }))) };
      const servers = [];
      try {
        const optionsOf = (plan) => ({ ...options, clusters,
          replication: { zookeeper, shard: String(byShard.findIndex((row) => row.includes(plan)) + 1), replica: plan.name } });
        for (const plan of plans) servers.push(await startOnce(plan, optionsOf(plan)));
        const grouped = () => byShard.map((row) => row.map((plan) => servers.find((s) => s.name === plan.name)));
        const result = { plans, servers, shards: grouped(), clusters, zookeeper,
          // Starts a stopped server again on its data (a replica back from an outage); resolves to its new handle.
          async restart(server) {
            const plan = plans.find((p) => p.name === server.name);
            const again = await startOnce(plan, { ...optionsOf(plan), fresh: false });
            servers[servers.indexOf(server)] = again;
            result.shards = grouped();
            return again;
          },
          // Resolves once a replica has fetched every part its shard's log holds for the replicated tables of
          // database (its queue empty, its log pointer past the log's last entry); SYSTEM SYNC REPLICA in 18.16 waits
          // only for the queue, not for the log entries not yet read into it.
          async caughtUp(server, database, { timeoutMs = 120_000 } = {}) {
            const client = clickhouseClient(server.admin, { timeoutMs: 10_000 });
            const deadline = Date.now() + timeoutMs;
            for (;;) {
              const behind = (await client.json(`SELECT table, log_pointer, log_max_index, queue_size FROM system.replicas
                WHERE database = '${database}' AND (queue_size > 0 OR log_pointer <= log_max_index)`));
              if (behind.length === 0) return;
              if (Date.now() > deadline) throw new Error(`${server.name} did not catch up within ${timeoutMs} ms: ${JSON.stringify(behind)}`);
              await new Promise((r) => setTimeout(r, 250));
            }
          },
          async stop() {
            for (const server of servers) await server.stop();
            await zookeeper.stop();
          } };
        return result;
      } catch (err) {
        for (const server of servers) await server.stop();
        if (attempt >= 3 || !/Address already in use/.test(err.message)) throw err;
      }
    }
  } catch (err) {
    await zookeeper.kill();
    throw err;
  }
}

async function startOnce(plan, { clusters = {}, replication = null, fresh = false, timeoutMs = 30_000, tls = null, users = null, profile = {} } = {}) {
  if (!clickhouseInstalled()) throw new Error('clickhouse-server is not installed: npm run deps (web/scripts/ensure_deps.sh)');
  const { dir } = plan;
  if (fresh) fs.rmSync(dir, { recursive: true, force: true });
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas', 'log']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.xml'), configXml({ ...plan, clusters, replication, tls }));
  fs.writeFileSync(path.join(dir, 'users.xml'), usersXml(users, profile));
  const child = spawn(CLICKHOUSE_BINARY, [`--config-file=${path.join(dir, 'config.xml')}`], {
    cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: false,
  });
  let stderr = '';
  child.stderr.on('data', (c) => { stderr = (stderr + c).slice(-4000); });
  // Never outlive the process that started it (a script that throws, a test runner that exits).
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.removeListener('exit', reap));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let dead = null;
  exited.then((e) => { dead = e; });
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${plan.httpPort}`;
  // Who the tests and scripts connect as to make databases: default, with its password when the users have them.
  const admin = { url, user: users ? 'default' : null, password: users ? ADMIN_PASSWORD : null,
    tls: tls ? { ca: fs.readFileSync(tls.certPath, 'utf8'), rejectUnauthorized: true } : null };
  const probe = clickhouseClient(admin, { timeoutMs: 2000 });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (dead) throw new Error(`clickhouse-server exited (${JSON.stringify(dead)}): ${stderr} ${readLogTail(dir)}`);
    try {
      if ((await probe.query('SELECT 1')).trim() === '1') break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`clickhouse-server did not answer on ${url} within ${timeoutMs} ms: ${readLogTail(dir)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stopWith = (signal) => async () => {
    if (!dead) child.kill(signal);
    await exited;
  };
  return { ...plan, url, admin, pid: child.pid, stop: stopWith('SIGTERM'), kill: stopWith('SIGKILL'), exited };
}

function readLogTail(dir) {
  try {
    return fs.readFileSync(path.join(dir, 'log', 'server.err.log'), 'utf8').slice(-2000);
  } catch {
    return '(no log)';
  }
}

/** The server's version string (clickhouse-server --version is not in 18.16: ask a running one). */
export async function clickhouseVersion(url) {
  const res = await fetch(`${url}/?query=SELECT%20version()`);
  return (await res.text()).trim();
}

/**
 * A test's scratch space for ClickHouse servers: a temporary directory, and the lists of servers started and plans
 * made, which cleanup() stops and removes with the directory. prefix: the directory's name prefix. fresh(name): a
 * server of the test's own, empty (options: startClickHouse()'s), kept in those lists (fails when clickhouse-server is not installed).
 */
export function clickhouseScratch(prefix) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const servers = [];
  const plans = [];
  return {
    tmp, servers, plans,
    async fresh(name, options = {}) {
      if (!clickhouseInstalled()) throw new Error('clickhouse-server is not installed: npm run deps');
      const plan = await planClickHouse(`test-${name}-${process.pid}`);
      plans.push(plan);
      const server = await startClickHouse(plan, { ...options, fresh: true });
      servers.push(server);
      return server;
    },
    async cleanup() {
      for (const s of servers) await s.kill();
      for (const p of plans) fs.rmSync(p.dir, { recursive: true, force: true });
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
