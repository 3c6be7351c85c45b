#!/usr/bin/env bash
# Mutation testing of the harness: would the test suite notice a one-line bug?
# Applies each mutant of tests/mutants/mutants.txt, one at a time, to a scratch
# copy of this checkout, rebuilds incrementally (ccache when installed), runs
# the suite, and prints the mutation score and the survivors. Slow (minutes per
# surviving mutant: the full matrix runs for each), so not part of CI; its last
# result is recorded in docs/testing.md.
#
#   bash scripts/mutants.sh [ID...]   every mutant, or only these
#
# The suite, per mutant, cheapest first; the first failure kills the mutant:
#   1. twice_tests (the fixed RC_PARAMS of tests/CMakeLists.txt)
#   2. twice_canary_tests, twice_cli_tests
#   3. the plugin test (library.plugins)
#   4. the full default matrix against scenarios/expected.toml (ctest Matrix.*)
#
#   TWICE_MUTANTS_DIR  scratch folder (default: build-mutants/ in this checkout)
#   TWICE_JOBS         build jobs (default 2)
# Exit: 0 every non-equivalent mutant killed; 1 survivors; 2 a bad mutant list
# (an anchor not found or not unique: re-anchor it), a mutant that does not
# compile, or a suite that fails with no mutant at all.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIST="$ROOT/tests/mutants/mutants.txt"
WORK="${TWICE_MUTANTS_DIR:-$ROOT/build-mutants}"
SRC="$WORK/src"
BUILD="$WORK/build"
JOBS="${TWICE_JOBS:-2}"

for tool in cmake ninja python3 git; do
  command -v "$tool" >/dev/null || { echo "twice: mutants.sh needs $tool; run scripts/setup.sh first" >&2; exit 2; }
done

# Every anchor must be found exactly once before anything is built.
python3 - "$ROOT" "$LIST" "$@" <<'EOF' || exit 2
import sys
root, path, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
bad, ids = 0, set()
for n, line in enumerate(open(path, encoding="utf-8"), 1):
    if not line.strip() or line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    if len(f) not in (4, 5):
        print(f"{path}:{n}: want id, file, anchor, replacement [, equivalent: why] separated by tabs; got {len(f)} fields", file=sys.stderr); bad += 1; continue
    if f[0] in ids:
        print(f"{path}:{n}: mutant {f[0]} appears twice; ids are unique", file=sys.stderr); bad += 1
    ids.add(f[0])
    try:
        text = open(f"{root}/{f[1]}", encoding="utf-8").read()
    except OSError:
        print(f"{path}:{n}: {f[0]}: no file {f[1]}; re-anchor the mutant", file=sys.stderr); bad += 1; continue
    c = text.count(f[2])
    if c != 1:
        what = "anchor not found" if c == 0 else f"anchor not unique ({c} times)"
        print(f"{path}:{n}: {f[0]}: {what} in {f[1]}: '{f[2]}'; re-anchor it on the line that now holds this decision", file=sys.stderr); bad += 1
for i in only - ids:
    print(f"{path}: no mutant {i}", file=sys.stderr); bad += 1
sys.exit(1 if bad else 0)
EOF

# The scratch copy: this checkout's files (tracked and new, not ignored),
# copied only where they differ so the scratch build stays incremental.
mkdir -p "$SRC" "$BUILD"
(cd "$ROOT" && git ls-files -co --exclude-standard -z) | python3 -c '
import os, shutil, sys
root, src = sys.argv[1], sys.argv[2]
for rel in sys.stdin.buffer.read().decode().split("\0"):
    if not rel or not os.path.isfile(os.path.join(root, rel)):
        continue
    a, b = os.path.join(root, rel), os.path.join(src, rel)
    if os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read():
        continue
    os.makedirs(os.path.dirname(b), exist_ok=True)
    shutil.copy(a, b)  # a new modification time: ninja must rebuild what it changed
' "$ROOT" "$SRC"

