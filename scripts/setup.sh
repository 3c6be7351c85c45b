#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages) and builds twice into build/.
# Sourced by run-matrix.sh and test.sh; safe to run again: it installs and
# rebuilds only what changed.
#   TWICE_BUILD_DIR   build folder (default: build)
#   TWICE_EXTRA_PACKAGES  more Debian packages to ensure (space-separated)
#   TWICE_BUILD_TARGETS   ninja targets to build (space-separated; default: all)
#   TWICE_BUILD_LOG       write the build's output to this file instead of stderr
#                         (its last lines are shown if the build fails)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TWICE_BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  g++ cmake ninja-build pkg-config
  libsqlite3-dev libfmt-dev nlohmann-json3-dev
  libtomlplusplus-dev libcli11-dev libssl-dev
  libgtest-dev librapidcheck-dev libbenchmark-dev
  # the PostgreSQL engine: libpq to talk to it, the server twice starts for its runs and tests
  libpq-dev postgresql
  # the MariaDB engine: Connector/C, and the server twice starts for its runs and tests
  libmariadb-dev mariadb-server
  # black-box mode (`twice run --endpoint`): the HTTP client; the demo service and the
  # independent check of the wire formats' signatures (tests/blackbox)
  libcpp-httplib-dev python3-flask python3-cryptography
  # the demo service on PostgreSQL and on MariaDB (tests/blackbox/demo_engines_test.sh)
  python3-psycopg2 python3-pymysql
)
read -r -a EXTRA <<< "${TWICE_EXTRA_PACKAGES:-}"
PACKAGES+=("${EXTRA[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "twice: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
# Two cores on the reference machines: -j2 keeps memory and the other core sane.
read -r -a TARGETS <<< "${TWICE_BUILD_TARGETS:-}"
if [ -n "${TWICE_BUILD_LOG:-}" ]; then
  echo "twice: building ${TARGETS[*]:-everything} (log: $TWICE_BUILD_LOG)" >&2
  ninja -C "$BUILD_DIR" -j"${TWICE_JOBS:-2}" "${TARGETS[@]}" >"$TWICE_BUILD_LOG" 2>&1 ||
    { tail -40 "$TWICE_BUILD_LOG" >&2; echo "twice: the build failed ($TWICE_BUILD_LOG)" >&2; exit 1; }
else
  ninja -C "$BUILD_DIR" -j"${TWICE_JOBS:-2}" "${TARGETS[@]}" >&2
fi
