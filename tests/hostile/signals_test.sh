#!/usr/bin/env bash
# Ctrl-C against cells in child processes (tests/hostile/hostile_plugin.cpp).
# twice runs in a session of its own, and the signals go to its process group,
# as a terminal sends them:
# - a second Ctrl-C kills the cells under way (a handler that spins would spin
#   for ever; cells in twice's own process end between two runs) and still
#   writes the finished ones, with the others not run, and leaves no database
#   file; when writing them hangs, an alarm or a third Ctrl-C ends twice;
# - one Ctrl-C does not reach the cells (a handler that put SIGINT back to its
#   default is not killed, nor reported as crashed by SIGINT); each cell under
#   way ends after its current run and is written, cut short (an exhaustive
#   search ends early and says so).
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
    >"${stdout:-out.txt}" 2>err.txt &
  tp=$!
  for _ in $(seq 200); do
    [ "$(pgrep -c -P "$tp")" -ge 2 ] && [ -n "$(ls -A db)" ] && return 0
    sleep 0.05
  done
  fail "the cells did not start: $(cat err.txt)"
  return 1
}
# start_after_cas ARGS...: twice on `cas` and then a slow handler's cells, in
# that order, two at a time; $tp its pid, once both cells of `cas` are
# finished (its progress line says so) and the next two under way.
start_after_cas() {
  setsid "$twice" run --plugin "$plugin" --scenario concurrent-duplicates,sequential-duplicates -j 2 --handler cas \
    "$@" >out.txt 2>err.txt &
  tp=$!
  for _ in $(seq 400); do
    grep -q '] cas: 2 cells' err.txt && [ -n "$(ls -A db)" ] && return 0
    kill -0 "$tp" 2>/dev/null || break
    sleep 0.05
  done
  fail "the cells of cas did not finish: $(cat err.txt)"
  return 1
}
# ended_within SECONDS: waits for twice to end; its exit status in $rc, or fails (and kills it).
ended_within() {
  for _ in $(seq $(($1 * 20))); do kill -0 "$tp" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$tp" 2>/dev/null; then
    fail "$2: twice still running $1 s later: $(cat err.txt)"
    kill -9 -- "-$tp" "$tp" 2>/dev/null
  fi
  wait "$tp"
  rc=$?
  tp=
}
# finished_cas FILE: the JSON report holds the two cells of cas, finished and
# clean, the others not run, and says the run was interrupted.
finished_cas() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
cells = j["cells"]
shown = [(c["handler"], c["scenario"], c["seeds_run"], c.get("failures")) for c in cells]
if not j["interrupted"] or len(cells) != 2 or any(c["handler"] != "cas" or c.get("failures") for c in cells):
    print("interrupted:", j["interrupted"], "cells:", shown)
    sys.exit(1)
PY
}
# until_said TEXT: waits until twice said TEXT on stderr (it took the first signal).
until_said() {
  for _ in $(seq 200); do
    grep -q "$1" err.txt && return 0
    sleep 0.05
  done
  fail "twice did not say '$1': $(cat err.txt)"
}

# A second Ctrl-C (more than 100 ms after the first: one within is the first
# one sent twice, as `timeout` does) kills the cells under way, one spinning
# for ever, and writes the two finished ones, under each strategy.
for strategy in random pct exhaustive; do
  rm -rf rep two.json
  bound=(--seeds 20)
  [ "$strategy" = exhaustive ] && bound=(--budget 20)
  if start_after_cas --handler hostile-spin --strategy "$strategy" "${bound[@]}" --cell-timeout 600 \
    --json two.json --report-dir rep; then
    until [ "$(pgrep -c -P "$tp")" -ge 2 ] || ! kill -0 "$tp" 2>/dev/null; do sleep 0.05; done
    cells=$(pgrep -P "$tp" | tr '\n' ' ')
    kill -INT -- "-$tp"
    until_said "stopping after the cells under way"
    sleep 0.3
    kill -INT -- "-$tp"
    ended_within 60 "second Ctrl-C ($strategy)"
    [ "$rc" -eq 130 ] || fail "second Ctrl-C ($strategy): exit $rc, wanted 130: $(cat err.txt)"
    for pid in $cells; do
      ! alive "$pid" || fail "second Ctrl-C ($strategy): cell process $pid outlived twice"
    done
    [ -z "$(ls -A db)" ] || fail "second Ctrl-C ($strategy): files left in the database folder: $(ls -A db)"
    grep -q "twice: stopping now: the 2 finished cells are written; 2 cells under way are dropped" err.txt ||
      fail "second Ctrl-C ($strategy): no line says what is written and dropped: $(cat err.txt)"
    ! grep -q "stopped at once" err.txt || fail "second Ctrl-C ($strategy): stopped at once: $(cat err.txt)"
    finished_cas two.json || fail "second Ctrl-C ($strategy): the JSON (above)"
    # The reports too, the spinning handler's cells not run (not crashed, not hung).
    grep -q "hostile-spin.*not run" rep/twice-report.md || fail "second Ctrl-C ($strategy): no report: $(ls rep)"
    ! grep -Eq "crashed|hung|SIGKILL" out.txt rep/twice-report.md ||
      fail "second Ctrl-C ($strategy): a killed cell reported as a failure: $(grep -E 'crashed|hung|SIGKILL' out.txt)"
    grep -q "cas" out.txt || fail "second Ctrl-C ($strategy): no text report: $(cat out.txt)"
  fi
done

