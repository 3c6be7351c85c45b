#!/usr/bin/env bash
# The main job: every handler against every bundled scenario, reports
# (Markdown, JSON, JUnit XML, HTML) written to twice-report/. Installs and
# builds what is missing first. Extra arguments go to `twice run` (--help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$BUILD_DIR/twice" run --report-dir twice-report "$@"
