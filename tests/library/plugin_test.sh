#!/usr/bin/env bash
# `twice run|replay|list --plugin`: a plugin built against this twice loads and
# its handler runs; one built against another API version, a missing file and
# a library that is no plugin are each refused with one line and exit 2.
# So is a plugin with one file compiled against another version (a stale
# object): its library-wide version is right, that file's registration is not.
# And plugins whose registrations are refused: a job named like twice's own,
# a handler with no name, one handler name registered twice. And a plugin
# whose own macro registers two handlers and a job on one line: all three load.
#   plugin_test.sh TWICE GOOD_PLUGIN OTHER_VERSION_PLUGIN NOT_A_PLUGIN MIXED_VERSION_PLUGIN \
#                  TAKEN_JOB_PLUGIN EMPTY_NAME_PLUGIN TWICE_NAMED_PLUGIN FAMILY_PLUGIN
set -uo pipefail
twice=$1 good=$2 other=$3 notplugin=$4 mixed=$5 taken_job=$6 empty_name=$7 twice_named=$8 family=$9
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_refusal NAME WANTED_TEXT ARGS...: exit 2, exactly one line on stderr containing WANTED_TEXT.
expect_refusal() {
  local name=$1 wanted=$2
  shift 2
  "$twice" "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, wanted 2"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "$name: stderr is not one line: $(cat err.txt)"
  grep -qF -- "$wanted" err.txt || fail "$name: stderr lacks '$wanted': $(cat err.txt)"
  echo "$name: $(cat err.txt)"
}

# The same plugin twice (a replay command pasted with one more --plugin): loaded once, and said so.
"$twice" list --plugin "$good" --plugin "$(dirname "$good")/./$(basename "$good")" >out.txt 2>err.txt ||
  fail "the same plugin twice: exit $?: $(cat err.txt)"
grep -qF "is given twice; loading it once" err.txt || fail "the same plugin twice: stderr lacks the note: $(cat err.txt)"
grep -q '^  plugin-cas ' out.txt || fail "the same plugin twice: list does not show plugin-cas"

"$twice" list --plugin "$good" >out.txt 2>err.txt || fail "list: exit $?: $(cat err.txt)"
grep -q '^  plugin-cas ' out.txt || fail "list does not show plugin-cas: $(cat out.txt)"

# The scenarios plugin-cas is meant for: it has no signature check, no refunds.
"$twice" run --plugin "$good" --handler plugin-cas --scenario concurrent-duplicates --scenario sequential-duplicates \
  --seeds 40 -q >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "run: exit $rc: $(cat out.txt err.txt)"
grep -q '^plugin-cas ' out.txt || fail "run output lacks plugin-cas: $(cat out.txt)"

"$twice" replay --plugin "$good" --handler plugin-cas --scenario concurrent-duplicates --seed 7 >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "replay: exit $rc: $(cat err.txt)"
grep -q 'UPDATE orders SET status' out.txt || fail "replay trace lacks the plugin's statements"
grep -q '# verdict: no violation' out.txt || fail "replay verdict: $(tail -3 out.txt)"

# A user stresses their own handler on real threads.
"$twice" stress --plugin "$good" --handler plugin-cas --threads 2 --deliveries 40 -q >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "stress --plugin: exit $rc: $(cat out.txt err.txt)"

expect_refusal "other API version" "was built against twice API version 999" run --plugin "$other" --handler plugin-cas
expect_refusal "one stale file" "a handler registration compiled against twice API version 999 was refused" \
  list --plugin "$mixed"
expect_refusal "missing file" "no-such-plugin.so: no such file" run --plugin ./no-such-plugin.so
ln -sf loop-b.so loop-a.so && ln -sf loop-a.so loop-b.so
expect_refusal "a loop of links" "loop-a.so: cannot read it: Too many levels of symbolic links" list --plugin ./loop-a.so
expect_refusal "not a plugin" "not a twice plugin" list --plugin "$notplugin"
echo "not a library" >text.so
expect_refusal "not a library" "cannot load it" list --plugin ./text.so
# The same handler twice: the second registration is refused by name.
cp "$good" copy.so
expect_refusal "name taken" "handler 'plugin-cas' is already registered" list --plugin "$good" --plugin ./copy.so
expect_refusal "job name taken" "job 'reconciler' is already registered (by twice or an earlier plugin): rename it" \
  list --plugin "$taken_job"
expect_refusal "empty handler name" "registers a handler with an empty name: give it one" list --plugin "$empty_name"
expect_refusal "one name twice in one plugin" "registers the handler 'plugin-twice-named' twice: rename one of them" \
  list --plugin "$twice_named"

# Registrations expanded on one line (a macro of the plugin's) are all made.
"$twice" list --plugin "$family" >out.txt 2>err.txt || fail "family: list: exit $?: $(cat err.txt)"
for name in plugin-family-acks plugin-family-refuses plugin-family-idle; do
  grep -q "^  $name " out.txt || fail "family: list does not show $name: $(cat out.txt)"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all plugin checks passed"
