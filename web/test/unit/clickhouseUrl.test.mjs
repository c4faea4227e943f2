// The ClickHouse store's URL (web/server/clickhouseStore.mjs) without a server: user, password (never enumerable,
// redacted in text), TLS and its CA, and docs/clickhouse.md's table of its parameters. Pure logic: neither the
// WebAssembly build nor a server. (A TLS-only server with passwords: clickhouseSecure.test.mjs.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parseClickHouseUrl, PASSWORD_ENV, redactStoreUrl, URL_PARAMS } from '../../server/clickhouseConnection.mjs';
import { repoRoot } from '../../stack/paths.mjs';

// clickhouseSecure.test.mjs's passwords, with the characters a URL must encode; each must never appear in any output.
const WRITER_PASSWORD = 'wr1te:r/p@ss wörd?';
const ANALYST_PASSWORD = 'an4lyst#secret&';
const noPassword = (text, where) => {
  for (const p of [WRITER_PASSWORD, ANALYST_PASSWORD, encodeURIComponent(WRITER_PASSWORD), encodeURIComponent(ANALYST_PASSWORD)]) {
    assert.ok(!text.includes(p), `${where} shows a password`);
  }
};

test('the URL: user, URL-encoded password, TLS on 8443 by default; the password never enumerable, redacted in text', () => {
  const t = parseClickHouseUrl(`clickhouse://writer:${encodeURIComponent(WRITER_PASSWORD)}@ch.example.com/db?secure=1`);
  assert.equal(t.url, 'https://ch.example.com:8443');
  assert.equal(t.user, 'writer');
  assert.equal(t.password, WRITER_PASSWORD);
  noPassword(JSON.stringify(t), 'the parsed target as JSON');
  assert.equal(parseClickHouseUrl('clickhouse://writer@h/db', { [PASSWORD_ENV]: 'from-env' }).password, 'from-env');
  assert.equal(parseClickHouseUrl('clickhouse://h/db').url, 'http://h:8123');
  assert.equal(redactStoreUrl(`clickhouse://writer:${encodeURIComponent(WRITER_PASSWORD)}@h:8443/db?secure=1`), 'clickhouse://writer:***@h:8443/db?secure=1');
  assert.throws(() => parseClickHouseUrl('clickhouse://h/db?ca=/etc/ca.pem'), /add secure=1/);
  assert.throws(() => parseClickHouseUrl('clickhouse://w:x@h/db?password_file=/f'), /give one/);
  assert.throws(() => parseClickHouseUrl('clickhouse://h/db?user=w'), /unknown ClickHouse URL parameter "user"/);
  assert.throws(() => parseClickHouseUrl('clickhouse://w@h/db?secure=1&ca=/nonexistent.pem'), /ca \/nonexistent\.pem: ENOENT/);
});

describe('docs/clickhouse.md', () => {
  test('its table of URL parameters is URL_PARAMS, each parameter once', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/clickhouse.md'), 'utf8');
    const table = doc.slice(doc.indexOf('<!-- url-params -->'), doc.indexOf('<!-- /url-params -->'));
    const rows = table.split('\n').filter((l) => /^\| `/.test(l)).map((l) => l.split('|').map((c) => c.trim()));
    assert.deepEqual(rows.map((r) => r[1].replaceAll('`', '')), Object.keys(URL_PARAMS));
    for (const [, name, meaning] of rows) assert.equal(meaning.replaceAll('`', ''), URL_PARAMS[name.replaceAll('`', '')], name);
  });
});
