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
trap '[ -n "$SILENT_PID" ] && kill "$SILENT_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
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

[ "$failures" -eq 0 ] || { echo "FAIL: $failures error cases"; exit 1; }
echo "PASS"
