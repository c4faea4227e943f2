// docs/troubleshooting.md against what it describes: a section for each load_error reason of the core's list and no
// other (the same list web/cli/loadErrorFixes.mjs keys the doctor's fixes by), and one for each of the doctor's checks,
// named as its table (CHECKS in web/cli/doctor.mjs) names them, in its order. Its recipe is run in
// web/test/e2e/troubleshootingRecipe.test.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CHECKS } from '../../cli/doctor.mjs';
import { LOAD_ERROR_FIXES } from '../../cli/loadErrorFixes.mjs';
import { repoRoot } from '../../stack/paths.mjs';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';

const DOC = fs.readFileSync(path.join(repoRoot, 'docs/troubleshooting.md'), 'utf8');

/** The ### headings under the ## heading `title`, in order. */
function subheadings(title) {
  const at = DOC.indexOf(`\n## ${title}\n`);
  assert.ok(at >= 0, `docs/troubleshooting.md has "## ${title}"`);
  const section = DOC.slice(at + 1).split(/\n## /)[0];
  return [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
}

test('a section for each load_error reason of the core, in its order, each with a fix', async () => {
  const core = await loadH3probeNode();
  const reasons = core.schema().loadErrorReasons.map((r) => r.name);
  assert.deepEqual(subheadings('Load errors'), reasons.map((r) => `\`${r}\``));
  assert.deepEqual(Object.keys(LOAD_ERROR_FIXES), reasons, 'the doctor\'s fixes, in the same order');
  for (const reason of reasons) {
    const section = DOC.split(`### \`${reason}\`\n`)[1].split('\n### ')[0];
    assert.match(section, /\*\*Fix\*\*: /, reason);
  }
});

test('a section for each of the doctor\'s checks, in the order they run', () => {
  assert.deepEqual(subheadings('When a doctor check fails'), CHECKS.map(([name]) => name));
});

test('README and deploying.md link the page', () => {
  for (const doc of ['README.md', 'docs/deploying.md']) {
    assert.match(fs.readFileSync(path.join(repoRoot, doc), 'utf8'), /\]\((docs\/)?troubleshooting\.md\)/, doc);
  }
});
