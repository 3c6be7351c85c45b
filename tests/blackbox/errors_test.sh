#!/usr/bin/env bash
# The errors a user of black-box mode meets first: each must be one line on
# stderr saying what is wrong and what to do, exit status 2, and leave nothing
# running (twice starts no process; it must come back within the test's
# time limit even from a service that never answers).
# Usage: errors_test.sh TWICE SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TWICE="$1"
SRC="$2"
WORK="$(make_work errors)"
SILENT_PID=""
ODD_PID=""
# set +e first: under set -e a kill of a process already gone ended the trap
# before the rm, and left the folder in /dev/shm.
trap 'set +e; [ -n "$SILENT_PID" ] && kill "$SILENT_PID" 2>/dev/null; [ -n "$ODD_PID" ] && kill "$ODD_PID" 2>/dev/null; rm -rf "$WORK"; true' EXIT
ORACLE="$SRC/examples/blackbox-flask/oracle.toml"
SCENARIO="$SRC/tests/blackbox/burst.toml"
failures=0

# expect_usage_error NAME PATTERN ARGS...: exit 2, one line on stderr matching PATTERN.
expect_usage_error() {
  local name="$1" pattern="$2" status=0
  shift 2
  timeout 60 "$TWICE" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
  local lines
  lines="$(wc -l <"$WORK/err")"
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -Eq -e "$pattern" "$WORK/err"; then
    echo "FAIL: $name: exit $status, $lines lines on stderr:"
    cat "$WORK/err"
    failures=$((failures + 1))
  else
    echo "ok: $name: $(cat "$WORK/err")"
  fi
}

# A port nobody listens on: bound, then closed.
FREE_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"

expect_usage_error "non-loopback endpoint" "only loopback" \
  run --endpoint http://10.1.2.3:8080/notify --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO"
expect_usage_error "a public host name" "not loopback" \
  run --endpoint http://pay.example:80/notify --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO"
expect_usage_error "non-loopback database" "--db postgres://.*not loopback" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db postgres://shop@10.0.0.5/shop --oracle "$ORACLE" --scenario "$SCENARIO"
expect_usage_error "non-loopback database with a password" "^twice: --db postgres://shop@10.0.0.5/shop: host '10.0.0.5' is not loopback" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db postgres://shop:TWICE-SECRET-4711@10.0.0.5/shop --oracle "$ORACLE" \
  --scenario "$SCENARIO"
if grep -q TWICE-SECRET-4711 "$WORK/err"; then echo "FAIL: the --db password was printed"; failures=$((failures + 1)); fi
expect_usage_error "nothing listening" "nothing listens on http://127.0.0.1:$FREE_PORT/notify .*start the service" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO" \
  --keys-dir "$WORK/keys"

printf 'setup_sql = """\nCREATE TABLE t (x);\n"""\ncredits_sql = SELECT 1\n' >"$WORK/broken.toml"
expect_usage_error "malformed oracle file" "broken.toml:4: .*" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$WORK/broken.toml" --scenario "$SCENARIO"
printf 'setup_sql = "CREATE TABLE t (x)"\ncredit_sql = "SELECT 1"\n' >"$WORK/typo.toml"
expect_usage_error "unknown oracle key" "typo.toml:2: unknown key 'credit_sql'; known: " \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$WORK/typo.toml" --scenario "$SCENARIO"
expect_usage_error "missing oracle file" "nope.toml: cannot read the oracle file" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$WORK/nope.toml" --scenario "$SCENARIO"
sed 's/profile = "stripe"/profile = "wechat-v2"/' "$SCENARIO" >"$WORK/v2.toml"
expect_usage_error "a profile without a wire format" "profile wechat-v2 has no wire format" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$WORK/v2.toml"
expect_usage_error "black-box options without --endpoint" "--db belongs to black-box mode" \
  run --db "$WORK/shop.sqlite" --scenario "$SCENARIO"

