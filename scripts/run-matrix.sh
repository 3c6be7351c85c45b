#!/usr/bin/env bash
# The main job: every handler against every bundled scenario, reports
# (Markdown, JSON, JUnit XML, HTML) written to twice-report/. Installs what
# is missing and builds the `twice` command alone first (not the tests and
# benchmarks), its output in build-twice.log. Extra arguments go to
# `twice run` (--help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TWICE_BUILD_TARGETS="${TWICE_BUILD_TARGETS:-twice}"
TWICE_BUILD_LOG="${TWICE_BUILD_LOG:-${TWICE_BUILD_DIR:-$ROOT/build}/build-twice.log}"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$BUILD_DIR/twice" run --report-dir twice-report "$@"
