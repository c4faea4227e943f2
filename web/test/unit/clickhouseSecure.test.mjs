// ClickHouse as teams run it: a server that speaks only TLS, with a password on every user (default too) and an analyst
// whose profile is readonly=1. The collector's CLI stores every beacon there; the analyst's report equals SQLite's byte
// for byte and its export holds every run; a wrong password fails at once and says authentication; no password shows in
// any output. Then an insert cut off midway (the server killed while a batch's blocks go in): once the log has shipped,
// the export holds every request row of every acknowledged run exactly once. (The URL's parsing and docs/clickhouse.md's
// table of its parameters, without a server or the build: clickhouseUrl.test.mjs.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';
import { openStore } from '../../server/store.mjs';
import { clickhouseClient, PASSWORD_ENV } from '../../server/clickhouseConnection.mjs';
import { openClickHouseStore } from '../../server/clickhouseStore.mjs';
import { clickhouseInstalled, clickhouseScratch, startClickHouse } from '../../launch/clickhouse.mjs';
import { ensureCerts } from '../../stack/certs.mjs';
import { syntheticBeacons } from '../../synthetic/syntheticBeacons.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { assertSameReport } from './sameReport.mjs';

const core = await loadH3probeNode();
const scratch = clickhouseScratch('h3probe-chsecure-');
const { tmp } = scratch;
after(scratch.cleanup);

// Passwords with the characters a URL must encode; each must never appear in any output.
const WRITER_PASSWORD = 'wr1te:r/p@ss wörd?';
const ANALYST_PASSWORD = 'an4lyst#secret&';
const USERS = { writer: { password: WRITER_PASSWORD }, analyst: { password: ANALYST_PASSWORD, readonly: true } };

// Runs the h3probe CLI; resolves to { code, out, err } (env: added to this process's; input: stdin text).
function cli(argv, { env = {}, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), ...argv], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { err += c; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out, err, child }); });
  });
}

