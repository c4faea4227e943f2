// The collector's durable local log: what a beacon's 204 waits for when the store is ClickHouse. Each accepted beacon is
// one line appended to the current segment file; the lines of one event-loop turn are written together and made durable
// with one fdatasync (group commit). A shipper takes the log in order, segment by segment, in large batches, and after
// each batch is in the store records how far it got (a small state file, replaced atomically); a segment wholly shipped
// is deleted. Segments are sealed (a new one started) each time the shipper takes the log, so the shipper reads only
// files nothing writes to any more.
//
// A line is `ID\tTEXT\tTEXT...\n`: the beacon's run_id, then the rows already serialized by the store (JSON, which
// never holds a raw tab or newline), so that shipping is concatenation, not parsing. A line without its newline at the
// end of the newest segment is a write that a crash cut short: it was never acknowledged, and is cut off when opened.
import fs from 'node:fs';
import path from 'node:path';

const SEGMENT = /^(.*)\.(\d{8})\.log$/;

/**
 * Opens (creating) the log whose files are named after base: BASE.NNNNNNNN.log segments and BASE.shipped (how far the
 * shipper got: {segment, offset}). Returns { append(line) → Promise, seal(), sealIfCaughtUp(), take(maxLines, maxBytes) → batch | null,
 * shipped(batch), backlog() → {bytes, segments}, remaining() → {beacons, files}, failed(), close() }.
 */
export function openBeaconLog(base) {
  const files = logFiles(base);
  let state = readState(files.stateFile);
  // Segments before the shipped one are gone already (or were deleted between the state write and their unlink).
  for (const n of files.segments()) if (n < state.segment) fs.rmSync(files.segmentPath(n), { force: true });
  const existing = files.segments();
  const writer = segmentWriter(files, existing.length > 0 ? existing.at(-1) : Math.max(1, state.segment));
  let failed = null;
  // A log that cannot be written acknowledges nothing more (a partial write stays unacknowledged at its tail).
  const group = groupCommit((lines) => {
    try {
      if (failed) throw failed;
      writer.write(lines);
    } catch (err) {
      failed ??= err;
      throw err;
    }
  });
  // The segments not wholly shipped: their files, and the bytes from where the shipper got to their end.
  const unshipped = () => files.segments().map((n) => ({ file: files.segmentPath(n), from: n === state.segment ? state.offset : 0,
    end: n === writer.number() ? writer.written() : fs.statSync(files.segmentPath(n)).size }));

  return {
    /** One line per beacon (without its newline); resolves once every line is on disk (fdatasync). */
    append: (line) => group.add(`${line}\n`),
    /**
     * The next batch of sealed lines in order: at most maxLines lines and about maxBytes, never across a segment's end;
     * {segment, offset, end, last, count (lines), bytes (the lines, each with its newline)}. null when every sealed
     * line is shipped.
     */
    take: (maxLines, maxBytes) => takeBatch(files, state, writer.number(), maxLines, maxBytes),
    /** Seals the current segment (when it holds anything): its lines can be taken. Returns the new segment's number. */
    seal: () => writer.seal(),
    /**
     * Seals the current segment only when every sealed line is shipped: while the store is behind (an outage), the
     * current segment keeps growing, so that it is later taken in a few large batches, not in many small ones.
     */
    sealIfCaughtUp() {
      if (!files.segments().some((n) => n < writer.number())) writer.seal();
    },
    /** Appends lines at once, synchronously (lines carried over when opening, before any append). */
    appendNow(lines) {
      if (lines.length > 0) writer.write(lines.map((l) => `${l}\n`));
    },
    /** Records that a batch from take() is in the store (durably: the state file is replaced and synced). */
    shipped(batch) {
      state = batch.last ? { segment: batch.segment + 1, offset: 0 } : { segment: batch.segment, offset: batch.end };
      writeState(files.stateFile, state);
      if (batch.last) fs.rmSync(files.segmentPath(batch.segment), { force: true });
      files.syncDir();
    },
    /** Bytes and segments not yet shipped. */
    backlog() {
      const list = unshipped();
      return { bytes: list.reduce((sum, s) => sum + s.end - s.from, 0), segments: list.length };
    },
    /**
     * The beacons not yet shipped (lines, counted by reading the segments: for a closing store's last word, not for every
     * request) and the segment files that hold them.
     */
    remaining() {
      const left = unshipped().filter((s) => s.from < s.end);
      return { beacons: left.reduce((sum, s) => sum + countLines(s.file, s.from, s.end), 0), files: left.map((s) => s.file) };
    },
    /** The error that stopped appends, or null. */
    failed: () => failed,
    close() {
      group.flush();
      writer.close();
    },
  };
}

// The log's files: its directory (made when missing), the state file, and the segments' numbers and paths.
function logFiles(base) {
  const dir = path.dirname(path.resolve(base));
  const name = path.basename(base);
  fs.mkdirSync(dir, { recursive: true });
  return {
    stateFile: path.join(dir, `${name}.shipped`),
    segments: () => fs.readdirSync(dir).map((f) => f.match(SEGMENT)).filter((m) => m && m[1] === name)
      .map((m) => Number(m[2])).sort((a, b) => a - b),
    segmentPath: (n) => path.join(dir, `${name}.${String(n).padStart(8, '0')}.log`),
    syncDir: () => {
      const fd = fs.openSync(dir, 'r');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
    },
  };
}

