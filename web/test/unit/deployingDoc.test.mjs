// docs/deploying.md against the code it describes: the origin rules (web/server/originRules.mjs) in its table and
// nginx snippets, and exactly the Chromium flags and Firefox prefs the tests launch the browsers with.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { NOOP, NOOP_HEADERS, ORIGIN_PROTOCOLS } from '../../server/originRules.mjs';
import { chromiumArgs } from '../../stack/stack.mjs';
import { firefoxPrefs } from '../../cli/firefox.mjs';

const DOC = fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), '../../../docs/deploying.md'), 'utf8');

/** The first fenced block after `<!-- marker -->`, as its lines. */
function block(marker) {
  const at = DOC.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `docs/deploying.md has a <!-- ${marker} --> block`);
  const m = /```[a-z]*\n([\s\S]*?)\n```/.exec(DOC.slice(at));
  return m[1].split('\n');
}

/** The table right after `<!-- marker -->`, as {first cell: [cells]}. */
function table(marker) {
  const at = DOC.indexOf(`<!-- ${marker} -->`);
  const rows = DOC.slice(at).split('\n').slice(1).filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith('|')));
  return Object.fromEntries(rows.slice(2).map((r) => r.split('|').slice(1, -1).map((c) => c.trim())).map((c) => [c[0], c.slice(1)]));
}

test('the rules table lists the /noop status and every header with its value for both origins', () => {
  const rows = table('rules-table');
  assert.deepEqual(rows.status.slice(0, 2), [`\`${NOOP.status}\``, `\`${NOOP.status}\``]);
  for (const h of NOOP_HEADERS) {
    const key = `\`${h.name}\`${h.required ? '' : ' (optional)'}`;
    assert.ok(rows[key], `row for ${h.name}`);
    if (h.value.includes('<')) {
      assert.deepEqual(rows[key].slice(0, 2), ['`proto;desc="HTTP/2.0"`', '`proto;desc="HTTP/3.0"`']);
    } else {
      assert.deepEqual(rows[key].slice(0, 2), [`\`${h.value}\``, `\`${h.value}\``], h.name);
    }
  }
  assert.match(rows.protocols[0], /HTTP\/2 \(TCP only\)/);
  assert.equal(ORIGIN_PROTOCOLS.h2.includes('h3'), false);
});

test('both nginx servers send every /noop header with `always`; only the HTTP/3 one listens on QUIC and sends Alt-Svc', () => {
  for (const [marker, kind] of [['nginx-h2', 'h2'], ['nginx-h3', 'h3']]) {
    const text = block(marker).join('\n');
    const noop = text.slice(text.indexOf(`location = ${NOOP.path} {`)).split('}')[0];
    for (const h of NOOP_HEADERS) assert.ok(noop.includes(`add_header ${h.name} '${h.nginx}' always;`), `${marker}: ${h.name}`);
    assert.match(noop, new RegExp(`return ${NOOP.status};`));
    assert.match(text, /location \/ \{[^}]*return 404;/);
    if (kind === 'h2') {
      assert.doesNotMatch(text, /quic|http3|Alt-Svc/);
    } else {
      assert.match(text, /listen \S+:443 quic reuseport;/);
      assert.match(noop, /add_header Alt-Svc 'h3=":443"; ma=\d+' always;/);
    }
  }
});

test('the Chromium flags are exactly what chromiumArgs launches with', () => {
  assert.deepEqual(block('chromium-flags'), chromiumArgs({ spki: 'SPKI_SHA256_BASE64', h3Port: 'H3PORT' }));
});

test('the Firefox prefs are exactly what firefoxPrefs sets', () => {
  const prefs = firefoxPrefs({ hosts: { h3: 'h3.h3probe.test' }, ports: { h3: 'H3PORT' } });
  assert.deepEqual(block('firefox-prefs'), Object.entries(prefs).map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});`));
});