# One Ctrl-C in twice's own process (--in-process, as the server engines run):
# the slow cells end after their current run and are written cut short, with
# the seeds they ran; the cells of cas, finished before, whole.
if start_after_cas --handler hostile-slow --in-process --seeds 20 --json in.json; then
  kill -INT -- "-$tp"
  until_said "stopping after the cells under way"
  ended_within 60 "one Ctrl-C in process"
  [ "$rc" -eq 130 ] || fail "one Ctrl-C in process: exit $rc, wanted 130: $(cat err.txt)"
  python3 - in.json <<'PY' || fail "one Ctrl-C in process: the JSON (above)"
import json, sys
j = json.load(open(sys.argv[1]))
cells = j["cells"]
shown = [(c["handler"], c["scenario"], c["seeds_run"], c.get("cut_short"), c.get("failures")) for c in cells]
cas = [c for c in cells if c["handler"] == "cas"]
slow = [c for c in cells if c["handler"] == "hostile-slow"]
if (not j["interrupted"] or len(cas) != 2 or any(c["seeds_run"] != 20 or c.get("cut_short") for c in cas)
        or len(slow) != 2 or any(not c.get("cut_short") or not 1 <= c["seeds_run"] < 20 or c.get("failures")
                                 for c in slow)):
    print("interrupted:", j["interrupted"], "cells:", shown)
    sys.exit(1)
PY
  [ -z "$(ls -A db)" ] || fail "one Ctrl-C in process: files left in the database folder: $(ls -A db)"
fi

# What the second Ctrl-C says is what is written: a cell in twice's own
# process whose last run was under way is dropped, as the line says, even
# though that run ends after it. It was written, the line said it was
# dropped, and twice exited 0 as if never stopped.
rm -f hostile-go
setsid "$twice" run --plugin "$plugin" --handler hostile-waits-for-go --scenario concurrent-duplicates --seeds 1 -j 1 \
  --in-process -q --no-report --json last.json >out.txt 2>err.txt &
tp=$!
for _ in $(seq 200); do [ -n "$(ls -A db)" ] && break; sleep 0.05; done
kill -INT -- "-$tp"
until_said "stopping after the cells under way"
sleep 0.3
kill -INT -- "-$tp"
until_said "stopping now"
touch hostile-go  # its one run ends now
ended_within 60 "second Ctrl-C in the last run"
rm -f hostile-go
[ "$rc" -eq 130 ] || fail "second Ctrl-C in the last run: exit $rc, wanted 130: $(cat err.txt)"
grep -q "twice: stopping now: the 0 finished cells are written; 1 cell under way is dropped" err.txt ||
  fail "second Ctrl-C in the last run: no line says what is written and dropped: $(cat err.txt)"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["interrupted"] and not j["cells"] else 1)' \
  last.json || fail "second Ctrl-C in the last run: the JSON holds a cell said to be dropped: $(head -c 300 last.json)"

# Writing the finished cells hangs (here the text, on a pipe nobody reads, as
# on a dead network mount): an alarm ends twice after $TWICE_STOP_NOW_SECONDS,
# or a third Ctrl-C at once, its cells killed and no database file left.
mkfifo full
exec 3<>full  # the pipe's reader, which never reads
python3 - <<'PY'
import os
fd = os.open("full", os.O_WRONLY | os.O_NONBLOCK)
for size in (4096, 1):
    try:
        while True:
            os.write(fd, b"x" * size)
    except BlockingIOError:
        pass
PY
for ender in alarm third; do
  rm -f hung.json
  if [ "$ender" = alarm ]; then export TWICE_STOP_NOW_SECONDS=1; else unset TWICE_STOP_NOW_SECONDS; fi
  if stdout=full start --handler hostile-spin --seeds 20 --cell-timeout 600 --no-report --json hung.json; then
    cells=$(pgrep -P "$tp" | tr '\n' ' ')
    kill -INT -- "-$tp"
    until_said "stopping after the cells under way"
    sleep 0.3
    kill -INT -- "-$tp"
    until_said "stopping now"
    for _ in $(seq 400); do [ -e hung.json ] && break; sleep 0.05; done
    [ -e hung.json ] || fail "hung writing ($ender): no JSON written: $(cat err.txt)"
    if [ "$ender" = third ]; then
      sleep 0.3
      kill -INT -- "-$tp"
    fi
    ended_within 20 "hung writing ($ender)"
    [ "$rc" -eq 130 ] || fail "hung writing ($ender): exit $rc, wanted 130 (by SIGINT): $(cat err.txt)"
    if [ "$ender" = alarm ]; then
      grep -q "twice: stopped at once: writing took more than 1 s after the second stop" err.txt ||
        fail "hung writing ($ender): no line says the alarm stopped it: $(cat err.txt)"
    else
      grep -q "twice: stopped at once: 0 finished cells are not reported" err.txt ||
        fail "hung writing ($ender): no line says what a third Ctrl-C drops: $(cat err.txt)"
    fi
    for pid in $cells; do
      ! alive "$pid" || fail "hung writing ($ender): cell process $pid outlived twice"
    done
    [ -z "$(ls -A db)" ] || fail "hung writing ($ender): files left in the database folder: $(ls -A db)"
  fi
done
unset TWICE_STOP_NOW_SECONDS
exec 3>&-

# One Ctrl-C: the cells under way (their handler waits for ./hostile-go, made
# once twice took the signal) end after their current run, written cut short,
# SIGINT at its default in the handler or not; the cells not started make the
# matrix incomplete.
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
if len(cells) != 2 or any(c["handler"] != "hostile-signal-defaults" or c.get("failures") or not c.get("cut_short")
                          or not 1 <= c["seeds_run"] < 20 for c in cells):
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
