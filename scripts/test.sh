#!/usr/bin/env bash
# The whole test suite: unit, property (RapidCheck, fixed seed), regression,
# report (read back by real consumers: Chromium, cmark-gfm, xmllint, Mermaid's
# parser) and end-to-end tests. Installs and builds what is missing first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# clang-14 and its runtime: libFuzzer for the scenario loader's fuzz target.
export TWICE_EXTRA_PACKAGES="${TWICE_EXTRA_PACKAGES:-} chromium cmark-gfm libxml2-utils python3 clang-14 libclang-rt-14-dev"
source "$ROOT/scripts/setup.sh"

# Mermaid's own parser, pinned by tests/reports/mermaid_check/package-lock.json.
# Mermaid 11 and jsdom need Node.js 20.19 or newer; Debian 12's nodejs is 18.
# Without a new enough node (and npm to install the parser) the Mermaid test
# skips; ctest does not print why, so the last line of this script does.
MERMAID="$ROOT/tests/reports/mermaid_check"
node_new_enough() {
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null
}
mermaid_note=""
if ! command -v node >/dev/null 2>&1; then
  mermaid_note="skips: no Node.js (it needs 20.19 or newer; Debian 12's nodejs is 18)"
elif ! node_new_enough; then
  if [ -d "$MERMAID/node_modules/mermaid" ]; then
    mermaid_note="runs on Node.js $(node --version), older than the 20.19 Mermaid needs, and may fail: install a newer Node.js, or remove $MERMAID/node_modules to skip it"
  else
    mermaid_note="skips: Node.js $(node --version) is older than the 20.19 Mermaid needs"
  fi
