// The cross-store promise as assertions: a report made from ClickHouse is the one made from SQLite, but for the time it
// was made. Shared by the tests that feed both stores the same beacons (clickhouseReport, reportAnyStore).
import assert from 'node:assert/strict';

// A JSON report with the keys in skip (at any depth) taken out, as text: every number in its shortest round-trip form,
// so two texts are equal when every number is the same bits.
function jsonWithout(json, skip) {
  const strip = (v) => (Array.isArray(v) ? v.map(strip) : v && typeof v === 'object'
    ? Object.fromEntries(Object.entries(v).filter(([k]) => !skip.includes(k)).map(([k, x]) => [k, strip(x)])) : v);
  return JSON.stringify(strip(json), null, 1).split('\n');
}

/**
 * sqlite, clickhouse: each {text, html, json} of one report (html, json: null when not written). The text and the HTML
 * line for line (the HTML's generation time aside), the JSON byte for byte (generatedAt and skip aside): both stores
 * hand the core the same aggregates, exact sums included, so every figure is the same bits.
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
  if (sqlite.json !== null) {
    const [ja, jb] = [sqlite.json, clickhouse.json].map((j) => jsonWithout(j, skip));
    for (let i = 0; i < Math.max(ja.length, jb.length); i++) assert.equal(jb[i], ja[i], `${where}JSON line ${i + 1}`);
  }
}
