# Shared by the black-box shell tests (sourced, after `set -euo pipefail`).
#
# Debian's python3 first: it is the one that sees the packages scripts/setup.sh
# installs (python3-flask, -cryptography, -psycopg2, -pymysql); a python3 of
# pyenv or a virtualenv earlier on PATH would not.
[ -x /usr/bin/python3 ] && export PATH="/usr/bin:$PATH"

# make_work NAME: a fresh folder for one test, on tmpfs where there is one
# (SQLite syncs every commit, which costs more than the runs on a disk).
make_work() {
  local parent="${TMPDIR:-/tmp}"
  [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && parent=/dev/shm
  mktemp -d "$parent/twice-blackbox-$1.XXXXXX"
}

# The service a test started in the background, stopped by stop_service.
SERVICE_PID=""
stop_service() {
  if [ -n "$SERVICE_PID" ]; then
    kill "$SERVICE_PID" 2>/dev/null || true
    wait "$SERVICE_PID" 2>/dev/null || true
    SERVICE_PID=""
  fi
}
