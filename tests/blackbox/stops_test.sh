#!/usr/bin/env bash
# A black-box test that stops early keeps what it did: a service that stops
# answering mid-test, or a Ctrl-C, ends the test after the runs done, which
# are printed and written to --json (exit 1 when one shows a violation, 130
# after Ctrl-C); a second Ctrl-C drops the run under way and still keeps them,
# a third (or the alarm after the second) ends twice at once. Also what the service says is shown safely: text from its
# database reaches the terminal escaped and the JSON as valid UTF-8, and an
# endpoint that answers only non-2xx says so. No service is left running.
# Usage: stops_test.sh TWICE SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TWICE="$1"
SRC="$2"
WORK="$(make_work stops)"
TWICE_PID=""
# set +e first: under set -e a kill of a process already gone ends the trap before the rm.
trap 'set +e; stop_service; [ -n "$TWICE_PID" ] && kill "$TWICE_PID" 2>/dev/null; rm -rf "$WORK"; true' EXIT
ORACLE="$SRC/examples/blackbox-flask/oracle.toml"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# One order, three attempts at most: a run against a dead port ends quickly.
cat >"$WORK/one.toml" <<'TOML'
description = "one order, no faults"
profile = "stripe"

[faults]
max_attempts = 3

[[orders]]
order_no = "O-1"
user = "alice"
amount = 100
currency = "CNY"
TOML

start_odd() {  # MODE [ARG]: odd_service.py in the background, its port in $PORT
  stop_service
  rm -f "$WORK/port" "$WORK/port.posts"
  python3 "$SRC/tests/blackbox/odd_service.py" "$WORK/port" "$@" &
  SERVICE_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  PORT="$(cat "$WORK/port")"
}

run_twice() {  # NAME ARGS...: exit status in $STATUS, stdout in $WORK/NAME.out, stderr in $WORK/NAME.err
  local name="$1"
  shift
  STATUS=0
  timeout 120 "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" \
    --keys-dir "$WORK/keys" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || STATUS=$?
}

json_runs() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$1"; }

# 1. The service answers two requests and exits: runs 1 and 2 are kept.
start_odd exit-after 2
run_twice midway --scenario "$WORK/one.toml" --seeds 4 --json "$WORK/midway.json"
if [ "$STATUS" -ne 1 ] || ! grep -q "stopped answering mid-test in run 3 (seed 3)" "$WORK/midway.err" ||
   grep -q "start the service first" "$WORK/midway.err" || [ "$(json_runs "$WORK/midway.json")" -ne 2 ] ||
   ! grep -q "stopped after 2 of 4 runs" "$WORK/midway.out"; then
  fail "a service that stops answering mid-test (exit $STATUS):"; cat "$WORK/midway.out" "$WORK/midway.err"
else
  echo "ok: mid-test stop: $(cat "$WORK/midway.err")"
fi

# 2. Ctrl-C during the second run: it finishes, is written, exit 130.
start_odd slow 0.3
# twice itself gets the one Ctrl-C: `timeout` would pass it on to its child and
# then to its whole process group, twice included: two Ctrl-Cs, "stop now".
# (ctest's TIMEOUT bounds this test.)
"$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" \
  --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 50 --json "$WORK/int.json" \
  >"$WORK/int.out" 2>"$WORK/int.err" &
TWICE_PID=$!
for _ in $(seq 1200); do grep -q "run 1 (seed 1)" "$WORK/int.out" 2>/dev/null && break; sleep 0.05; done
kill -INT "$TWICE_PID"
STATUS=0
wait "$TWICE_PID" || STATUS=$?
TWICE_PID=""
if [ "$STATUS" -ne 130 ] || ! grep -q "stopping after the run under way" "$WORK/int.err" ||
   ! grep -q "^result: .*stopped after" "$WORK/int.out" || [ "$(json_runs "$WORK/int.json")" -lt 1 ]; then
  fail "Ctrl-C (exit $STATUS):"; cat "$WORK/int.out" "$WORK/int.err"
else
  echo "ok: Ctrl-C: $(tail -1 "$WORK/int.err"), $(json_runs "$WORK/int.json") runs in the JSON"
fi