# A repeat command ends with its scenario's --scenario-digest: a file changed
# since is refused before anything is sent (nothing listens on FREE_PORT: the
# digest is checked first), and the file as it was goes on to the next check.
mkdir -p "$WORK/digest"
cp "$SCENARIO" "$WORK/digest/burst.toml"
DIGEST="$("$TWICE" list --json --scenarios-dir "$WORK/digest" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["scenarios"][0]["digest"])')"
DB_ARGS=(--db "$WORK/shop.sqlite" --oracle "$ORACLE" --keys-dir "$WORK/keys")
expect_usage_error "the scenario as it was" "nothing listens on" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" "${DB_ARGS[@]}" --scenario "$WORK/digest/burst.toml" \
  --scenario-digest "$DIGEST"
printf '# a comment changes no value\n' >>"$WORK/digest/burst.toml"
expect_usage_error "the scenario with a comment added" "nothing listens on" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" "${DB_ARGS[@]}" --scenario "$WORK/digest/burst.toml" \
  --scenario-digest "$DIGEST"
sed -i 's/^amount = \([0-9]*\)$/amount = 1\1/' "$WORK/digest/burst.toml"
expect_usage_error "a scenario changed since the repeat command" \
  "^twice: $WORK/digest/burst.toml: not the scenario this command was printed for \(its digest is [0-9a-f]{8} now, the command says $DIGEST\): .*leave out --scenario-digest" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" "${DB_ARGS[@]}" --scenario "$WORK/digest/burst.toml" \
  --scenario-digest "$DIGEST"
expect_usage_error "a digest with two scenarios" "--scenario-digest is the digest of one scenario file: give one --scenario" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" "${DB_ARGS[@]}" --scenario "$SCENARIO" \
  --scenario concurrent-duplicates --scenario-digest "$DIGEST"
expect_usage_error "a digest without --endpoint" "--scenario-digest checks the scenario of one run: it goes with .twice replay., or with --endpoint" \
  run --scenario "$SCENARIO" --scenario-digest "$DIGEST"

# Options black-box mode does not read are refused, not ignored; and what can
# be checked before a run is spent is checked first.
BB=(run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO"
    --keys-dir "$WORK/keys")
for option in "--prove" "--strategy pct" "--pct-depth 2" "--reconciler" "--isolation serializable" "--coverage" \
              "--budget 5" "--expected $WORK/e.toml" "--show all" "--cell-timeout 5"; do
  # shellcheck disable=SC2086
  expect_usage_error "$option with --endpoint" "^twice: ${option%% *} .*: leave it out$" "${BB[@]}" $option
done
expect_usage_error "--kill-window without --endpoint-command" "--kill-window goes with --endpoint-command" "${BB[@]}" --kill-window 0.2
expect_usage_error "--service-log without --endpoint-command" "--service-log goes with --endpoint-command" "${BB[@]}" --service-log x.log
expect_usage_error "--json in a missing folder" "--json $WORK/no/x.json: no folder $WORK/no" "${BB[@]}" --json "$WORK/no/x.json"
expect_usage_error "an empty --keys-dir" "--keys-dir is empty" "${BB[@]:0:9}" --keys-dir ""
expect_usage_error "--min-timeout nan" "--min-timeout nan is not a number" "${BB[@]}" --min-timeout nan
expect_usage_error "an empty --endpoint" "--endpoint is empty: give the service's URL" run --endpoint "" --scenario "$SCENARIO"
expect_usage_error "--oracle names a folder" "$WORK: is a folder; give --oracle the oracle file" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$WORK" --scenario "$SCENARIO"
expect_usage_error "seeds past the largest" "runs past the largest seed" "${BB[@]}" --seed 9007199254740991 --seeds 2
expect_usage_error "a database address hidden in hostaddr=" "hostaddr '192.0.2.2' is not loopback" \
  run --endpoint "http://127.0.0.1:$FREE_PORT/notify" --db 'postgres://u@/db?hostaddr=192.0.2.2&port=15432' \
  --oracle "$ORACLE" --scenario "$SCENARIO"

