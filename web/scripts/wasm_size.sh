#!/usr/bin/env bash
# Builds the browser module once more with its function names kept (build/wasm-names, link flag --profiling-funcs:
# same code, plus a name section) and prints what it is made of by library (web/scripts/wasm_size_table.mjs), then
# the shipped files' sizes from build/wasm. Extra arguments go to the table script (--top N, --markdown).
set -euo pipefail
cd "$(dirname "$0")/../.."
emcmake cmake -S . -B build/wasm-names -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXE_LINKER_FLAGS=--profiling-funcs > /dev/null
cmake --build build/wasm-names -j2 --target h3probe_browser > /dev/null
node web/scripts/wasm_size_table.mjs build/wasm-names/h3probe_browser.wasm "$@"
echo
for f in build/wasm/h3probe_browser.wasm build/wasm/h3probe_browser.mjs; do
  [ -f "$f" ] && echo "$f: $(wc -c < "$f") B raw, $(gzip -9c "$f" | wc -c) B gzip -9"
done