# 2b. A second Ctrl-C during run 3, whose request the service never answers
# (and twice would wait 600 s for): as in `twice run`, the run under way is
# dropped, the two finished are printed and written, exit 130, at once. It
# wrote nothing and said nothing. Then the same with the writing stuck (stdout
# a full pipe, as on a dead terminal): an alarm, or a third Ctrl-C, ends twice
# at once, saying what it did not write.
start_odd hang-after 2
# start_hung ARGS...: twice in a session of its own, run 3 under way; TWICE_PID.
start_hung() {
  setsid "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" \
    --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 50 --min-timeout 600 -q --json "$WORK/now.json" "$@" \
    2>"$WORK/now.err" &
  TWICE_PID=$!
  # Runs 1 and 2 are answered at once; run 3's request then waits.
  for _ in $(seq 600); do
    [ "$(cat "$WORK/port.posts" 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.05
  done
}
# said TEXT: twice has said TEXT on stderr (it took the signal before).
said() { for _ in $(seq 200); do grep -q "$1" "$WORK/now.err" && return 0; sleep 0.05; done; return 1; }
ended() {  # SECONDS: twice ended within them; its status in STATUS
  for _ in $(seq $(($1 * 20))); do kill -0 "$TWICE_PID" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$TWICE_PID" 2>/dev/null; then kill -9 "$TWICE_PID"; fi
  STATUS=0
  wait "$TWICE_PID" || STATUS=$?
  TWICE_PID=""
}
rm -f "$WORK/now.json"
start_hung >"$WORK/now.out"
kill -INT -- "-$TWICE_PID" 2>/dev/null || true  # gone already: the checks below say so
said "stopping after the run under way" || true
sleep 0.3  # a person's second Ctrl-C: one within 100 ms is the first one sent twice
kill -INT -- "-$TWICE_PID" 2>/dev/null || true
ended 20
if [ "$STATUS" -ne 130 ] ||
   ! grep -q "^twice: stopping now: the 2 finished runs are written; 1 run under way is dropped (Ctrl-C again to stop at once, writing nothing)$" "$WORK/now.err" ||
   ! grep -q "^result: .* in 2 of 2 runs (stopped after 2 of 50 runs)" "$WORK/now.out" ||
   [ "$(json_runs "$WORK/now.json" 2>/dev/null || echo none)" != 2 ]; then
  fail "second Ctrl-C (exit $STATUS):"; cat "$WORK/now.out" "$WORK/now.err"
else
  echo "ok: second Ctrl-C: $(grep "stopping now" "$WORK/now.err")"
fi

# 2b'. An oracle query that fails, or returns too few columns, is the oracle
# file's mistake: one line, exit 2, after the first run. It was an
# oracle_error, or a lost_payment read from zeros, "found" in every run (exit 1).
start_odd status 200
for bad in "SELECT order_no FROM orders" "SELECT order_no, nosuchcol FROM orders"; do
  python3 - "$ORACLE" "$bad" >"$WORK/bad-oracle.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
value = '"' + sys.argv[2] + '"'
print(re.sub(r'^credits_sql = ("""(.|\n)*?"""|"[^"\n]*")', lambda m: "credits_sql = " + value, text, count=1,
             flags=re.M), end="")
PY
  STATUS=0
  timeout 120 "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" \
    --oracle "$WORK/bad-oracle.toml" --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 5 -q \
    >"$WORK/oracle.out" 2>"$WORK/oracle.err" || STATUS=$?
  case "$bad" in
    *nosuchcol*) wanted="credits (Schema::credits_sql): .*no such column: nosuchcol" ;;
    *) wanted="credits (Schema::credits_sql): a row of 1 column, where it must return (order_no, credits) at least" ;;
  esac
  if [ "$STATUS" -ne 2 ] || [ "$(wc -l <"$WORK/oracle.err")" -ne 1 ] ||
     ! grep -q "^twice: $WORK/bad-oracle.toml: the checker could not read $wanted.*; fix the query in the oracle file" \
       "$WORK/oracle.err" || grep -q "run 2" "$WORK/oracle.out"; then
    fail "an oracle query that cannot be read ($bad; exit $STATUS):"; cat "$WORK/oracle.out" "$WORK/oracle.err"
  else
    echo "ok: $(cat "$WORK/oracle.err")"
  fi
done

