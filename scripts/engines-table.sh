#!/usr/bin/env bash
# Regenerates docs/engines.md: the designs whose verdict depends on the engine
# and the isolation level, run by twice itself on SQLite and on the PostgreSQL
# and MariaDB servers it starts (every isolation level), with one counterexample per
# divergence. Installs and builds what is missing first. SEEDS=N to change
# the seeds per cell (default 100).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cd "$ROOT"
status=0
"$BUILD_DIR/twice" run --engine all --seeds "${SEEDS:-100}" --no-report -q --json "$out/engines.json" \
  --handler check-then-act --handler check-in-txn --handler select-for-update --handler cas \
  --handler unique-key+cas --handler read-modify-write --handler rmw-in-txn \
  --scenario concurrent-duplicates --scenario concurrent-topups >/dev/null || status=$?
# 1 only says some cell differs from expected.toml; the table shows which.
[ "$status" -le 1 ] || exit "$status"
python3 "$ROOT/scripts/engines_table.py" "$out/engines.json" > "$ROOT/docs/engines.md"
echo "wrote docs/engines.md" >&2
