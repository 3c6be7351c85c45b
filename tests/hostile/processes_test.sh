#!/usr/bin/env bash
# What a handler leaves behind (tests/hostile/hostile_plugin.cpp) ends with
# its cell, its replay or its stress run: a daemon (fork, setsid, fork)
# started by a cell that finishes, by one that hangs, by a replay, by a stress
# run, and by a run or a stress run stopped by a second Ctrl-C, is gone when
# twice returns, and the cell's result (the replay's stderr, the stress
# report) says how many processes were left and killed. And a handler that
# reads its stdin, while twice's stdin is a pipe nobody writes to or closes,
# or is closed, sees end of file at once, in `twice run`, `replay` and `stress`.
#   processes_test.sh TWICE HOSTILE_PLUGIN
set -uo pipefail
twice=$1 plugin=$2
work=$(mktemp -d)
# The daemons run as `sleep` under this name: unique to this run, for pgrep -f.
export HOSTILE_MARKER="twice-hostile-daemon-$$-$RANDOM$RANDOM"
tp=
cleanup() {
  set +e
  [ -n "$tp" ] && kill -9 -- "-$tp" "$tp" 2>/dev/null
  exec 7>&- 2>/dev/null
  for pid in $(pgrep -f -- "$HOSTILE_MARKER"); do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mkdir db tmp
export TWICE_DB_DIR="$work/db" TMPDIR="$work/tmp"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# no_daemon WHAT: no daemon is left (twice ends them before it returns: no waiting here).
no_daemon() {
  local left
  left=$(pgrep -f -- "$HOSTILE_MARKER" | tr '\n' ' ')
  [ -z "$left" ] && return 0
  fail "$1: the daemon outlived twice: $left"
  for pid in $left; do kill -9 "$pid" 2>/dev/null; done
}

# A cell that finishes, one that hangs (its process killed by twice, the
# daemon adopted by twice and ended), and a well-behaved one.
"$twice" run --plugin "$plugin" --handler hostile-daemon --handler hostile-daemon-spin --handler cas \
  --scenario concurrent-duplicates --seeds 5 -j 2 --cell-timeout 3 --json run.json -q --no-report >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 1 ] || fail "run: exit $rc, wanted 1 (the hung cell): $(cat err.txt)"
no_daemon "run"
python3 - run.json <<'PY' || fail "run: cells (above)"
import json, sys
cells = {c["handler"]: c for c in json.load(open(sys.argv[1]))["cells"]}
bad = 0
c = cells["hostile-daemon"]
if c.get("processes_left") != 1 or not c["matched"] or c.get("failures"):
    print("hostile-daemon: wanted a matching cell with processes_left 1:", c); bad += 1
c = cells["hostile-daemon-spin"]
if c.get("processes_left") != 1 or not c.get("failures") or not c["failures"][0]["verdict"].startswith("hung:"):
    print("hostile-daemon-spin: wanted a hung cell with processes_left 1:", c); bad += 1
if "processes_left" in cells["cas"]:
    print("cas: processes_left where it left none:", cells["cas"]); bad += 1
sys.exit(1 if bad else 0)
PY
for h in hostile-daemon hostile-daemon-spin; do
  grep -qF "$h × concurrent-duplicates: the handler left 1 process running when the cell ended; twice killed it" out.txt ||
    fail "run: the text does not say $h left a process: $(cat out.txt)"
done
! grep -q "cas × .*the handler left" out.txt || fail "run: cas is said to leave processes"

# A replay that ends normally, and one that hangs.
"$twice" replay --plugin "$plugin" --handler hostile-daemon --scenario concurrent-duplicates --seed 7 >replay.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "replay: exit $rc, wanted 0: $(cat err.txt)"
no_daemon "replay"
grep -qF "twice: the handler left 1 process running when the replay ended; twice killed it" err.txt ||
  fail "replay: stderr does not say a process was left: $(cat err.txt)"
"$twice" replay --plugin "$plugin" --handler hostile-daemon-spin --scenario concurrent-duplicates --seed 7 \
  --cell-timeout 2 >replay.txt 2>err.txt
rc=$?
[ "$rc" -eq 1 ] || fail "hung replay: exit $rc, wanted 1: $(cat err.txt)"
no_daemon "hung replay"
tail -1 replay.txt | grep -q "^# verdict: hung: " || fail "hung replay: last line $(tail -1 replay.txt)"
grep -qF "left 1 process running when the replay ended" err.txt || fail "hung replay: stderr: $(cat err.txt)"

# `twice stress` contains its run as `twice run` contains a cell: a run that
# ends, and one whose handler spins until a second Ctrl-C kills the run. The
# daemon outlived both, and the text and JSON did not say it was left.
"$twice" stress --plugin "$plugin" --handler hostile-daemon --deliveries 200 -q --json stress.json >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "stress: exit $rc, wanted 0: $(cat err.txt)"
no_daemon "stress"
grep -qF "  processes    the handler left 1 process running when the run ended; twice killed it" out.txt ||
  fail "stress: the text does not say a process was left: $(cat out.txt)"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("processes_left") == 1 else 1)' stress.json ||
  fail "stress: the JSON has no processes_left 1: $(grep -v '^    ' stress.json)"
"$twice" stress --plugin "$plugin" --handler cas --deliveries 200 -q --json stress.json >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "stress (cas): exit $rc, wanted 0: $(cat err.txt)"
! grep -q "processes" out.txt stress.json || fail "stress (cas): processes said to be left: $(cat out.txt)"
# A run that ends on an error after the handler forked (stress mode has no
# services): the error said nothing of the daemon it killed.
"$twice" stress --plugin "$plugin" --handler hostile-daemon-call --deliveries 200 -q >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "stress (error): exit $rc, wanted 2: $(cat err.txt)"
no_daemon "stress (error)"
grep -qF "twice: stress: stress mode has no external services: hostile-daemon-call calls Env::call (service warehouse); test it with \`twice run --handler hostile-daemon-call\`; the handler left 1 process running when the run ended; twice killed it" err.txt ||
  fail "stress (error): stderr does not say a process was left: $(cat err.txt)"
