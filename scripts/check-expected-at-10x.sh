#!/usr/bin/env bash
# Does every cell of scenarios/expected.toml hold at ten times the default
# seeds? `twice run` checks the matrix at 100 seeds per cell (and so does the
# README's test command); a verdict that holds only at 100 would turn red for
# a user who raises --seeds with nothing changed. Run this once per change to
# expected.toml, a scenario or the harness; not in every CI run (about ten
# times the matrix's two minutes on two cores). Installs and builds first.
# Extra arguments go to `twice run` (e.g. --jobs 1, --handler H).
# Exit: 0 every cell holds at 1000 seeds; 1 some cell differs (listed);
# 2 bad input. docs/testing.md says what to do with a cell that differs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec nice "$BUILD_DIR/twice" run --seeds 1000 --no-report --quiet "$@"