function post(port, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/beacon', headers: { 'Content-Type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const noPassword = (text, where) => {
  for (const p of [WRITER_PASSWORD, ANALYST_PASSWORD, encodeURIComponent(WRITER_PASSWORD), encodeURIComponent(ANALYST_PASSWORD)]) {
    assert.ok(!text.includes(p), `${where} shows a password`);
  }
};

describe('a TLS-only ClickHouse with passwords and a read-only analyst', { skip: clickhouseInstalled() ? false : 'clickhouse-server not installed' }, () => {
  let server;
  let certs;
  let hostPort;
  const analystFile = path.join(tmp, 'analyst.password');
  const writerUrl = (db, extra = '') => `clickhouse://writer:${encodeURIComponent(WRITER_PASSWORD)}@${hostPort}/${db}?secure=1&ca=${certs.certPath}${extra}`;
  // The analyst's password from a file, the way a unit file's LoadCredential= hands it over.
  const analystUrl = (db) => `clickhouse://analyst@${hostPort}/${db}?secure=1&ca=${certs.certPath}&password_file=${analystFile}`;

  before(async () => {
    certs = await ensureCerts();
    server = await scratch.fresh('secure', { tls: certs, users: USERS });
    hostPort = `127.0.0.1:${server.httpPort}`;
    fs.writeFileSync(analystFile, `${ANALYST_PASSWORD}\n`, { mode: 0o600 });
  });

  test('plain HTTP to it is unreachable; without its CA the certificate is refused and the error says TLS', async () => {
    const plain = clickhouseClient({ url: `http://${hostPort}`, user: 'writer', password: WRITER_PASSWORD });
    await assert.rejects(plain.query('SELECT 1'), (err) => err.unreachable === true);
    const noCa = clickhouseClient({ url: `https://${hostPort}`, user: 'writer', password: WRITER_PASSWORD, tls: {} });
    await assert.rejects(noCa.query('SELECT 1'), (err) => err.tls === true && /TLS: .*\?ca=FILE/.test(err.message) && !err.unreachable);
    const skip = clickhouseClient({ url: `https://${hostPort}`, user: 'writer', password: WRITER_PASSWORD, tls: { rejectUnauthorized: false } });
    assert.equal((await skip.query('SELECT 1')).trim(), '1');
  });

  test('the collector CLI stores every beacon; the analyst\'s export holds them; no password in any output', { timeout: 180_000 }, async () => {
    const beacons = [...syntheticBeacons({ runs: 60, seed: 3, days: 1 })].map((b) => JSON.stringify(b.beacon));
    // The writer's password from the environment: the URL names only the user.
    const url = `clickhouse://writer@${hostPort}/collected?secure=1&ca=${certs.certPath}&log=${path.join(tmp, 'collected-log')}`;
    const child = spawn(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'collector', '--store', url, '--port', '0'],
      { env: { ...process.env, [PASSWORD_ENV]: WRITER_PASSWORD } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { err += c; });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const port = await new Promise((resolve, reject) => {
      const check = () => {
        const m = /"port":(\d+)/.exec(out);
        if (m) return resolve(Number(m[1]));
        if (child.exitCode !== null) return reject(new Error(`collector exited: ${err}`));
        setTimeout(check, 50);
      };
      check();
    });
    for (const b of beacons) assert.equal(await post(port, b), 204);
    const metrics = await new Promise((resolve) => http.get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let t = '';
      res.on('data', (c) => { t += c; });
      res.on('end', () => resolve(t));
    }));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, err);
    assert.match(out, /"store":"clickhouse:\/\/writer@127\.0\.0\.1:\d+\/collected\?secure=1/);
    noPassword(out + err + metrics, 'the collector\'s output and /metrics');

    const exported = await cli(['export', '--store', analystUrl('collected')]);
    assert.equal(exported.code, 0, exported.err);
    const ids = exported.out.trim().split('\n').map((l) => JSON.parse(l).run_id);
    assert.deepEqual(ids.sort(), beacons.map((b) => JSON.parse(b).run_id).sort(), 'every beacon once, read by the analyst');
    noPassword(exported.out + exported.err, 'the export');
  });

  test('the analyst\'s report (readonly=1: no settings sent) equals SQLite\'s byte for byte; the analyst cannot write', { timeout: 180_000 }, async () => {
    const sqlitePath = path.join(tmp, 'same.sqlite');
    const st = openStore(sqlitePath, core);
    const ch = await openClickHouseStore(writerUrl('same'), core, { log: path.join(tmp, 'same-log') });
    const pending = [];
    for (const { beacon, meta } of syntheticBeacons({ runs: 400, seed: 11, days: 2 })) {
      const text = JSON.stringify(beacon);
      st.insertBeacon(core.decodeBeacon(text), meta);
      pending.push(ch.queueBeacon(core.decodeBeacon(text), meta));
    }
    st.close();
    await Promise.all(pending);
    await ch.flushed();
    await ch.close();
    const both = {};
    for (const [name, spec] of [['sqlite', `sqlite:${sqlitePath}`], ['clickhouse', analystUrl('same')]]) {
      const html = path.join(tmp, `same-${name}.html`);
      const json = path.join(tmp, `same-${name}.json`);
      const r = await cli(['report', '--store', spec, '--html', html, '--json', json]);
      assert.equal(r.code, 0, r.err);
      noPassword(r.out + r.err + fs.readFileSync(html, 'utf8') + fs.readFileSync(json, 'utf8'), `the ${name} report`);
      // The report names the files it wrote: the one line that differs by design.
      both[name] = { text: r.out.replaceAll(`same-${name}.`, 'same.'), html: fs.readFileSync(html, 'utf8'), json: JSON.parse(fs.readFileSync(json, 'utf8')) };
    }
    assert.match(both.sqlite.text, /400 stored runs|of 400/);
    assertSameReport(both);
    // The profile is ClickHouse's own guard: the analyst's store opened for writing cannot make its tables.
    await assert.rejects(openClickHouseStore(
      `clickhouse://analyst:${encodeURIComponent(ANALYST_PASSWORD)}@${hostPort}/other?secure=1&ca=${certs.certPath}`, core,
      { log: path.join(tmp, 'analyst-log') }), /readonly|Cannot execute query in readonly mode/i);
  });

  test('a wrong password fails at once, says authentication failed, and is not printed', { timeout: 60_000 }, async () => {
    const wrong = 'not-the-password-42';
    const url = `clickhouse://writer:${wrong}@${hostPort}/collected?secure=1&ca=${certs.certPath}&log=${path.join(tmp, 'wrong-log')}`;
    for (const argv of [['collector', '--store', url, '--port', '0'], ['report', '--store', url], ['export', '--store', url]]) {
      const t0 = Date.now();
      const r = await cli(argv, { timeoutMs: 30_000 });
      assert.equal(r.code, 2, `${argv[0]}: ${r.err}`);
      assert.match(r.err, /authentication failed for user writer/, argv[0]);
      assert.ok(Date.now() - t0 < 20_000, `${argv[0]} failed at once`);
      assert.ok(!(r.out + r.err).includes(wrong), `${argv[0]} printed the password`);
    }
  });
});