setsid "$twice" stress --plugin "$plugin" --handler hostile-daemon-spin --deliveries 200 -q --json spin.json \
  >out.txt 2>err.txt &
tp=$!
started=
for _ in $(seq 600); do
  pgrep -f -- "$HOSTILE_MARKER" >/dev/null && { started=1; break; }
  sleep 0.05
done
if [ -z "$started" ]; then
  fail "stress stop: the daemon did not start: $(cat err.txt)"
else
  kill -INT -- "-$tp"
  for _ in $(seq 600); do grep -q "stopping after the round under way" err.txt && break; sleep 0.05; done
  sleep 0.3
  kill -INT -- "-$tp"
fi
wait "$tp"
rc=$?
tp=
[ -z "$started" ] || [ "$rc" -eq 130 ] || fail "stress stop: exit $rc, wanted 130: $(cat err.txt)"
no_daemon "stress stop"
[ -z "$started" ] ||
  grep -qF "twice: stress: stopped now: the run was killed; its report is lost; the handler left 1 process running when the run ended; twice killed it" err.txt ||
  fail "stress stop: stderr does not say a process was left: $(cat err.txt)"

# A second Ctrl-C (to twice's process group, as a terminal sends it) while the daemon's cell spins.
setsid "$twice" run --plugin "$plugin" --handler hostile-daemon-spin --handler cas --scenario concurrent-duplicates \
  --seeds 1000000 -j 2 --cell-timeout 600 -q --no-report >out.txt 2>err.txt &
tp=$!
started=
for _ in $(seq 600); do
  pgrep -f -- "$HOSTILE_MARKER" >/dev/null && { started=1; break; }
  sleep 0.05
done
if [ -z "$started" ]; then
  fail "stop: the daemon did not start: $(cat err.txt)"
else
  kill -INT -- "-$tp"
  for _ in $(seq 600); do grep -q "stopping after the cells under way" err.txt && break; sleep 0.05; done
  sleep 0.3  # a person's second Ctrl-C: one within 100 ms is the first one sent twice
  kill -INT -- "-$tp"
fi
wait "$tp"
rc=$?
tp=
[ -z "$started" ] || [ "$rc" -eq 130 ] || fail "stop: exit $rc, wanted 130: $(cat err.txt)"
no_daemon "stop"
[ -z "$(ls -A db)" ] || fail "files left in the database folder: $(ls -A db)"

# stdin: a pipe that is never written to nor closed (a FIFO this script holds
# open), then closed. The handler aborts unless it reads end of file; a cell
# blocked on the read would be reported hung after its 120 s.
mkfifo stdin.fifo
exec 7<>stdin.fifo
for how in pipe closed; do
  if [ "$how" = pipe ]; then
    "$twice" run --plugin "$plugin" --handler hostile-stdin --handler cas --scenario concurrent-duplicates --seeds 5 \
      -j 2 --cell-timeout 120 --json stdin.json -q --no-report <stdin.fifo >out.txt 2>err.txt
  else
    "$twice" run --plugin "$plugin" --handler hostile-stdin --handler cas --scenario concurrent-duplicates --seeds 5 \
      -j 2 --cell-timeout 120 --json stdin.json -q --no-report <&- >out.txt 2>err.txt
  fi
  rc=$?
  [ "$rc" -eq 0 ] || fail "stdin ($how): exit $rc, wanted 0: $(cat out.txt err.txt)"
  python3 -c 'import json,sys; c=[c for c in json.load(open(sys.argv[1]))["cells"] if c["handler"]=="hostile-stdin"][0]; sys.exit(0 if c["matched"] and not c.get("failures") else 1)' \
    stdin.json || fail "stdin ($how): the cell did not pass: $(grep -A2 '"verdict"' stdin.json | head -6)"
  if [ "$how" = pipe ]; then
    "$twice" replay --plugin "$plugin" --handler hostile-stdin --scenario concurrent-duplicates --seed 7 \
      --cell-timeout 120 <stdin.fifo >replay.txt 2>err.txt
  else
    "$twice" replay --plugin "$plugin" --handler hostile-stdin --scenario concurrent-duplicates --seed 7 \
      --cell-timeout 120 <&- >replay.txt 2>err.txt
  fi
  rc=$?
  [ "$rc" -eq 0 ] || fail "stdin replay ($how): exit $rc, wanted 0: $(tail -1 replay.txt) $(cat err.txt)"
  tail -1 replay.txt | grep -q "^# verdict: no violation" || fail "stdin replay ($how): last line $(tail -1 replay.txt)"
  # `twice stress` has no hang limit of its own: a run that blocked on the read would hang it (timeout's 124).
  if [ "$how" = pipe ]; then
    timeout 120 "$twice" stress --plugin "$plugin" --handler hostile-stdin --deliveries 200 -q <stdin.fifo >out.txt 2>err.txt
  else
    timeout 120 "$twice" stress --plugin "$plugin" --handler hostile-stdin --deliveries 200 -q <&- >out.txt 2>err.txt
  fi
  rc=$?
  [ "$rc" -eq 0 ] || fail "stdin stress ($how): exit $rc, wanted 0: $(cat out.txt err.txt)"
done
exec 7>&-

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all process-containment checks passed"