# 2e. A run that waits out the gateway's retries says how it goes, once a
# minute ($TWICE_PROGRESS_SECONDS): a service that answers 500 to everything
# kept twice silent for a quarter of an hour a run.
start_odd status 500
STATUS=0
TWICE_PROGRESS_SECONDS=1 timeout 120 "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" \
  --oracle "$ORACLE" --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 1 \
  >"$WORK/progress.out" 2>"$WORK/progress.err" || STATUS=$?
if ! grep -qE "^  run 1 \(seed 1\) of 1: [0-9.]+s so far: [0-9]+ requests?, [0-9]+ answered \(HTTP 500 ×[0-9]+\), 0 acks; the gateway retries on its schedule$" \
     "$WORK/progress.err"; then
  fail "a long run says nothing of how it goes (exit $STATUS):"; cat "$WORK/progress.out" "$WORK/progress.err"
else
  echo "ok: $(head -1 "$WORK/progress.err")"
fi

# gone_service NAME WHAT RUNS: concurrent-duplicates against the odd service
# started last, which goes away; twice must end within a minute, exit 1, and
# say on stderr that the service stopped answering in run RUNS (a grep
# pattern: "[0-9]", "2") of concurrent-duplicates, nothing listening.
gone_service() {
  local name="$1" what="$2" runs="$3" started took
  STATUS=0
  started=$(date +%s)
  timeout 300 "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" \
    --keys-dir "$WORK/keys" --scenario concurrent-duplicates --seeds 5 -q >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    STATUS=$?
  took=$(($(date +%s) - started))
  if [ "$STATUS" -ne 1 ] || [ "$took" -gt 60 ] ||
     ! grep -q "^twice: the service stopped answering mid-test in run $runs (seed $runs) of concurrent-duplicates, after [0-9] finished runs\?: nothing listens on http://127.0.0.1:$PORT/notify (connection refused, [0-9]* requests); the finished runs are kept$" \
       "$WORK/$name.err"; then
    fail "$what (exit $STATUS, ${took}s):"; cat "$WORK/$name.out" "$WORK/$name.err"
  else
    echo "ok: ${took}s: $(cat "$WORK/$name.err")"
  fi
}

# 2f. Without --endpoint-command nobody starts a service again once it has
# gone: the run gives up after a few refused connections, where it waited out
# the gateway's whole retry schedule (WeChat's: a quarter of an hour a run at
# the default time scale), silent.
start_odd exit-after 2
gone_service refused "a service gone mid-test" "[0-9]"

# 2f'. The same when the service died in the middle of a request (no answer,
# the connection broken), then refused: the refusals in a row end the run.
# With "refused, none answered, none broken or timed out" as the rule, this
# run waited out WeChat's schedule (about 15 minutes here), as 2f's did once
# under load, when its service's last answer timed out.
start_odd die-on 2
gone_service answered-once "a service that died mid-request" 2

# 2c. The same before any run finished: nothing is written, and twice says so;
# it said the runs "are in" the JSON file, where an earlier test's stayed.
start_odd hang-after 0
echo '{"earlier": true}' >"$WORK/none.json"
setsid "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" \
  --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 5 --min-timeout 600 -q --json "$WORK/none.json" \
  >"$WORK/none.out" 2>"$WORK/none.err" &
TWICE_PID=$!
for _ in $(seq 600); do [ "$(cat "$WORK/port.posts" 2>/dev/null || echo 0)" -ge 1 ] && break; sleep 0.05; done
kill -INT -- "-$TWICE_PID" 2>/dev/null || true
for _ in $(seq 200); do grep -q "stopping after the run under way" "$WORK/none.err" && break; sleep 0.05; done
sleep 0.3
kill -INT -- "-$TWICE_PID" 2>/dev/null || true
ended 20
if [ "$STATUS" -ne 130 ] ||
   ! grep -qx "twice: stopped before any run finished; nothing written to $WORK/none.json" "$WORK/none.err" ||
   [ "$(cat "$WORK/none.json")" != '{"earlier": true}' ]; then
  fail "a stop before any run finished (exit $STATUS):"; cat "$WORK/none.out" "$WORK/none.err"
else
  echo "ok: a stop before any run finished: $(tail -1 "$WORK/none.err")"