elif [ ! -d "$MERMAID/node_modules" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    mermaid_note="skips: Node.js $(node --version) but no npm to install Mermaid's parser"
  elif ! npm ci --no-audit --no-fund --silent --prefix "$MERMAID" >&2; then
    mermaid_note="skips: npm ci --prefix $MERMAID failed"
  fi
fi

# AddressSanitizer and UndefinedBehaviorSanitizer over the core suite
# (simulator and fibers, database layer, gateway, checker, explorer, the
# reference handlers), the `twice` binary through its CLI tests, the report
# writers, the plugin loader, and cell isolation against the hostile handlers;
# ThreadSanitizer over the real-thread stress mode and the explorer's worker
# threads; the scenario loader's fuzz target for a minute. Each builds only
# what it runs. TWICE_SKIP_SANITIZERS=1 skips all three (about 8 minutes of
# building on two cores).
#
# The sanitizer builds compile each target's sources in batches (CMake's
# unity builds, as every build of twice does: CMakeLists.txt) and keep line
# tables only (-g1: a report still names file and line): they exist to run
# the tests once, so what counts is how soon.
SAN_CONFIG=(-G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-g1)
rc=0
step() { echo "== $*" >&2; }
# A sanitized GoogleTest program as two shards at once (GoogleTest's
# GTEST_TOTAL_SHARDS): one program runs on one core, and these machines have
# two. Each shard's output is shown after both end; fails if either fails.
two_shards() {
  local logs=() pids=() i status=0
  for i in 0 1; do
    logs[i]=$(mktemp)
    GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$i "$@" --gtest_brief=1 >"${logs[i]}" 2>&1 &
    pids[i]=$!
  done
  for i in 0 1; do
    wait "${pids[i]}" || status=1
    cat "${logs[i]}" >&2
    rm -f "${logs[i]}"
  done
  return "$status"
}
build_or_die() {  # DIR LOG TARGETS...
  local dir=$1 log=$2
  shift 2
  ninja -C "$dir" -j"${TWICE_JOBS:-2}" "$@" >"$log" 2>&1 ||
    { tail -40 "$log" >&2; echo "twice: the build in $dir failed ($log)" >&2; exit 1; }
}
if [ "${TWICE_SKIP_SANITIZERS:-0}" != 1 ]; then
  SAN_DIR="$ROOT/build-sanitize"
  cmake -S "$ROOT" -B "$SAN_DIR" "${SAN_CONFIG[@]}" -DTWICE_SANITIZE=ON >/dev/null
  build_or_die "$SAN_DIR" "$SAN_DIR/build.log" tests/twice_tests twice tests/cli/twice_cli_tests \
    tests/reports/twice_reports_tests twice_sample_plugin twice_other_version_plugin twice_not_a_plugin \
    twice_mixed_version_plugin twice_misregistered_plugin_1 twice_misregistered_plugin_2 \
    twice_misregistered_plugin_3 twice_family_plugin twice_hostile_plugin
  # The same fixed RapidCheck seed and case count as ctest gives twice_tests,
  # read from tests/CMakeLists.txt so the two cannot drift apart.
  RC_FIXED="$(sed -n 's/.*"RC_PARAMS=\(seed=[0-9]* max_success=[0-9]*\)".*/\1/p' "$ROOT/tests/CMakeLists.txt" | head -1)"
  [ -n "$RC_FIXED" ] || { echo "twice: no RC_PARAMS for twice_tests in tests/CMakeLists.txt" >&2; exit 1; }
  step "core tests under ASan+UBSan (RC_PARAMS=$RC_FIXED)"
  RC_PARAMS="$RC_FIXED" two_shards "$SAN_DIR/tests/twice_tests" || rc=$?
  step "CLI and report tests against the sanitized twice"
  (cd "$ROOT" && two_shards "$SAN_DIR/tests/cli/twice_cli_tests") || rc=$?
  (cd "$ROOT" && two_shards "$SAN_DIR/tests/reports/twice_reports_tests") || rc=$?
  step "plugin loader under ASan+UBSan"
  bash "$ROOT/tests/library/plugin_test.sh" "$SAN_DIR/twice" "$SAN_DIR/tests/library/libtwice_sample_plugin.so" \
    "$SAN_DIR/tests/library/libtwice_other_version_plugin.so" "$SAN_DIR/tests/library/libtwice_not_a_plugin.so" \
    "$SAN_DIR/tests/library/libtwice_mixed_version_plugin.so" \
    "$SAN_DIR/tests/library/libtwice_misregistered_plugin_1.so" \
    "$SAN_DIR/tests/library/libtwice_misregistered_plugin_2.so" \
    "$SAN_DIR/tests/library/libtwice_misregistered_plugin_3.so" \
    "$SAN_DIR/tests/library/libtwice_family_plugin.so" || rc=$?
  step "hostile handlers against the sanitized twice"
  TWICE_HOSTILE_SANITIZED=1 bash "$ROOT/tests/hostile/hostile_test.sh" "$SAN_DIR/twice" \
    "$SAN_DIR/tests/hostile/libtwice_hostile_plugin.so" || rc=$?

  TSAN_DIR="$ROOT/build-tsan"
  cmake -S "$ROOT" -B "$TSAN_DIR" "${SAN_CONFIG[@]}" -DTWICE_TSAN=ON >/dev/null
  build_or_die "$TSAN_DIR" "$TSAN_DIR/build.log" tests/stress/twice_stress_tests tests/blackbox/twice_blackbox_tests
  step "stress mode and explorer threads under ThreadSanitizer"
  TSAN_OPTIONS="halt_on_error=1" "$TSAN_DIR/tests/stress/twice_stress_tests" --gtest_brief=1 || rc=$?
  step "black-box mode's HTTP threads under ThreadSanitizer"
  TSAN_OPTIONS="halt_on_error=1" "$TSAN_DIR/tests/blackbox/twice_blackbox_tests" --gtest_brief=1 || rc=$?

  FUZZ_DIR="$ROOT/build-fuzz"
  cmake -S "$ROOT/tests/fuzz" -B "$FUZZ_DIR" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug >/dev/null
  build_or_die "$FUZZ_DIR" "$FUZZ_DIR/build.log" scenario_fuzzer
  step "scenario loader fuzzing: the regressions, then ${TWICE_FUZZ_SECONDS:-60} s from the bundled scenarios"
  "$FUZZ_DIR/scenario_fuzzer" "$ROOT"/tests/fuzz/regressions/* >"$FUZZ_DIR/regressions.log" 2>&1 ||
    { tail -30 "$FUZZ_DIR/regressions.log" >&2; rc=1; }
  corpus=$(mktemp -d)
  cp "$ROOT"/scenarios/*.toml "$corpus"/ && rm -f "$corpus/expected.toml"
  # New inputs go to the scratch corpus, a crash's input into $FUZZ_DIR (add it to tests/fuzz/regressions).
  (cd "$FUZZ_DIR" && ./scenario_fuzzer -max_total_time="${TWICE_FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
    "$corpus" >fuzz.log 2>&1) || { tail -40 "$FUZZ_DIR/fuzz.log" >&2; rc=1; }
  grep -h "^Done" "$FUZZ_DIR/fuzz.log" >&2 || true
  rm -rf "$corpus"
fi

cd "$BUILD_DIR"
ctest -j2 --output-on-failure --timeout 600 "$@" || rc=$?
[ -z "$mermaid_note" ] || echo "twice: the Mermaid test (MarkdownReport.MermaidParsesEveryDiagram) $mermaid_note" >&2
exit "$rc"