// The segment appends go to, from number n (a torn last line cut off first): sealed, the next one takes its place.
function segmentWriter(files, n) {
  let fd = fs.openSync(files.segmentPath(n), 'a+');
  cutTornLine(fd);
  files.syncDir();
  let written = fs.fstatSync(fd).size;
  return {
    number: () => n,
    written: () => written,
    /** The lines (each with its newline) on disk: one write, one fdatasync. */
    write(lines) {
      const buf = Buffer.from(lines.join(''), 'utf8');
      fs.writeSync(fd, buf);
      fs.fdatasyncSync(fd);
      written += buf.length;
    },
    /**
     * Starts a new segment when the current one holds anything, so the shipper reads only sealed files. Returns the
     * current segment's number: every line appended from now on is in it or a later one.
     */
    seal() {
      if (written > 0) {
        fs.closeSync(fd);
        n += 1;
        fd = fs.openSync(files.segmentPath(n), 'a+');
        written = 0;
        files.syncDir();
      }
      return n;
    },
    close: () => fs.closeSync(fd),
  };
}

// How far the shipper got: {segment, offset}; the start when nothing was shipped yet.
function readState(stateFile) {
  try {
    return JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    return { segment: 0, offset: 0 };
  }
}

// The state file replaced atomically (written, synced, renamed over the old one).
function writeState(stateFile, state) {
  const tmp = `${stateFile}.tmp`;
  const sfd = fs.openSync(tmp, 'w');
  fs.writeSync(sfd, JSON.stringify(state));
  fs.fsyncSync(sfd);
  fs.closeSync(sfd);
  fs.renameSync(tmp, stateFile);
}

// A torn last line (cut by a crash before its fsync, so never acknowledged) is removed so that appends start clean.
function cutTornLine(fd) {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, 1 << 20));
  fs.readSync(fd, tail, 0, tail.length, size - tail.length);
  const keep = size - tail.length + tail.lastIndexOf(0x0a) + 1;
  if (keep < size) {
    fs.ftruncateSync(fd, Math.max(0, keep));
    fs.fsyncSync(fd);
  }
}

// Group commit: the lines added in one event-loop turn are written together by writeAll(lines), once; each add()'s
// promise settles with that write.
function groupCommit(writeAll) {
  let pending = [];
  function commit() {
    const items = pending;
    pending = [];
    try {
      writeAll(items.map((i) => i.line));
    } catch (err) {
      for (const i of items) i.reject(err);
      return;
    }
    for (const i of items) i.resolve();
  }
  return {
    add: (line) => new Promise((resolve, reject) => {
      if (pending.length === 0) setImmediate(commit);
      pending.push({ line, resolve, reject });
    }),
    flush() {
      if (pending.length > 0) commit();
    },
  };
}

// take(): the first sealed segment (before current) with lines not shipped; one wholly shipped is deleted on the way.
function takeBatch(files, state, current, maxLines, maxBytes) {
  for (;;) {
    const sealed = files.segments().filter((n) => n < current);
    if (sealed.length === 0) return null;
    const n = sealed[0];
    const offset = n === state.segment ? state.offset : 0;
    const file = files.segmentPath(n);
    const total = fs.statSync(file).size;
    if (offset >= total) {
      fs.rmSync(file);
      continue;
    }
    const buf = readAt(file, offset, Math.min(total - offset, maxBytes));
    let end = 0;
    let lines = 0;
    while (lines < maxLines) {
      const nl = buf.indexOf(0x0a, end);
      if (nl < 0) break;
      end = nl + 1;
      lines++;
    }
    if (lines === 0) throw new Error(`beacon log ${file}: a line longer than ${maxBytes} bytes at offset ${offset}`);
    return { segment: n, offset, end: offset + end, last: offset + end >= total, count: lines, bytes: buf.subarray(0, end) };
  }
}

function readAt(file, offset, length) {
  const buf = Buffer.alloc(length);
  const rfd = fs.openSync(file, 'r');
  fs.readSync(rfd, buf, 0, length, offset);
  fs.closeSync(rfd);
  return buf;
}

// The lines (newlines) of file from byte at to byte end, read a megabyte at a time.
function countLines(file, at, end) {
  const chunk = Buffer.alloc(1 << 20);
  let lines = 0;
  const rfd = fs.openSync(file, 'r');
  try {
    while (at < end) {
      const got = fs.readSync(rfd, chunk, 0, Math.min(chunk.length, end - at), at);
      if (got === 0) break;
      for (let i = chunk.indexOf(0x0a); i >= 0 && i < got; i = chunk.indexOf(0x0a, i + 1)) lines++;
      at += got;
    }
  } finally {
    fs.closeSync(rfd);
  }
  return lines;
}
