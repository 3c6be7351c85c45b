#!/usr/bin/env python3
"""Renders docs/engines.md from the JSON of `twice run --engine all ... --json FILE`.

The table: each design (handler) on each scenario, one column per engine and
isolation level, the verdict twice observed. Below it, for every cell whose
verdict differs from SQLite's, the shrunk counterexample twice printed, with
its replay command: a Hermitage for payment callbacks. Called by
scripts/engines-table.sh; reads one JSON file, writes Markdown to stdout.
"""
import json
import sys


# What the table assumes of the servers, and how a run on a server of yours
# replays: the same words whatever the run found.
SERVERS = """## Which servers

The table is what twice's own servers give: the throwaway PostgreSQL and MariaDB servers it starts
from Debian's packages (Debian 12: PostgreSQL 15, MariaDB 10.11). A verdict on a server engine
depends on the server, so every report names the one its verdicts came from: its version, the
settings a verdict is known to depend on, and the `--engine-url` if there was one (`servers` in the
JSON report, a line under the matrix in the text, the Markdown and HTML headers, `server.<engine>`
properties in JUnit). So do the others: the second line of a `twice replay` on a server engine
(`# on the mariadb server 10.11.19-MariaDB-0+deb12u1, innodb_snapshot_isolation=OFF, started by
twice`), the `server` line of `twice stress`'s text and its JSON's `server`, and the messages of
`check_exactly_once()` and `check_run()` (`; ran on the postgres server ...`).

### MariaDB's `innodb_snapshot_isolation`

twice starts its MariaDB server with `--loose-innodb-snapshot-isolation=OFF`: OFF is 10.11's
default, which this table and `scenarios/expected.toml` were written for, and `--loose-` lets a
server without the variable (before 10.6.18) start all the same. MariaDB 11.8 (Debian 13's
`mariadb-server`) has it ON by default, and then REPEATABLE READ is snapshot isolation, as on
PostgreSQL: a transaction that writes a row another one committed after its snapshot gets error 1020
("Record has changed since last read"), and InnoDB rolls the whole transaction back. twice takes
1020 for what it is, a serialization failure: `SERIALIZATION FAILURE:` in the trace, and
`status.is_serialization()` and `status.is_retryable()` in a handler, as PostgreSQL's 40001. So with
it ON, check-in-txn and rmw-in-txn at mariadb/repeatable-read no longer double-credit or lose
updates: their second writer gets 1020, and rmw-in-txn runs its transaction again while check-in-txn
answers 500 for the gateway to retry.

A run on `--engine-url` uses the server's own setting (twice changes no global setting of a server
it did not start): on an 11.8 server with the default, those cells differ from the expected matrix,
and the reports say `innodb_snapshot_isolation=ON`. Set it OFF in that server's configuration to
hold it to this table, or keep your production's value to see what your production does.

### Replaying a run on a server of yours

The replay commands of a run on `--engine-url` name that URL (shell-quoted), so that the replay runs
on the same server: another server, or another version, can tell another story. A password is
never printed (reports are kept as CI artifacts, and CI logs are often public): the URL is printed
without it, and the command ends with a shell comment naming the variable the client library reads
it from instead, `PGPASSWORD` for PostgreSQL (libpq; a `~/.pgpass` entry works too) or `MYSQL_PWD`
for MariaDB (Connector/C). Set it, and paste the command as printed:

```sh
export MYSQL_PWD=...
twice replay --handler rmw-in-txn --scenario concurrent-topups --seed 3251949076933735 --shrunk --engine mariadb --isolation repeatable-read --engine-url mysql://app@db.internal/pay  # the URL's password is not printed: set MYSQL_PWD
```

The same holds for every error about the URL (a server that does not answer, a URL that does not
parse, a user without the rights a run needs) and for black-box mode's `--db`: the message names
the server as `user@host:port/db`, without the password, and what libpq or Connector/C says is shown
with any password the URL holds masked as `***` (libpq quotes a URI it cannot read whole, and reads
a port out of a password written with a `/` in it):

```
twice: --engine-url 'postgresql://app@db.internal/pay': cannot connect to PostgreSQL: invalid integer value "***" for connection option "port"
```

Write a password that holds `@`, `/`, `?`, `:` or `&` percent-encoded (`%40`, `%2F`, ...), or leave
it out of the URL and set the variable."""


def engine_of(scenario):
    name, _, engine = scenario.partition("@")
    return name, engine or "sqlite"


def verdict(cell):
    if not cell["violations"]:
        return "pass"
    return " + ".join(f"{v['name']} {v['failures']}/{cell['seeds_run']}" for v in cell["violations"])


def observed(cell):
    return sorted(v["name"] for v in cell["violations"])


def steps(counterexample):
    lines = []
    columns = counterexample["columns"]
    for row in counterexample["rows"]:
        who = columns[row["column"]].split(":")[0] if row["column"] < len(columns) else "?"
        text = row["text"] + (f" -> {row['result']}" if row["result"] else "")
        lines.append(f"    {row.get('time', ''):>10}  {who}  {text}")
    return lines


def main():
    data = json.load(open(sys.argv[1]))
    engines, scenarios = [], []
    for s in data["scenarios"]:
        name, engine = engine_of(s)
        if engine not in engines:
            engines.append(engine)
        if name not in scenarios:
            scenarios.append(name)
    cells = {(c["handler"], *engine_of(c["scenario"])): c for c in data["cells"]}
    out = [
        "# Designs × engines: the verdicts",
        "",
        "Generated by `bash scripts/engines-table.sh` (do not edit by hand): "
        f"`twice run --engine all`, {data['seeds']} seeds per cell, base seed {data['base_seed']}, "
        f"strategy {data['strategy']}. A cell reads `invariant k/n`: k of the n schedules broke it.",
        "",
        "| design | scenario | " + " | ".join(engines) + " |",
        "|---|---|" + "---|" * len(engines),
    ]
    divergent = []
    for handler in data["handlers"]:
        for scenario in scenarios:
            row = []
            base = cells.get((handler, scenario, "sqlite"))
            for engine in engines:
                cell = cells.get((handler, scenario, engine))
                row.append(verdict(cell) if cell else "")
                if cell and base and engine != "sqlite" and observed(cell) != observed(base):
                    divergent.append((handler, scenario, engine, cell))
            out.append(f"| {handler} | {scenario} | " + " | ".join(row) + " |")
    out += [""] + SERVERS.splitlines()
    out += ["", "## Where an engine changes the verdict", ""]
    if not divergent:
        out.append("Nowhere, at these seeds.")
    for handler, scenario, engine, cell in divergent:
        out.append(f"### {handler} × {scenario} on {engine}")
        out.append("")
        for v in cell["violations"]:
            cex = v["counterexample"]
            out.append(f"{v['name']}: {v['detail']} (shrunk to {cex['steps']} steps)")
            out.append("")
            out.append("```")
            out += steps(cex)
            out += [f"    {b}" for b in cex["balances"]]
            out.append("```")
            out.append("")
            out.append(f"Replay: `{cex['replay_shrunk']}`")
            out.append("")
        if not cell["violations"]:
            out.append("Passes here, where SQLite does not.")
            out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
