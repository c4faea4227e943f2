#!/usr/bin/env bash
# Installs what h3probe needs on a fresh Debian 12 machine (as root), and only what is missing; silent when nothing is.
set -euo pipefail

# With --pack (`npm run deps:pack`), only what `npm pack` needs: its prepack builds the WebAssembly module and web/dist/
# (Emscripten, CMake and the two header-only libraries the core compiles with; then npm ci for esbuild and terser).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pack_packages=(emscripten cmake nlohmann-json3-dev libfast-float-dev)
packages=("${pack_packages[@]}" caddy chromium firefox-esr doctest-dev g++ openssl python3-numpy iproute2
  clang libclang-rt-14-dev  # clang + its runtimes: libFuzzer, ASan, UBSan (web/scripts/fuzz.sh)
  webkit2gtk-driver xvfb    # WebKitGTK's WebDriver (with MiniBrowser) and the X display it draws into (web/launch/webkit.mjs)
  clickhouse-server clickhouse-client  # the ClickHouse store's tests and bench (web/launch/clickhouse.mjs)
  zookeeper  # what a replicated ClickHouse cluster coordinates through (web/launch/zookeeper.mjs; Java comes with it)
  pngquant)  # the report's screenshots in docs/ (web/scripts/report_screenshots.mjs)

[[ "${1:-}" == --pack ]] && packages=("${pack_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ensure_deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A stamp rather than node_modules' own mtime: `npm install` with nothing to change leaves the folder's mtime alone.
stamp="$root/node_modules/.h3probe-deps-stamp"
needs_npm=0
if [[ ! -f "$stamp" ]]; then
  needs_npm=1
else
  for f in "$root/package.json" "$root/package-lock.json"; do
    [[ -f "$f" && "$f" -nt "$stamp" ]] && needs_npm=1
  done
fi
if ((needs_npm)); then
  echo "ensure_deps: installing npm packages" >&2
  cd "$root"
  if [[ -f package-lock.json ]]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
  else
    npm install --no-audit --no-fund --loglevel=error >/dev/null
  fi
  touch "$stamp"
fi
[[ "${1:-}" == --pack ]] && exit 0

# The current ClickHouse engine for the tests' second lane (web/test/chdb/chdbServer.mjs): npm's chdb, in a folder of
# its own rather than in package.json (about 550 MB, and the mirror serves only this platform's build, so a lock file
# naming it would not pass npm ci).
chdb_version=3.4.0
chdb_dir="$root/.h3probe/chdb"
if [[ "$(node -p "try { require('$chdb_dir/node_modules/chdb/package.json').version } catch { '' }")" != "$chdb_version" ]]; then
  echo "ensure_deps: installing chdb $chdb_version into .h3probe/chdb" >&2
  mkdir -p "$chdb_dir"
  [[ -f "$chdb_dir/package.json" ]] || echo '{ "private": true }' > "$chdb_dir/package.json"
  npm install --prefix "$chdb_dir" --no-audit --no-fund --loglevel=error "chdb@$chdb_version" >/dev/null
fi
