#!/usr/bin/env bash
# The whole test suite: unit, property (RapidCheck, fixed seed), regression and
# end-to-end tests. Installs and builds what is missing first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
ctest -j2 --output-on-failure --timeout 300 "$@"