describe('an insert cut off midway', { skip: clickhouseInstalled() ? false : 'clickhouse-server not installed' }, () => {
  test('the server killed while a batch\'s blocks go in: once shipped, every request row of every run is there exactly once', { timeout: 240_000 }, async () => {
    // Small insert blocks (the writer's profile), so that one batch's requests insert is many blocks, each committed on its own.
    const server = await scratch.fresh('midway', { profile: { max_insert_block_size: 2000, min_insert_block_size_rows: 2000, min_insert_block_size_bytes: 0 } });
    const spec = `clickhouse://127.0.0.1:${server.httpPort}/midway`;
    const logFile = path.join(tmp, 'midway-log');
    const items = [...syntheticBeacons({ runs: 12_000, seed: 21, days: 1 })];
    // Stored first in the log only: a flush interval longer than the test, then one batch shipped on demand.
    let store = await openClickHouseStore(spec, core, { log: logFile, flushMs: 3_600_000, maxBatch: 20_000 });
    await Promise.all(items.map(({ beacon, meta }) => store.queueBeacon(core.decodeBeacon(JSON.stringify(beacon)), meta)));
    const expected = items.reduce((n, { beacon }) => n + beacon.samples.length, 0);
    const admin = clickhouseClient(server.url, { database: 'midway' });
    const count = async (table) => Number((await admin.query(`SELECT count() FROM ${table}`)).trim());
    const shipping = store.flushed(5_000).catch(() => {});
    // Kill it once some of the requests insert's blocks are in and before all are.
    let seen = 0;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      seen = await count('requests').catch(() => seen);
      if (seen > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await server.kill();
    await shipping;
    await store.close();
    assert.ok(seen > 0 && seen < expected, `the kill came midway: ${seen} of ${expected} request rows were in`);

    const again = await startClickHouse(server, { profile: { max_insert_block_size: 2000 } });
    scratch.servers.push(again);
    const partial = await count('requests');
    assert.ok(partial < expected, `the restarted server holds part of the rows (${partial} of ${expected})`);
    store = await openClickHouseStore(spec, core, { log: logFile });
    await store.flushed(120_000);
    await store.close();
    const perKey = Number((await admin.query('SELECT count() FROM (SELECT run_id, phase, idx, count() AS c FROM requests GROUP BY run_id, phase, idx HAVING c > 1)')).trim());
    assert.equal(perKey, 0, 'no request row twice');
    assert.equal(await count('requests'), expected, 'every request row');
    assert.equal(Number((await admin.query('SELECT uniqExact(run_id) FROM runs')).trim()), items.length);
    assert.equal(await count('run_records'), items.length);
  });
});
