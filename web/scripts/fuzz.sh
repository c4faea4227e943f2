#!/usr/bin/env bash
# Builds the libFuzzer targets (host_tests/fuzz/) and the host tests with clang, ASan and UBSan (one build folder), and
# runs each target for a bounded time.
#   bash web/scripts/fuzz.sh [--host-tests] [seconds per target, default 60] [target ...]   (targets: beacon config)
# --host-tests first runs the doctest host test cases in the sanitizer build and prints
# "sanitized host tests: N passed, M failed" (a sanitizer report fails the run): every case but the statistical
# simulations (test suite "simulation": thousands of simulated experiments through the same core functions, minutes
# under ASan), which the host suite runs unsanitized; the calibration suite's slice runs here and takes the core's
# inference through random data of every family.
# Each run starts from the committed seeds (host_tests/fuzz/corpus/<target>/) and the inputs grown by earlier runs
# (build/fuzz/corpus/<target>/, where new ones are written); a crash is saved under build/fuzz/artifacts/<target>/.
# Prints per target: executions, exec/s, coverage, corpus size and any crash; the last line counts targets as tests
# ("fuzz: N passed, M failed") for web/scripts/test.mjs. Exits nonzero if any target crashed or broke an invariant.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

host_tests=0
if [[ "${1:-}" == --host-tests ]]; then host_tests=1; shift; fi
seconds="${1:-60}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: seconds must be a positive integer, got '$seconds'" >&2; exit 2; }
shift || true
targets=("$@")
((${#targets[@]})) || targets=(beacon config)

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }

out="$root/build/fuzz"
build="$out/cmake"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH3PROBE_FUZZ=ON >/dev/null
cmake --build "$build" -j2 >/dev/null

if ((host_tests)); then
  log="$out/host_tests.log"
  status=0
  # halt_on_error: the first ASan report ends the run with a nonzero status; UBSan is already fatal
  # (-fno-sanitize-recover=all). detect_leaks stays on.
  ASAN_OPTIONS=halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$build/h3probe_host_tests" --test-suite-exclude=simulation \
    >"$log" 2>&1 || status=$?
  summary=$(grep -E '^\[doctest\] test cases:' "$log" | tail -1)
  hpassed=$(sed -n 's/.*| *\([0-9]*\) passed.*/\1/p' <<<"$summary")
  hfailed=$(sed -n 's/.*| *\([0-9]*\) failed.*/\1/p' <<<"$summary")
  if ((status != 0)); then
    echo "sanitized host tests: FAILED (exit $status); the report:"
    grep -E 'ERROR|SUMMARY|runtime error|^ *#[0-9]+ .*/(host_tests|wasm|lab|native_stub)/|TEST CASE|CHECK|REQUIRE' "$log" |
      head -40 | sed 's/^/  /'
    ((${hfailed:-0} > 0)) || hfailed=1
  fi
  echo "sanitized host tests: ${hpassed:-0} passed, ${hfailed:-1} failed (ASan + UBSan, log $log)"
fi

passed=0
failed=0
for t in "${targets[@]}"; do
  bin="$build/h3probe_fuzz_$t"
  seeds="$root/host_tests/fuzz/corpus/$t"
  [[ -x "$bin" && -d "$seeds" ]] || { echo "fuzz: unknown target '$t'" >&2; failed=$((failed + 1)); continue; }
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  log="$out/$t.log"
  start=$(date +%s)
  status=0
  # -timeout: an input that takes over 10 s is a hang, reported like a crash. -max_len: room for a beacon of over
  # kMaxSamples samples (the largest seed is ~19 KB).
  "$bin" -max_total_time="$seconds" -timeout=10 -max_len=32768 -print_final_stats=1 \
    -dict="$root/host_tests/fuzz/$t.dict" -artifact_prefix="$out/artifacts/$t/" \
    "$out/corpus/$t" "$seeds" >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # The last status line, e.g. "#123456  DONE   cov: 1203 ft: 4410 corp: 512/98Kb ...".
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  echo "fuzz $t: ${elapsed} s, ${execs:-?} executions, ${rate:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}," \
    "corpus ${corp:-?} (inputs/bytes), log $log"
  if ((status == 0)); then
    echo "fuzz $t: no crash"
    passed=$((passed + 1))
  else
    echo "fuzz $t: FAILED (exit $status); the report:"
    # The broken check or sanitizer report, the stack frames in the project's code, and where the input was saved.
    grep -E 'invariant broken|^  [^ ]|ERROR: |SUMMARY: |^ *#[0-9]+ .*/(host_tests|wasm)/|Test unit written to' "$log" |
      head -40 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
done

echo "fuzz: $passed passed, $failed failed"
((failed == 0))
