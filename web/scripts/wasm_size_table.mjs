// What a WASM module is made of: code bytes per function, grouped by library, from a build that kept its function
// names (link with --profiling-funcs; the names live in the "name" custom section, which the release build drops).
//   node web/scripts/wasm_size_table.mjs build/wasm-names/h3probe_browser.wasm [--top N] [--markdown]
// Raw bytes are each function's body in the code section; gzip is `gzip -9` of a group's bodies concatenated, so the
// groups' gzip figures do not add up to the module's (gzip finds repeats across groups too). The data section (string
// literals, tables) and the rest (imports, exports, types, element table) are listed as their own rows.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
if (!file) {
  console.error('usage: wasm_size_table.mjs <module.wasm> [--top N] [--markdown]');
  process.exit(2);
}
const top = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 0;
const markdown = args.includes('--markdown');
const bytes = fs.readFileSync(file);
const gz = (buf) => zlib.gzipSync(buf, { level: 9 }).length;

// --- a minimal reader of the binary format -------------------------------------------------------------------------
let pos = 8;
const u32 = () => {
  let result = 0, shift = 0, b;
  do { b = bytes[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return result;
};
const name = () => { const n = u32(); const s = bytes.toString('utf8', pos, pos + n); pos += n; return s; };

const sections = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = u32();
  const start = pos;
  sections.push({ id, start, end: start + size, headerStart: start - 1 - lebLength(size) });
  pos = start + size;
}
function lebLength(v) { let n = 1; while (v >= 128) { v = Math.floor(v / 128); n++; } return n; }

let importedFuncs = 0;
const bodies = [];  // { index, start, end }
const names = new Map();
let dataBytes = null;
const other = [];
for (const s of sections) {
  pos = s.start;
  if (s.id === 2) {  // imports: function imports take the first function indices
    for (let i = 0, n = u32(); i < n; i++) {
      name(); name();
      const kind = bytes[pos++];
      if (kind === 0) { u32(); importedFuncs++; }
      else if (kind === 1) { pos++; const f = u32(); u32(); if (f & 1) u32(); }
      else if (kind === 2) { const f = u32(); u32(); if (f & 1) u32(); }
      else if (kind === 3) { pos += 2; }
      else if (kind === 4) { pos++; u32(); }
    }
  }
  if (s.id === 10) {
    for (let i = 0, n = u32(); i < n; i++) {
      const size = u32();
      bodies.push({ index: importedFuncs + i, start: pos, end: pos + size });
      pos += size;
    }
    continue;
  }
  if (s.id === 11) { dataBytes = bytes.subarray(s.start, s.end); continue; }
  if (s.id === 0) {
    const section = name();
    if (section === 'name') {
      while (pos < s.end) {
        const sub = bytes[pos++], size = u32(), end = pos + size;
        if (sub === 1) for (let i = 0, n = u32(); i < n; i++) { const idx = u32(); names.set(idx, name()); }
        pos = end;
      }
    }
    continue;  // custom sections are not shipped in the release build
  }
  other.push(bytes.subarray(s.headerStart, s.end));
}

// --- grouping ------------------------------------------------------------------------------------------------------
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Which project source file defines a function (the browser module's files: not node_bindings.cpp).
const sources = ['wasm/core', 'wasm/bindings'].flatMap((dir) =>
  fs.readdirSync(path.join(repoRoot, dir)).filter((f) => f.endsWith('.cpp') && f !== 'node_bindings.cpp')
    .map((f) => ({ file: `${dir}/${f}`, text: fs.readFileSync(path.join(repoRoot, dir, f), 'utf8') })));
function projectFile(fn) {
  const m = fn.match(/^(?:[\w:]*?)((?:\w+::)?)(~?\w+)\(/);
  if (!m) return null;
  const [, cls, member] = m;
  const className = cls.slice(0, -2);
  // A member defined out of line ("Class::name("), a class defined in the file, then a definition at column 0.
  const hit = (cls && sources.find((s) => s.text.includes(`${cls}${member}(`))) ??
    (className && sources.find((s) => new RegExp(`^\\s*(class|struct) ${className}\\b`, 'm').test(s.text))) ??
    sources.find((s) => new RegExp(`^[\\w:<>,&* ]*\\b${member}\\([^;]*$`, 'm').test(s.text)) ??
    sources.find((s) => new RegExp(`\\b${member}\\(`).test(s.text));
  return hit?.file ?? null;
}

// First match wins. Template instances are named after what they serve: a std::map of nlohmann values is JSON's.
function group(raw) {
  const fn = raw.replace(/\\([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))
    .replace(/std::__2::/g, 'std::').replace(/\(anonymous namespace\)::/g, '');
  if (/nlohmann::/.test(fn)) return 'nlohmann/json';
  if (/^(void |bool |int |unsigned |double |long )?emscripten::|_embind_|embind|EmscriptenBindingInitializer|^emscripten_/.test(fn)) return 'embind';
  if (/std::(__function::|function<)/.test(fn)) return 'libc++ std::function';
  if (/std::(__tree|map<|set<|__value_type)/.test(fn)) return 'libc++ map/set';
  if (/^h3probe::|^(void |bool |int |unsigned |double )?h3probe::/.test(fn)) {
    const f = projectFile(fn.replace(/^(void |bool |int |unsigned |double )/, '').replace(/<.*?>(?=::|\()/g, ''));
    return f ? `project ${f}` : 'project (other)';
  }
  if (/std::(basic_ostream|basic_istream|basic_ios|ios_base|basic_streambuf|basic_stringbuf|locale|ctype|num_put|num_get|numpunct|codecvt|__num_|use_facet|basic_[io]?stringstream)/.test(fn)) return 'libc++ iostream/locale';
  if (/std::(basic_string|to_string|__to_chars|to_chars|sto[ilfd]|char_traits)/.test(fn)) return 'libc++ string/to_string';
  if (/std::(vector|__vector|__split_buffer)/.test(fn)) return 'libc++ vector';
  if (/std::(__sort|__insertion_sort|__nth_element|nth_element|sort|__partial|__floyd|__pop_heap|__sift)/.test(fn)) return 'libc++ algorithms (sort)';
  if (/^std::|^(void |bool |int |unsigned |double )std::/.test(fn)) return 'libc++ other';
  if (/__cxxabiv1|__cxa_|__dynamic_cast|type_info|^operator (new|delete)|abort_message|__gxx/.test(fn)) return 'libc++abi (RTTI, new/delete)';
  if (/^(malloc|free|calloc|realloc|emmalloc|dlmalloc|sbrk|claim_more_memory|attempt_allocate|compute_free_list_bucket|prepend_to_free_list|unlink_from_free_list|create_memory_region|link_to_free_list|emscripten_builtin|memalign|aligned_alloc|posix_memalign)/.test(fn)) return 'libc malloc (emmalloc)';
  if (/printf|fmt_fp|pop_arg|__stdio|__towrite|fwrite|out$|pad$|fmt_[ouxi]|getint|wctomb|wcrtomb|frexp|__fwritex|sn_write|__lockfile|__unlockfile|fputs|__ofl|__stdout|__overflow/.test(fn)) return 'libc printf/stdio';
  if (/^(mem|str|__mem|__str)/.test(fn)) return 'libc string (memcpy, strlen, ...)';
  return 'other (libc, runtime glue)';
}

const groups = new Map();
const functions = [];
for (const b of bodies) {
  const fn = names.get(b.index) ?? `func${b.index}`;
  const g = group(fn);
  const body = bytes.subarray(b.start, b.end);
  functions.push({ fn, g, size: body.length });
  if (!groups.has(g)) groups.set(g, { raw: 0, parts: [], count: 0 });
  const e = groups.get(g);
  e.raw += body.length;
  e.parts.push(body);
  e.count++;
}
const rows = [...groups].map(([g, e]) => ({ g, count: e.count, raw: e.raw, gzip: gz(Buffer.concat(e.parts)) }))
  .sort((a, b) => b.raw - a.raw);
if (dataBytes) rows.push({ g: 'data section (strings, tables)', count: '', raw: dataBytes.length, gzip: gz(dataBytes) });
const rest = Buffer.concat(other.filter((o) => o[0] !== 10 && o[0] !== 11));
rows.push({ g: 'imports, exports, types, table, headers', count: '', raw: rest.length, gzip: gz(rest) });

const withoutNames = Buffer.concat([bytes.subarray(0, 8), ...sections.filter((s) => s.id !== 0)
  .map((s) => bytes.subarray(s.headerStart, s.end))]);
const total = { raw: withoutNames.length, gzip: gz(withoutNames) };

const kb = (n) => n.toLocaleString('en-US');
if (markdown) {
  console.log('| group | functions | raw B | gzip B (group alone) |');
  console.log('|---|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.g} | ${r.count} | ${kb(r.raw)} | ${kb(r.gzip)} |`);
  console.log(`| **module without name section** | ${bodies.length} | **${kb(total.raw)}** | **${kb(total.gzip)}** |`);
} else {
  const w = Math.max(...rows.map((r) => r.g.length), 30);
  console.log(`${'group'.padEnd(w)}  funcs    raw B   gzip B`);
  for (const r of rows) console.log(`${r.g.padEnd(w)}  ${String(r.count).padStart(5)}  ${kb(r.raw).padStart(7)}  ${kb(r.gzip).padStart(7)}`);
  console.log(`${'module without name section'.padEnd(w)}  ${String(bodies.length).padStart(5)}  ${kb(total.raw).padStart(7)}  ${kb(total.gzip).padStart(7)}`);
}
if (top) {
  console.log(`\nlargest ${top} functions:`);
  for (const f of functions.sort((a, b) => b.size - a.size).slice(0, top)) {
    const shown = f.fn.replace(/\\([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))).replace(/std::__2::/g, 'std::');
    console.log(`${String(f.size).padStart(6)}  ${f.g.padEnd(32)}  ${shown.length > 110 ? `${shown.slice(0, 107)}...` : shown}`);
  }
}
