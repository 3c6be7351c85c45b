#!/usr/bin/env bash
# Did a change to the server engines' statement loop keep every replay the
# same? Runs `twice replay` on PostgreSQL and MariaDB (each at the level where
# the design's verdict is interesting) for a few handler × scenario × seed,
# plain and --shrunk, with two twice binaries, and compares their outputs
# byte for byte. Each replay starts its own throwaway server.
#   scripts/engine-replays-same.sh BEFORE_TWICE AFTER_TWICE
set -euo pipefail
before=$1 after=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cases=(
  "check-in-txn concurrent-duplicates 6337990874401953"
  "rmw-in-txn concurrent-topups 3251949076933735"
  "select-for-update concurrent-duplicates 7"
  "unique-key+cas concurrent-duplicates 11"
  "cas concurrent-topups 3"
)
engines=("postgres read-committed" "postgres repeatable-read" "mariadb repeatable-read" "mariadb serializable")
status=0 compared=0
for c in "${cases[@]}"; do
  read -r handler scenario seed <<<"$c"
  for e in "${engines[@]}"; do
    read -r engine level <<<"$e"
    for shrunk in "" "--shrunk"; do
      args=(replay --handler "$handler" --scenario "$scenario" --seed "$seed" $shrunk --engine "$engine"
            --isolation "$level" --scenarios-dir "$root/scenarios")
      rc_b=0 rc_a=0
      "$before" "${args[@]}" >"$out/before" 2>&1 || rc_b=$?
      "$after" "${args[@]}" >"$out/after" 2>&1 || rc_a=$?
      compared=$((compared + 1))
      if [[ $rc_b != "$rc_a" ]] || ! cmp -s "$out/before" "$out/after"; then
        echo "DIFFERENT: twice ${args[*]} (exit $rc_b vs $rc_a)"
        diff "$out/before" "$out/after" | head -10 || true
        status=1
      else
        echo "same (exit $rc_a, $(wc -l <"$out/after") lines): $handler $scenario $seed $engine/$level $shrunk"
      fi
    done
  done
done
echo "$compared replays compared"
exit $status
