// A local ZooKeeper (Debian's zookeeper 3.8, one standalone server) run as a child process with its own config and data
// under .h3probe/zookeeper/NAME, never the system service: the coordination a replicated ClickHouse cluster needs
// (ReplicatedMergeTree, ON CLUSTER), for the cluster tests (web/launch/clickhouse.mjs startClickHouseCluster()).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../cli/ports.mjs';
import { stateDir } from '../stack/paths.mjs';

// The jar's manifest names its dependencies in /usr/share/java; the config folder carries log4j.properties.
const CLASSPATH = '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar';
const JAVA = '/usr/bin/java';

/** Whether Debian's zookeeper and a Java runtime are installed (web/scripts/ensure_deps.sh installs both). */
export const zookeeperInstalled = () => fs.existsSync('/usr/share/java/zookeeper.jar') && fs.existsSync(JAVA);

// ZooKeeper's four-letter word `srvr`: its mode once it serves sessions (`ruok` answers "imok" before that, and a
// ClickHouse server that cannot open its session at start crashes).
function serving(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('connect', () => socket.write('srvr'));
    socket.on('data', (c) => { text += c; });
    socket.on('close', () => resolve(/^Mode: standalone$/m.test(text)));
    socket.on('error', () => {});
  });
}

/**
 * Starts one standalone ZooKeeper server on a free loopback port, its data in a fresh .h3probe/zookeeper/NAME; resolves
 * once it serves sessions, to { host, port, dir, stop(), kill() } (stop: SIGTERM; kill: SIGKILL; each resolves on exit).
 */
export async function startZooKeeper(name, { timeoutMs = 60_000 } = {}) {
  if (!zookeeperInstalled()) throw new Error('zookeeper is not installed: npm run deps (web/scripts/ensure_deps.sh)');
  const dir = path.join(stateDir, 'zookeeper', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'zoo.cfg'), [
    'tickTime=2000',
    `dataDir=${path.join(dir, 'data')}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr',
    '',
  ].join('\n'));
  const child = spawn(JAVA, ['-Xmx256m', '-cp', CLASSPATH, 'org.apache.zookeeper.server.ZooKeeperServerMain', path.join(dir, 'zoo.cfg')],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => { stderr = (stderr + c).slice(-4000); });
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.removeListener('exit', reap));
  let dead = null;
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => { dead = { code, signal }; resolve(dead); }));
  const deadline = Date.now() + timeoutMs;
  while (!(await serving(port))) {
    if (dead) throw new Error(`zookeeper exited (${JSON.stringify(dead)}): ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`zookeeper did not answer on 127.0.0.1:${port} within ${timeoutMs} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const stopWith = (signal) => async () => {
    if (!dead) child.kill(signal);
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { host: '127.0.0.1', port, dir, stop: stopWith('SIGTERM'), kill: stopWith('SIGKILL') };
}
