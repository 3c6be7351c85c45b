# Throwaway database servers for the black-box shell tests, sourced: a
# PostgreSQL or MariaDB server of its own in a folder under $1, listening
# only on a Unix socket there (no TCP), nothing durable, run as an
# unprivileged user when the test runs as root (CI does): `postgres` for
# PostgreSQL, which refuses root; MariaDB switches to `mysql` itself.
# The same settings as the C++ engines' throwaway servers
# (harness/engine/postgres_server.cpp, mariadb_server.cpp).
#   start_postgres DIR  -> DB_URL=postgres://postgres@/postgres?host=DIR/pg
#   start_mariadb DIR   -> DB_URL=mysql://root@localhost/shop?socket=DIR/maria/sock
#   stop_db             stops whichever was started; safe to call twice (the
#                       caller's EXIT trap calls it on every exit path)
DB_KIND=""
DB_DIR=""
DB_PID=""

# The newest installed PostgreSQL's program NAME.
pg_program() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -1)"
  [ -n "$found" ] && { echo "$found"; return; }
  command -v "$1" || { echo "FAIL: PostgreSQL's $1 not found; install postgresql (scripts/setup.sh does)" >&2; return 1; }
}

as_db_user() {  # USER CMD...: CMD as USER when we are root
  local user="$1"; shift
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

start_postgres() {
  local initdb pg_ctl
  initdb="$(pg_program initdb)" && pg_ctl="$(pg_program pg_ctl)" || return 1
  DB_KIND=postgres
  DB_DIR="$1/pg"
  mkdir -p "$DB_DIR"
  chmod 755 "$1"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$DB_DIR"
  as_db_user postgres "$initdb" -D "$DB_DIR/data" -U postgres -A trust -E UTF8 >"$DB_DIR/initdb.log" 2>&1 ||
    { cat "$DB_DIR/initdb.log" >&2; echo "FAIL: initdb failed" >&2; return 1; }
  as_db_user postgres "$pg_ctl" -D "$DB_DIR/data" -l "$DB_DIR/server.log" -w -t 60 \
    -o "-k $DB_DIR -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
    start >/dev/null ||
    { cat "$DB_DIR/server.log" >&2; echo "FAIL: PostgreSQL did not start" >&2; return 1; }
  DB_URL="postgres://postgres@/postgres?host=$DB_DIR"
}

start_mariadb() {
  local install mariadbd
  install="$(command -v mariadb-install-db || command -v mysql_install_db)" &&
    mariadbd="$(command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd 2>/dev/null)" ||
    { echo "FAIL: mariadb-install-db or mariadbd not found; install mariadb-server (scripts/setup.sh does)" >&2; return 1; }
  DB_KIND=mariadb
  DB_DIR="$1/maria"
  # A temporary folder of its own: servers bootstrapped at once in one /tmp
  # collide on their temporary tables' names ("Unknown table
  # 'mysql.tmp_user_sys'", about one start in five with four at once).
  mkdir -p "$DB_DIR/tmp"
  local user_flag=()
  [ "$(id -u)" -eq 0 ] && user_flag=(--user=root)
  "$install" --no-defaults --datadir="$DB_DIR/data" --auth-root-authentication-method=normal --skip-test-db \
    --skip-name-resolve --tmpdir="$DB_DIR/tmp" "${user_flag[@]}" >"$DB_DIR/install.log" 2>&1 ||
    { cat "$DB_DIR/install.log" >&2; echo "FAIL: mariadb-install-db failed" >&2; return 1; }
  "$mariadbd" --no-defaults --datadir="$DB_DIR/data" --skip-networking --socket="$DB_DIR/sock" \
    --pid-file="$DB_DIR/mariadbd.pid" --log-error="$DB_DIR/server.log" --skip-log-bin --skip-name-resolve \
    --tmpdir="$DB_DIR/tmp" \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_bin --innodb-buffer-pool-size=64M \
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --performance-schema=OFF "${user_flag[@]}" \
    >/dev/null 2>&1 &
  DB_PID=$!
  for _ in $(seq 300); do
    [ -S "$DB_DIR/sock" ] && python3 -c "import pymysql,sys; pymysql.connect(unix_socket=sys.argv[1], user='root').cursor().execute('CREATE DATABASE IF NOT EXISTS shop')" "$DB_DIR/sock" 2>/dev/null && break
    kill -0 "$DB_PID" 2>/dev/null || { cat "$DB_DIR/server.log" >&2; echo "FAIL: MariaDB did not start" >&2; return 1; }
    sleep 0.1
  done
  DB_URL="mysql://root@localhost/shop?socket=$DB_DIR/sock"
}

stop_db() {
  case "$DB_KIND" in
    postgres) as_db_user postgres "$(pg_program pg_ctl)" -D "$DB_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true ;;
    mariadb)
      if [ -n "$DB_PID" ]; then
        kill "$DB_PID" 2>/dev/null || true
        wait "$DB_PID" 2>/dev/null || true
      fi ;;
  esac
  DB_KIND=""
  DB_PID=""
}
