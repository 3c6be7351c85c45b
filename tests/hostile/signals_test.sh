#!/usr/bin/env bash
# Ctrl-C against cells in child processes (tests/hostile/hostile_plugin.cpp).
# twice runs in a session of its own, and the signals go to its process group,
# as a terminal sends them:
# - twice, stopped at once by a second Ctrl-C, takes its cells with it (a
#   handler that spins would spin for ever) and leaves no database file;
# - one Ctrl-C does not reach the cells (a handler that put SIGINT back to its
#   default is not killed, nor reported as crashed by SIGINT); the cells under
#   way finish, except an exhaustive search, which ends early and says so.
#   signals_test.sh TWICE HOSTILE_PLUGIN
set -uo pipefail
twice=$1 plugin=$2
work=$(mktemp -d)
tp=
cleanup() {
  set +e
  [ -n "$tp" ] && kill -9 -- "-$tp" "$tp" 2>/dev/null
  for pid in ${cells:-}; do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mkdir db tmp
export TWICE_DB_DIR="$work/db" TMPDIR="$work/tmp"
failures=0
# Alive: not a zombie (a killed orphan waits for init, which may be slow to reap it, to go).
alive() { local state; state=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${state:0:1}" != Z ]; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# start ARGS...: twice in a session of its own; $tp its pid, once its two cells are under way.
start() {
  setsid "$twice" run --plugin "$plugin" --scenario concurrent-duplicates,sequential-duplicates -j 2 -q "$@" \
    >out.txt 2>err.txt &
  tp=$!
  for _ in $(seq 200); do
    [ "$(pgrep -c -P "$tp")" -ge 2 ] && [ -n "$(ls -A db)" ] && return 0
    sleep 0.05
  done
  fail "the cells did not start: $(cat err.txt)"
  return 1
}
# until_said TEXT: waits until twice said TEXT on stderr (it took the first signal).
until_said() {
  for _ in $(seq 200); do
    grep -q "$1" err.txt && return 0
    sleep 0.05
  done
  fail "twice did not say '$1': $(cat err.txt)"
}

# A second Ctrl-C: twice stops at once, and its cells (one spinning for ever) with it.
if start --handler hostile-spin --handler cas --seeds 1000000 --cell-timeout 600; then
  cells=$(pgrep -P "$tp" | tr '\n' ' ')
  kill -INT -- "-$tp"
  until_said "stopping after the cells under way"
  sleep 0.3  # a person's second Ctrl-C: one within 100 ms is the first one sent twice (timeout does)
  kill -INT -- "-$tp"
  wait "$tp"
  rc=$?
  tp=
  [ "$rc" -eq 130 ] || fail "second Ctrl-C: exit $rc, wanted 130"
  for pid in $cells; do
    ! alive "$pid" || fail "second Ctrl-C: cell process $pid outlived twice"
  done
  [ -z "$(ls -A db)" ] || fail "second Ctrl-C: files left in the database folder: $(ls -A db)"
  # It says what it drops: no cell had finished (both run for ever).
  grep -q "twice: stopped at once: 0 finished cells are not reported (one Ctrl-C writes them)" err.txt ||
    fail "second Ctrl-C: no line says which finished cells are dropped: $(cat err.txt)"
fi

# One Ctrl-C: the cells under way (their handler waits for ./hostile-go, made
# once twice took the signal) finish, SIGINT at its default in the handler or
# not; the cells not started make the matrix incomplete.
if start --handler hostile-signal-defaults --handler cas --seeds 20 --cell-timeout 600 --json one.json; then
  kill -INT -- "-$tp"
  until_said "stopping after the cells under way"
  touch hostile-go
  wait "$tp"
  rc=$?
  tp=
  [ "$rc" -eq 130 ] || fail "one Ctrl-C: exit $rc, wanted 130: $(cat err.txt)"
  ! grep -q "crashed: SIGINT" out.txt || fail "one Ctrl-C killed a cell: $(grep -A1 'crashed: SIGINT' out.txt)"
  python3 - one.json <<'PY' || fail "one Ctrl-C: the cells under way (above)"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
shown = [(c["handler"], c["scenario"], c["seeds_run"], c.get("failures")) for c in cells]
if len(cells) != 2 or any(c["handler"] != "hostile-signal-defaults" or c.get("failures") or c["seeds_run"] != 20
                          for c in cells):
    print("finished cells:", shown)
    sys.exit(1)
PY
  [ -z "$(ls -A db)" ] || fail "one Ctrl-C: files left in the database folder: $(ls -A db)"
fi

# One Ctrl-C in an exhaustive search of about a million schedules (minutes):
# the search under way ends early and says so, the run exits 130 with the
# matrix marked interrupted (it read as "matrix matches", exit 0), in seconds.
setsid "$twice" run --handler cas --scenario forged-callbacks --strategy exhaustive -j 1 --json ex.json \
  >out.txt 2>err.txt &
tp=$!
for _ in $(seq 200); do [ -n "$(ls -A db)" ] && break; sleep 0.05; done
sleep 1
kill -INT -- "-$tp"
for _ in $(seq 300); do kill -0 "$tp" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$tp" 2>/dev/null; then
  fail "exhaustive Ctrl-C: twice still running 15 s after one Ctrl-C"
  kill -9 -- "-$tp" 2>/dev/null
  wait "$tp" 2>/dev/null
else
  wait "$tp"
  rc=$?
  [ "$rc" -eq 130 ] || fail "exhaustive Ctrl-C: exit $rc, wanted 130: $(cat err.txt)"
  grep -q "cas × forged-callbacks: interrupted after" out.txt || fail "exhaustive Ctrl-C: no 'interrupted after': $(cat out.txt)"
  python3 -c "import json,sys; j=json.load(open('ex.json')); sys.exit(0 if j['interrupted'] and j['cells'][0]['exhaustive']['interrupted'] else 1)" ||
    fail "exhaustive Ctrl-C: the JSON does not say interrupted"
fi
tp=
[ -z "$(ls -A db)" ] || fail "exhaustive Ctrl-C: files left in the database folder: $(ls -A db)"

# `timeout` sends its signal to twice and then to twice's process group: one
# stop sent twice at once, not a second Ctrl-C. It stopped twice at once and
# lost every result: now the run ends as after one Ctrl-C, its report written.
rm -f t.json
timeout -s INT 2 "$twice" run --handler cas --scenario forged-callbacks --strategy exhaustive -j 1 --no-report \
  --json t.json >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 124 ] || fail "timeout: exit $rc, wanted timeout's 124: $(cat err.txt)"
grep -q "cas × forged-callbacks: interrupted after" out.txt || fail "timeout: no report: $(cat out.txt err.txt)"
[ -s t.json ] || fail "timeout: no JSON written"
[ -z "$(ls -A db)" ] || fail "timeout: files left in the database folder: $(ls -A db)"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all signal checks passed"
