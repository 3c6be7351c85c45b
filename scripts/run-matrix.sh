#!/usr/bin/env bash
# The main job: every handler against every bundled scenario, reports written
# to twice-report/. Installs and builds what is missing first. Extra arguments
# go to `twice run` (try --help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
mkdir -p twice-report
exec "$BUILD_DIR/twice" run --json twice-report/twice-report.json "$@"
