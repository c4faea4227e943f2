// A node --test reporter that npm test (web/scripts/test.mjs) adds beside TAP: one JSON line per test file, in the order
// the files ran, {file, seconds, tests}. With --test-concurrency=1 the files run one after another, so a file's seconds
// run from the previous file's last event to its own last: its process start, imports and hooks included.
export default async function* fileTimes(source) {
  const files = new Map();
  let last = performance.now();
  for await (const { type, data } of source) {
    if (!data?.file || !['test:pass', 'test:fail'].includes(type)) continue;
    const now = performance.now();
    const entry = files.get(data.file) ?? { file: data.file, seconds: 0, tests: 0 };
    entry.seconds += (now - last) / 1000;
    if (data.details?.type !== 'suite') entry.tests += 1;
    files.set(data.file, entry);
    last = now;
  }
  for (const entry of files.values()) yield `${JSON.stringify(entry)}\n`;
}
