// The live report's limits (web/server/collectorReport.mjs) as docs/collector.md states them. Pure logic: neither the
// WebAssembly build nor a server. (The live report itself: collectorReport.test.mjs.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { MIN_TOKEN_CHARS, REPORT_CACHE_ENTRIES, REPORT_COMPUTING, REPORT_COOKIE_MAX_AGE } from '../../server/collectorReport.mjs';
import { repoRoot } from '../../stack/paths.mjs';

describe('h3probe collector --report-token-file', () => {
  test('docs/collector.md states the limits the code has', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/collector.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## The live report'), doc.indexOf('## Rate limit'));
    for (const said of [`at least ${MIN_TOKEN_CHARS} printable ASCII characters`, `${REPORT_COOKIE_MAX_AGE / 86400} days`,
      `Up to ${REPORT_CACHE_ENTRIES} queries are kept, ${REPORT_COMPUTING} made at once`]) assert.ok(section.includes(said), said);
  });
});