fi
mkfifo "$WORK/full"
exec 3<>"$WORK/full"  # the pipe's reader, which never reads
for ender in alarm third; do
  rm -f "$WORK/now.json"
  python3 - "$WORK/full" <<'PY'  # emptied of the last round's bytes, so that twice can start
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
try:
    while os.read(fd, 65536):
        pass
except BlockingIOError:
    pass
PY
  start_odd hang-after 2
  if [ "$ender" = alarm ]; then export TWICE_STOP_NOW_SECONDS=1; else unset TWICE_STOP_NOW_SECONDS; fi
  start_hung >"$WORK/full"
  # Full now, while twice waits on run 3: what it prints after the second Ctrl-C blocks.
  python3 - "$WORK/full" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
for size in (4096, 1):
    try:
        while True:
            os.write(fd, b"x" * size)
    except BlockingIOError:
        pass
PY
  kill -INT -- "-$TWICE_PID" 2>/dev/null || true
  said "stopping after the run under way" || true
  sleep 0.3
  kill -INT -- "-$TWICE_PID" 2>/dev/null || true
  said "stopping now" || true
  if [ "$ender" = third ]; then
    sleep 0.3
    kill -INT -- "-$TWICE_PID" 2>/dev/null || true
  fi
  ended 20
  if [ "$ender" = alarm ]; then
    wanted="twice: stopped at once: writing took more than 1 s after the second stop"
  else
    wanted="twice: stopped at once: 2 finished runs are not reported (one or two Ctrl-Cs write them)"
  fi
  if [ "$STATUS" -ne 130 ] || ! grep -q "^$wanted" "$WORK/now.err"; then
    fail "writing stuck, ended by the $ender (exit $STATUS):"; cat "$WORK/now.err"
  else
    echo "ok: writing stuck: $(grep "stopped at once" "$WORK/now.err")"
  fi
done
unset TWICE_STOP_NOW_SECONDS
exec 3>&-

# 3. An account id with a colour escape, a newline and a byte that is not UTF-8.
python3 - "$ORACLE" "$WORK/evil.toml" <<'PY'
import sys
text = open(sys.argv[1]).read()
row = "INSERT INTO accounts (user_id, balance) VALUES (char(27) || '[31mEVIL' || char(10) || 'result: no violation' || CAST(X'FF' AS TEXT), 5);\n"
head, sep, tail = text.partition('"""\n\n')  # the end of setup_sql
open(sys.argv[2], "w").write(head + row + sep + tail)
PY
start_odd ok
STATUS=0
timeout 120 "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" --oracle "$WORK/evil.toml" \
  --keys-dir "$WORK/keys" --scenario "$WORK/one.toml" --seeds 1 --json "$WORK/evil.json" >"$WORK/evil.out" 2>"$WORK/evil.err" ||
  STATUS=$?
if [ "$STATUS" -ne 1 ] || grep -q $'\x1b' "$WORK/evil.out" || grep -q "^result: no violation" "$WORK/evil.out" ||
   ! grep -q 'account \\x1b\[31mEVIL\\nresult: no violation' "$WORK/evil.out" ||
   ! python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$WORK/evil.json"; then
  fail "text from the service's database (exit $STATUS):"; cat -v "$WORK/evil.out" "$WORK/evil.err"
else
  echo "ok: escaped: $(grep -a 'EVIL' "$WORK/evil.out")"
fi

# 4. Every answer a 404: said, with the count by status in the text and the JSON.
start_odd status 404
run_twice notfound --scenario "$WORK/one.toml" --seeds 1 --json "$WORK/404.json" --min-timeout 0.5
if [ "$STATUS" -ne 1 ] || ! grep -q "every answer was HTTP 404: is the path" "$WORK/notfound.out" ||
   ! grep -q "3 answered (HTTP 404 ×3)" "$WORK/notfound.out" ||
   ! python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))[0]["statuses"] == {"404": 3}' "$WORK/404.json" ||
   ! grep -q -- "--min-timeout 0.5 " "$WORK/notfound.out"; then
  fail "answers that are all HTTP 404 (exit $STATUS):"; cat "$WORK/notfound.out" "$WORK/notfound.err"
else
  echo "ok: $(grep 'every answer' "$WORK/notfound.out")"
fi
stop_service

[ "$failures" -eq 0 ] || { echo "FAIL: $failures cases"; exit 1; }
echo "PASS"
