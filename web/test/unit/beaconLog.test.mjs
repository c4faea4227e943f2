// The collector's durable log (web/server/beaconLog.mjs): lines come back in order, in batches that never cross a
// segment, only once sealed; what was shipped is not taken again after reopening; a segment wholly shipped is deleted;
// a torn last line (a crash in the middle of a write) is cut off when the log is opened.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openBeaconLog } from '../../server/beaconLog.mjs';

const lines = (batch) => batch.bytes.toString('utf8').slice(0, -1).split('\n');
const tmpBase = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-log-')), 'beacons');

test('appended lines come back in order once sealed, in batches of at most maxLines; shipped ones never again', async () => {
  const base = tmpBase();
  const log = openBeaconLog(base);
  await Promise.all(['a', 'b', 'c'].map((l) => log.append(l)));
  assert.equal(log.take(10, 1 << 20), null, 'nothing is taken before the segment is sealed');
  log.seal();
  await Promise.all(['d', 'e'].map((l) => log.append(l)));
  const first = log.take(2, 1 << 20);
  assert.deepEqual(lines(first), ['a', 'b']);
  log.shipped(first);
  const second = log.take(2, 1 << 20);
  assert.deepEqual(lines(second), ['c'], 'a batch ends at its segment');
  assert.ok(log.backlog().bytes > 0);
  log.close();

  // Reopened: 'c' was taken but not shipped, so it comes again; then the segment appended to before closing.
  const again = openBeaconLog(base);
  again.seal();
  const third = again.take(10, 1 << 20);
  assert.deepEqual(lines(third), ['c']);
  again.shipped(third);
  const fourth = again.take(10, 1 << 20);
  assert.deepEqual(lines(fourth), ['d', 'e']);
  again.shipped(fourth);
  assert.equal(again.take(10, 1 << 20), null);
  assert.deepEqual(again.backlog(), { bytes: 0, segments: 1 }, 'shipped segments are deleted; the current one stays');
  again.close();
});

test('a torn last line, left by a crash before its fsync, is cut off when the log is opened', async () => {
  const base = tmpBase();
  const log = openBeaconLog(base);
  await log.append('whole');
  log.close();
  const [segment] = fs.readdirSync(path.dirname(base)).filter((f) => f.endsWith('.log'));
  fs.appendFileSync(path.join(path.dirname(base), segment), 'torn, no newli');
  const reopened = openBeaconLog(base);
  await reopened.append('next');
  reopened.seal();
  assert.deepEqual(lines(reopened.take(10, 1 << 20)), ['whole', 'next']);
  reopened.close();
});