# A service that accepts connections and never answers.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept(); held.append(c)
' "$WORK/silent-port" &
SILENT_PID=$!
for _ in $(seq 50); do [ -s "$WORK/silent-port" ] && break; sleep 0.1; done
SILENT_PORT="$(cat "$WORK/silent-port")"
expect_usage_error "a service that never answers" "did not answer within 0.30s.*stuck" \
  run --endpoint "http://127.0.0.1:$SILENT_PORT/notify" --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO" \
  --keys-dir "$WORK/keys" --min-timeout 0.3

# --endpoint-command when something already listens on the port: refused
# before the command runs (it would not be what answers, nor what the nemesis kills).
expect_usage_error "--endpoint-command on a port in use" "something already listens on 127.0.0.1:$SILENT_PORT: stop it, or leave out --endpoint-command" \
  run --endpoint "http://127.0.0.1:$SILENT_PORT/notify" --endpoint-command "touch $WORK/started; sleep 30" \
  --service-log "$WORK/service.log" --db "$WORK/shop.sqlite" --oracle "$ORACLE" --scenario "$SCENARIO" --keys-dir "$WORK/keys"
if [ -e "$WORK/started" ]; then echo "FAIL: --endpoint-command ran although the port was in use"; failures=$((failures + 1)); fi

# A MariaDB URL with an option twice does not take names --db, not --engine-url.
python3 "$SRC/tests/blackbox/odd_service.py" "$WORK/odd-port" ok &
ODD_PID=$!
for _ in $(seq 50); do [ -s "$WORK/odd-port" ] && break; sleep 0.1; done
expect_usage_error "a MariaDB URL option" "^twice: --db mysql://root@127.0.0.1/shop\?foo=1: the only option is \?socket=" \
  run --endpoint "http://127.0.0.1:$(cat "$WORK/odd-port")/notify" --db "mysql://root@127.0.0.1/shop?foo=1" --oracle "$ORACLE" \
  --scenario "$SCENARIO" --keys-dir "$WORK/keys"

# A --db password is never printed (CI logs are often public); the error
# names the database without it.
SECRET="TWICE-SECRET-4711"
expect_no_secret() {
  if grep -q -e "$SECRET" "$WORK/out" "$WORK/err"; then
    echo "FAIL: $1: the password was printed:"
    cat "$WORK/out" "$WORK/err"
    failures=$((failures + 1))
  fi
}
expect_usage_error "a --db password, nothing listening" \
  "^twice: --db postgresql://shop@127.0.0.1:$FREE_PORT/shop: cannot connect: cannot connect to PostgreSQL: " \
  run --endpoint "http://127.0.0.1:$(cat "$WORK/odd-port")/notify" --db "postgresql://shop:$SECRET@127.0.0.1:$FREE_PORT/shop" \
  --oracle "$ORACLE" --scenario "$SCENARIO" --keys-dir "$WORK/keys"
expect_no_secret "a --db password, nothing listening"
expect_usage_error "a --db password, MariaDB, nothing listening" \
  "^twice: --db mysql://shop@127.0.0.1:$FREE_PORT/shop: cannot connect: cannot connect to MariaDB: " \
  run --endpoint "http://127.0.0.1:$(cat "$WORK/odd-port")/notify" --db "mysql://shop:$SECRET@127.0.0.1:$FREE_PORT/shop" \
  --oracle "$ORACLE" --scenario "$SCENARIO" --keys-dir "$WORK/keys"
expect_no_secret "a --db password, MariaDB, nothing listening"
expect_usage_error "a --db password in an option twice does not take" \
  "^twice: --db mysql://shop@127.0.0.1/shop: the only option is \?socket=" \
  run --endpoint "http://127.0.0.1:$(cat "$WORK/odd-port")/notify" --db "mysql://shop@127.0.0.1/shop?pass=$SECRET" \
  --oracle "$ORACLE" --scenario "$SCENARIO" --keys-dir "$WORK/keys"
expect_no_secret "a --db password in an option twice does not take"
kill "$ODD_PID"; wait "$ODD_PID" 2>/dev/null || true
ODD_PID=""

[ "$failures" -eq 0 ] || { echo "FAIL: $failures error cases"; exit 1; }
echo "PASS"