if [ ! -f "$BUILD/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$WORK/configure.log" 2>&1 ||
    { tail -20 "$WORK/configure.log" >&2; exit 2; }
fi
# Everything the suite below runs; library.plugins loads each plugin of tests/library/.
TARGETS=(twice twice_tests twice_canary_tests twice_cli_tests twice_reports_tests twice_hostile_plugin twice_sample_plugin
  twice_other_version_plugin twice_not_a_plugin twice_mixed_version_plugin twice_misregistered_plugin_1
  twice_misregistered_plugin_2 twice_misregistered_plugin_3 twice_family_plugin)
RC_FIXED="$(sed -n 's/.*"RC_PARAMS=\(seed=[0-9]* max_success=[0-9]*\)".*/\1/p' "$SRC/tests/CMakeLists.txt" | head -1)"
CANARY_RC="$(sed -n 's/.*"RC_PARAMS=\(seed=[0-9]* max_success=[0-9]*\)".*/\1/p' "$SRC/tests/CMakeLists.txt" | sed -n 2p)"

build() { nice ninja -C "$BUILD" -j"$JOBS" "${TARGETS[@]}" >"$WORK/build.log" 2>&1; }

# run_suite: prints what killed it ("" when everything passed).
run_suite() {
  local out="$WORK/suite.log"
  if ! RC_PARAMS="$RC_FIXED" timeout 900 nice "$BUILD/tests/twice_tests" --gtest_fail_fast --gtest_brief=1 >"$out" 2>&1; then
    echo "twice_tests $(grep -m1 -o '^\[  FAILED  \] [^ ]*' "$out" | cut -c14- || true)"; return
  fi
  if ! RC_PARAMS="$CANARY_RC" timeout 900 nice "$BUILD/tests/twice_canary_tests" --gtest_fail_fast --gtest_brief=1 >"$out" 2>&1; then
    echo "twice_canary_tests $(grep -m1 -o '^\[  FAILED  \] [^ ]*' "$out" | cut -c14- || true)"; return
  fi
  if ! (cd "$SRC" && timeout 900 nice "$BUILD/tests/cli/twice_cli_tests" --gtest_fail_fast --gtest_brief=1) >"$out" 2>&1; then
    echo "twice_cli_tests $(grep -m1 -o '^\[  FAILED  \] [^ ]*' "$out" | cut -c14- || true)"; return
  fi
  # The reports' own tests (escaping, a failed cell's JUnit <failure>) and
  # the hostile handlers (a crashed or exit(0) cell, a re-check that fails):
  # the only tests that catch some mutants of reports/ and of the cells'
  # containment (session 19's hand-made mutants).
  if ! (cd "$SRC" && timeout 900 nice "$BUILD/tests/reports/twice_reports_tests" --gtest_fail_fast --gtest_brief=1) >"$out" 2>&1; then
    echo "twice_reports_tests $(grep -m1 -o '^\[  FAILED  \] [^ ]*' "$out" | cut -c14- || true)"; return
  fi
  if ! (cd "$BUILD" && nice ctest -R '^hostile\.' --timeout 900) >"$out" 2>&1; then
    echo "hostile ($(grep -m1 -o 'FAIL: .*' "$out" || echo 'see suite.log'))"; return
  fi
  if ! (cd "$BUILD" && nice ctest -R '^library\.plugins$' --timeout 900) >"$out" 2>&1; then
    echo "library.plugins"; return
  fi
  if ! (cd "$BUILD" && nice ctest -R '^Matrix\.' --timeout 1800 --output-on-failure) >"$out" 2>&1; then
    echo "the matrix ($(grep -m1 -o '[^ ]* × [^:]*: expected [^(]*' "$out" || echo 'see suite.log'))"; return
  fi
  echo ""
}

# mutate FILE ANCHOR REPLACEMENT: saves the file first; restore FILE puts it back byte for byte.
mutate() {
  cp -p "$SRC/$1" "$WORK/original"
  python3 - "$SRC/$1" "$2" "$3" <<'EOF'
import sys
target, old, new = sys.argv[1:4]
text = open(target, encoding="utf-8").read()
assert text.count(old) == 1, f"the anchor is not found exactly once in {target}"
open(target, "w", encoding="utf-8").write(text.replace(old, new))
EOF
}
restore() { cp "$WORK/original" "$SRC/$1"; }

echo "== the suite with no mutant (scratch copy in $WORK)" >&2
build || { tail -30 "$WORK/build.log" >&2; echo "twice: the scratch copy does not build" >&2; exit 2; }
baseline="$(run_suite)"
[ -z "$baseline" ] || { echo "twice: the suite fails with no mutant: $baseline ($WORK/suite.log)" >&2; exit 2; }

mapfile -t MUTANTS < <(grep -v '^#' "$LIST" | grep -v '^[[:space:]]*$')
total=0 killed=0 equivalent=0 broken=0
survivors=() uncompiled=() killed_equivalent=()
for row in "${MUTANTS[@]}"; do
  IFS=$'\t' read -r id file anchor replacement note <<<"$row"
  if (($#)) && [[ " $* " != *" $id "* ]]; then continue; fi
  total=$((total + 1))
  start=$SECONDS
  mutate "$file" "$anchor" "$replacement"
  if ! build; then
    result="does not compile"; uncompiled+=("$id"); broken=$((broken + 1))
  else
    by="$(run_suite)"
    if [ -n "$by" ]; then
      result="killed by $by"; killed=$((killed + 1))
      [ -z "${note:-}" ] || killed_equivalent+=("$id")
    elif [ -n "${note:-}" ]; then
      result="survived (${note})"; equivalent=$((equivalent + 1))
    else
      result="SURVIVED"; survivors+=("$id ($file: $replacement)")
    fi
  fi
  restore "$file"
  printf '[%2d] %-44s %s  (%ds)\n' "$total" "$id" "$result" $((SECONDS - start))
done
build >/dev/null 2>&1 || true  # leave the scratch build unmutated

scored=$((total - equivalent - broken))
echo
if ((scored > 0)); then
  echo "mutation score: $killed of $scored non-equivalent mutants killed ($((100 * killed / scored))%);" \
    "$equivalent equivalent, $broken not compiling, of $total"
fi
for s in "${survivors[@]}"; do echo "survivor: $s"; done
for s in "${uncompiled[@]}"; do echo "does not compile (fix the mutant): $s"; done
for s in "${killed_equivalent[@]}"; do echo "marked equivalent but killed (drop the mark): $s"; done
((broken == 0)) || exit 2
((${#survivors[@]} == 0)) || exit 1
