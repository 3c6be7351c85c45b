#!/usr/bin/env bash
# twice as users get it: install it to a prefix, build examples/my-handler out
# of tree against that prefix (find_package(twice)), and check that
#   - the first version's test fails, printing the double_credit counterexample
#     and its `twice replay` command;
#   - the fixed version's tests pass;
#   - the installed `twice` runs the example's plugin, and replays as printed.
#   example_test.sh BUILD_DIR SOURCE_DIR WORK_DIR [CXX_FLAGS]
set -euo pipefail
build=$1 source=$2 work=$3 flags=${4:-}

step() { echo "== $*"; }

step "install twice to $work/prefix"
mkdir -p "$work"
rm -rf "$work/prefix"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"

step "build examples/my-handler against it"
# A copy, so that the project's relative paths (build/libwallet_topup.so) are
# the example's own, as in the tutorial.
rm -rf "$work/my-handler"
cp -r "$source/examples/my-handler" "$work/my-handler"
# A build/ left by someone building the example where it sits would carry
# another source path in its CMake cache.
rm -rf "$work/my-handler/build"
cd "$work/my-handler"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="$flags" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
ninja -C build -j2 >"$work/build.log" || { cat "$work/build.log"; exit 1; }

step "the first version's test must fail with the counterexample"
if build/wallet_topup_v1_test >"$work/v1.out" 2>&1; then
  cat "$work/v1.out"
  echo "FAIL: wallet_topup_v1_test passed; it must find the double credit"
  exit 1
fi
for wanted in "wallet-topup-v1 is not exactly-once" "double_credit" "shrunk to" \
              "INSERT INTO wallet_credits" "twice replay --plugin $PWD/build/libwallet_topup.so --handler wallet-topup-v1"; do
  grep -qF -- "$wanted" "$work/v1.out" || { cat "$work/v1.out"; echo "FAIL: the failure lacks '$wanted'"; exit 1; }
done
sed -n '/is not exactly-once/,/^$/p' "$work/v1.out"
# The tutorial quotes this summary (abridged with "..."; the tutorial's handler
# is called wallet-topup): every line it quotes must be what the test prints.
tutorial="$source/docs/writing-a-handler.md"
quoted=$(sed -n '/^wallet-topup is not exactly-once/,/^$/p' "$tutorial" | grep -v '^  \.\.\.$' | grep -v '^$' |
  sed 's/^wallet-topup is not/wallet-topup-v1 is not/')
[ -n "$quoted" ] || { echo "FAIL: docs/writing-a-handler.md no longer quotes the summary"; exit 1; }
while IFS= read -r line; do
  grep -qxF -- "$line" "$work/v1.out" ||
    { echo "FAIL: docs/writing-a-handler.md quotes a line the test does not print: '$line'"; exit 1; }
done <<< "$quoted"
sed -n '/^wallet-topup-v1 × concurrent-duplicates: double_credit$/,/replay this counterexample/p' "$work/v1.out"

step "the fixed version's tests must pass"
# (The first version's ctest entry is WILL_FAIL; it just ran above.)
ctest --test-dir build --output-on-failure -E wallet_topup_v1 >"$work/ctest.out" 2>&1 ||
  { cat "$work/ctest.out"; echo "FAIL: the fixed version's tests"; exit 1; }
grep -E 'Test +#|tests passed' "$work/ctest.out"
# The example is held to exactly-once on PostgreSQL too (a server the test starts).
grep -qE 'WalletTopup.CreditsEachPaymentExactlyOnceOnPostgres \.+ +Passed' "$work/ctest.out" ||
  { cat "$work/ctest.out"; echo "FAIL: the example's PostgreSQL test did not run and pass"; exit 1; }

step "the installed twice runs the plugin"
twice="$work/prefix/bin/twice"
"$twice" run --plugin build/libwallet_topup.so --handler wallet-topup --seeds 100 -q \
  --scenario sequential-duplicates --scenario concurrent-duplicates --scenario concurrent-topups >"$work/run.out" 2>&1 ||
  { cat "$work/run.out"; echo "FAIL: twice run --plugin: the fixed handler"; exit 1; }
head -5 "$work/run.out"
rc=0
"$twice" run --plugin build/libwallet_topup.so --handler wallet-topup-v1 --scenario concurrent-duplicates -q \
  >"$work/run-v1.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/run-v1.out"; echo "FAIL: twice run on v1 exited $rc, wanted 1"; exit 1; }
grep -q "double_credit" "$work/run-v1.out" || { cat "$work/run-v1.out"; echo "FAIL: no double_credit"; exit 1; }
# `twice run --plugin` prints replay commands that load the plugin again, so
# that they work as printed.
run_replay=$(awk '/wallet-topup-v1 × concurrent-duplicates: double_credit$/ { found = 1 }
                  found && /replay this counterexample:/ { sub(/.*replay this counterexample: */, ""); print; exit }' \
             "$work/run-v1.out")
case "$run_replay" in
  "twice replay --plugin build/libwallet_topup.so --handler wallet-topup-v1 "*) ;;
  *) cat "$work/run-v1.out"; echo "FAIL: twice run's replay command lacks --plugin: '$run_replay'"; exit 1 ;;
esac
# Exit 1: the replayed run shows the violation.
rc=0
"$twice" ${run_replay#twice } >"$work/run-replay.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/run-replay.out"; echo "FAIL: $run_replay exited $rc, wanted 1"; exit 1; }
grep -q "# verdict: double_credit" "$work/run-replay.out" || { cat "$work/run-replay.out"; echo "FAIL: $run_replay"; exit 1; }
# The double credit's replay command, as the test printed it, run as printed.
replay=$(awk '/^wallet-topup-v1 × concurrent-duplicates: double_credit$/ { found = 1 }
              found && /replay this counterexample:/ { sub(/.*replay this counterexample: */, ""); print; exit }' \
         "$work/v1.out")
[ -n "$replay" ] || { echo "FAIL: no shrunk replay command in the test's output"; exit 1; }
echo "\$ $replay"
# The plugin by its absolute path: the command works pasted in another folder.
rc=0
(cd / && "$twice" ${replay#twice }) >"$work/replay.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/replay.out"; echo "FAIL: $replay exited $rc, wanted 1"; exit 1; }
grep -q "# verdict: double_credit" "$work/replay.out" || { cat "$work/replay.out"; echo "FAIL: replay verdict"; exit 1; }
tail -2 "$work/replay.out"
echo "example round trip passed"
