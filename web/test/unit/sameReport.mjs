// The cross-store promise as assertions: a report made from ClickHouse is the one made from SQLite, but for the time it
// was made. Shared by the tests that feed both stores the same beacons (clickhouseReport, reportAnyStore).
import assert from 'node:assert/strict';

/** Every number of a against b within rel relative (1e-300 absolute near 0); everything else equal; keys in skip not compared. */
export function assertClose(a, b, where = '$', rel = 1e-6, skip = ['generatedAt']) {
  if (typeof a === 'number' && typeof b === 'number') {
    const ok = a === b || Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-300);
    assert.ok(ok, `${where}: ${a} vs ${b}`);
    return;
  }
  if (a && b && typeof a === 'object') {
    assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${where}: keys`);
    for (const k of Object.keys(a)) if (!skip.includes(k)) assertClose(a[k], b[k], `${where}.${k}`, rel, skip);
    return;
  }
  assert.equal(a, b, where);
}

/**
 * sqlite, clickhouse: each {text, html, json} of one report (html, json: null when not written). The text and the HTML
 * line for line (the HTML's generation time aside), the JSON within 1e-6 relative (generatedAt and skip aside).
 */
export function assertSameReport({ sqlite, clickhouse }, skip = ['generatedAt'], where = '') {
  const a = sqlite.text.split('\n');
  const b = clickhouse.text.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) assert.equal(b[i], a[i], `${where}text line ${i + 1}:\n${b[i]}\n${a[i]}`);
  // The footer's generation time is the one line that may differ.
  const stamp = (html) => html.replace(/Generated \d{4}-\d\d-\d\dT[\d:.]+Z/, 'Generated (time)').split('\n');
  assert.equal(clickhouse.html === null, sqlite.html === null, `${where}HTML written by both or neither`);
  if (sqlite.html !== null) {
    const ha = stamp(sqlite.html);
    const hb = stamp(clickhouse.html);
    for (let i = 0; i < Math.max(ha.length, hb.length); i++) assert.equal(hb[i], ha[i], `${where}HTML line ${i + 1}`);
  }
  assert.equal(clickhouse.json === null, sqlite.json === null, `${where}JSON written by both or neither`);
  if (sqlite.json !== null) assertClose(clickhouse.json, sqlite.json, `${where}$`, 1e-6, skip);
}
