#!/usr/bin/env bash
# The whole test suite: unit, property (RapidCheck, fixed seed), regression,
# report (read back by real consumers: Chromium, cmark-gfm, xmllint, Mermaid's
# parser) and end-to-end tests. Installs and builds what is missing first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export TWICE_EXTRA_PACKAGES="${TWICE_EXTRA_PACKAGES:-} chromium cmark-gfm libxml2-utils python3"
source "$ROOT/scripts/setup.sh"

# Mermaid's own parser, pinned by tests/reports/mermaid_check/package-lock.json.
# It needs Node.js 20 or newer; without it the Mermaid test skips and says why.
MERMAID="$ROOT/tests/reports/mermaid_check"
if command -v npm >/dev/null 2>&1 && [ -f "$MERMAID/package-lock.json" ] && [ ! -d "$MERMAID/node_modules" ]; then
  npm ci --no-audit --no-fund --silent --prefix "$MERMAID" >&2 || echo "twice: npm ci failed; the Mermaid check will skip" >&2
fi

cd "$BUILD_DIR"
ctest -j2 --output-on-failure --timeout 600 "$@"
