#!/usr/bin/env bash
# twice's wire formats checked by an independent implementation: for Stripe,
# Alipay, WeChat Pay v3, Adyen and PayPal (twice, once with the certificate
# fetched from PAYPAL-CERT-URL and once through the verify-webhook-signature
# API, both served by twice on loopback), a shop written with Python's cryptography
# and hmac (verify_service.py) must accept every genuine notify twice sends
# (the payment is credited once and acknowledged: no violation) and refuse
# every forged one (signed with a key it was never given). Then the same shop
# with verification off must be caught: a forged notify credits an order
# nobody paid (unpaid_credit).
# Usage: signatures_test.sh TWICE SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TWICE="$1"
SRC="$2"
RUNS=2
FORGED_PER_RUN=3
WORK="$(make_work signatures)"
trap 'stop_service; rm -rf "$WORK"' EXIT

start_service() {
  rm -f "$WORK/port" "$WORK/stats.json"
  python3 "$SRC/tests/blackbox/verify_service.py" --db "$WORK/shop.sqlite" --keys-dir "$WORK/keys" \
    --port-file "$WORK/port" --stats-file "$WORK/stats.json" "$@" 2>"$WORK/service.log" &
  SERVICE_PID=$!
  for _ in $(seq 100); do
    [ -s "$WORK/port" ] && break
    kill -0 "$SERVICE_PID" 2>/dev/null || { cat "$WORK/service.log" >&2; echo "FAIL: the service did not start" >&2; exit 1; }
    sleep 0.1
  done
  PORT="$(cat "$WORK/port")"
}

run_twice() {  # PROFILE: twice's exit status in $STATUS, its output in $WORK/out
  STATUS=0
  "$TWICE" run --endpoint "http://127.0.0.1:$PORT/notify" --db "$WORK/shop.sqlite" \
    --oracle "$SRC/examples/blackbox-flask/oracle.toml" --keys-dir "$WORK/keys" --time-scale 1000 \
    --scenario "$SRC/tests/blackbox/signatures-$1.toml" --seeds "$RUNS" >"$WORK/out" 2>&1 || STATUS=$?
}

stat() { python3 -c "import json,sys; print(json.load(open('$WORK/stats.json')).get('$1', 0))"; }

for mode in stripe alipay wechat-v3 adyen paypal paypal-api; do
  profile="$mode"
  flags=()
  if [ "$mode" = paypal-api ]; then profile=paypal; flags=(--paypal-verify-api); fi
  start_service "${flags[@]}"
  run_twice "$profile"
  stop_service
  accepted="$(stat accepted)"
  refused="$(stat refused)"
  echo "$mode: twice exited $STATUS; the independent verifier accepted $accepted notifies and refused $refused"
  if [ "$STATUS" -ne 0 ]; then cat "$WORK/out" "$WORK/service.log"; echo "FAIL: $profile: twice found a violation or failed"; exit 1; fi
  [ "$refused" -eq $((RUNS * FORGED_PER_RUN)) ] ||
    { cat "$WORK/stats.json"; echo; echo "FAIL: $profile: $refused forged notifies refused, $((RUNS * FORGED_PER_RUN)) sent"; exit 1; }
  [ "$accepted" -ge "$RUNS" ] || { echo "FAIL: $profile: only $accepted genuine notifies accepted"; exit 1; }
  # PayPal's refusals are for the signature itself, not a certificate or API that could not be reached.
  case "$mode" in
    paypal) want="bad PayPal signature" ;;
    paypal-api) want="verify-webhook-signature: FAILURE" ;;
    *) want="" ;;
  esac
  if [ -n "$want" ]; then
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['reasons']; sys.exit(0 if r == {sys.argv[2]: int(sys.argv[3])} else 1)" \
      "$WORK/stats.json" "$want" $((RUNS * FORGED_PER_RUN)) ||
      { cat "$WORK/stats.json"; echo; echo "FAIL: $mode: the forged notifies were not all refused for their signature"; exit 1; }
  fi
done

# The forger's shop: verification off. twice must catch the forged credit.
start_service --accept-anything
run_twice stripe
stop_service
echo "stripe, verification off: twice exited $STATUS"
[ "$STATUS" -eq 1 ] && grep -q "unpaid_credit" "$WORK/out" ||
  { cat "$WORK/out"; echo "FAIL: a shop that trusts forged notifies was not caught"; exit 1; }
echo "PASS"
