// The current ClickHouse engine for the tests' SQL: chdb (npm; ClickHouse 26.x as a library) behind a small HTTP server
// that speaks as much of ClickHouse's HTTP interface as the store's client uses (web/server/clickhouseStore.mjs): a POST
// whose SQL is the `query` parameter and the body (gzip or not), `database`, and every other parameter a setting of that
// query; TabSeparated unless the SQL names a FORMAT; a failing query answers 500 with X-ClickHouse-Exception-Code and
// ClickHouse's "Code: N. DB::Exception: …". Authentication, TLS, replicas and a server process that can be killed stay
// with Debian's clickhouse-server (18.16), which the other tests run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { stateDir } from '../../stack/paths.mjs';
// The client's own parameters, not settings: the store's list (ClickHouse's HTTP handler reads them).
import { HANDLER_PARAMS } from '../../server/clickhouseStore.mjs';

const gunzip = promisify(zlib.gunzip);

// Where npm run deps installs chdb (web/scripts/ensure_deps.sh), outside the project's node_modules.
const CHDB_DIR = path.join(stateDir, 'chdb');
const chdbRequire = () => createRequire(path.join(CHDB_DIR, 'package.json'));

/** Whether chdb is installed (npm run deps installs it). */
export function chdbInstalled() {
  try {
    chdbRequire().resolve('chdb');
    return true;
  } catch {
    return false;
  }
}

// A query's settings written into its SQL, where ClickHouse takes a SETTINGS clause: before a SELECT's FORMAT (or at
// its end), between an INSERT's table and its FORMAT. Other statements (DDL, KILL, SYSTEM) run without them.
export function withSettings(sql, settings) {
  const list = Object.entries(settings).map(([k, v]) => `${k} = ${/^-?\d+(\.\d+)?$/.test(v) ? v : `'${v.replace(/'/g, "\\'")}'`}`);
  if (list.length === 0) return sql;
  const clause = ` SETTINGS ${list.join(', ')}`;
  const insert = /^(\s*INSERT\s+INTO\s+[\w.]+(?:\s*\([^)]*\))?)(\s+FORMAT\s+\w+)/i.exec(sql);
  if (insert) return `${insert[1]}${clause}${sql.slice(insert[1].length)}`;
  if (!/^\s*(SELECT|WITH)\b/i.test(sql)) return sql;
  const format = /\s+FORMAT\s+\w+\s*$/i.exec(sql);
  return format ? `${sql.slice(0, format.index)}${clause}${format[0]}` : `${sql.trimEnd()}${clause}`;
}

// The server itself, in a process of its own (a test that waits on a child process synchronously would otherwise
// stop the server it waits for): `node chdbServer.mjs DIR` prints {"port", "version"} once it listens.
async function serve(dir) {
  const { Session } = chdbRequire()('chdb');
  fs.mkdirSync(dir, { recursive: true });
  const session = new Session(dir);
  let queue = Promise.resolve();
  // One request at a time, as a session allows: its database chosen, then its query, with no other request's between.
  const run = (database, sql, format) => {
    const next = queue.then(async () => {
      await session.queryAsync(`USE ${database}`, { format: 'TabSeparated' });
      return session.queryAsync(sql, { format });
    });
    queue = next.catch(() => {});
    return next;
  };
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', async () => {
      try {
        const u = new URL(req.url, 'http://x');
        let body = Buffer.concat(parts);
        if (req.headers['content-encoding'] === 'gzip') body = await gunzip(body);
        const given = u.searchParams.get('query');
        const text = body.toString('utf8');
        const sql = withSettings(given !== null ? (text ? `${given}\n${text}` : given) : text,
          Object.fromEntries([...u.searchParams].filter(([k]) => !HANDLER_PARAMS.has(k))));
        const result = await run(u.searchParams.get('database') ?? 'default', sql, u.searchParams.get('default_format') ?? 'TabSeparated');
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(Buffer.from(result.bytes()));
      } catch (err) {
        const message = String(err.message ?? err).replace(/^Query failed: /, '');
        const code = Number(err.clickhouseCode ?? /^Code: (\d+)/.exec(message)?.[1] ?? 1001);
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-ClickHouse-Exception-Code': String(code) });
        res.end(`${/^Code: /.test(message) ? message : `Code: ${code}. DB::Exception: ${message}`}\n`);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const version = (await run('default', 'SELECT version()', 'TabSeparated')).text().trim();
  console.log(JSON.stringify({ port: server.address().port, version }));
  process.on('SIGTERM', () => server.close(async () => {
    await queue;
    session.cleanup();
    process.exit(0);
  }));
}

/**
 * Starts chdb on a session in dir (made if missing) behind its HTTP server, in a child process. Resolves once it
 * listens to the handle the tests take from a clickhouse-server (web/launch/clickhouse.mjs): { name, url, admin,
 * httpPort, dir, engine: 'chdb', version, stop() (SIGTERM), kill() (SIGKILL) }, each resolving when the process has exited.
 */
export async function startChdbServer(name, dir) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    process.removeListener('exit', reap);
    resolve({ code, signal });
  }));
  let stderr = '';
  child.stderr.on('data', (c) => { stderr = (stderr + c).slice(-4000); });
  const { port, version } = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    exited.then((e) => reject(new Error(`chdb server exited (${JSON.stringify(e)}): ${stderr}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const stopWith = (signal) => async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { name, url, admin: { url, user: null, password: null, tls: null }, httpPort: port, dir, engine: 'chdb', version,
    stop: stopWith('SIGTERM'), kill: stopWith('SIGKILL') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await serve(process.argv[2]);
