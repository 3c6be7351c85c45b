#!/usr/bin/env python3
"""Prints the ratios of bench/README.md from one Google Benchmark JSON file.

    build-release/bench/twice_bench --benchmark_out=bench.json --benchmark_out_format=json
    python3 bench/ratios.py bench.json

Every figure comes from that one file, so the ratios compare benchmarks that
ran back to back on the same machine under the same load. Times are real
(wall-clock) times: the simulator and the stress mode run several threads.
"""
import json
import sys


def key(name):
    # "BM_X/case/min_time:2.000/real_time" -> "BM_X/case"
    parts = [p for p in name.split("/") if ":" not in p and p not in ("real_time", "manual_time")]
    return "/".join(parts)


def load(path):
    """Benchmark name -> result. With --benchmark_repetitions, the median of
    the repetitions; otherwise the single run."""
    with open(path) as f:
        data = json.load(f)
    runs, medians = {}, {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key(b["run_name"])] = b
        else:
            runs[key(b.get("run_name", b["name"]))] = b
    runs.update(medians)
    return data.get("context", {}), runs, bool(medians)


def seconds(b):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    return b["real_time"] * scale


def fmt_time(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def main(path):
    context, runs, median = load(path)
    rows = []

    def get(name):
        if name not in runs:
            sys.exit(f"ratios.py: {name} is missing from {path} (filtered out, or it failed)")
        return runs[name]

    # (a) simulator overhead: the whole run against the same statements on one
    # connection; both start from a copy of the seeded database, which
    # BM_SeedDatabaseOnly measures alone. The difference per statement is what
    # one scheduling point costs (fiber switch, latency draw, trace line).
    for scenario in ("concurrent_duplicates", "concurrent_topups", "sequential_duplicates"):
        sim = seconds(get(f"BM_SimulateOneSchedule/{scenario}"))
        raw_b = get(f"BM_SameStatementsOnOneConnection/{scenario}")
        raw = seconds(raw_b)
        seed = seconds(get(f"BM_SeedDatabaseOnly/{scenario}"))
        n = int(raw_b["statements"])
        rows.append(("(a) simulator overhead", scenario.replace("_", "-"),
                     f"{fmt_time(sim)} simulated vs {fmt_time(raw)} straight ({n} statements; "
                     f"set-up alone {fmt_time(seed)}); the simulator adds {fmt_time((sim - raw) / n)} per statement",
                     f"{sim / raw:.1f}x"))

    # (b) schedules per second per handler, relative to unique-key+cas
    base = get("BM_SchedulesPerSecond/unique_key_cas")["items_per_second"]
    for name, b in sorted(runs.items()):
        if name.startswith("BM_SchedulesPerSecond/"):
            handler = name.split("/", 1)[1].replace("_cas", "+cas").replace("_", "-")
            rows.append(("(b) schedules/s, one core", handler, f"{b['items_per_second']:.0f} schedules/s",
                         f"{b['items_per_second'] / base:.2f}x unique-key+cas"))

    # (c) time to first failure of check-then-act on concurrent-duplicates
    pct = get("BM_FirstFailureSimulated/pct")
    rnd = get("BM_FirstFailureSimulated/random")
    stress = get("BM_FirstFailureStress")
    rows.append(("(c) time to first double_credit", "pct (d=2)",
                 f"{fmt_time(seconds(pct))}, {pct['schedules_to_first']:.1f} schedules", "1x"))
    rows.append(("(c) time to first double_credit", "random",
                 f"{fmt_time(seconds(rnd))}, {rnd['schedules_to_first']:.1f} schedules",
                 f"{seconds(rnd) / seconds(pct):.1f}x pct"))
    rows.append(("(c) time to first double_credit", "stress, 8 threads",
                 f"{fmt_time(seconds(stress))} ({fmt_time(stress['rounds_s'])} of rounds), "
                 f"{stress['deliveries_to_first']:.0f} deliveries",
                 f"{seconds(stress) / seconds(pct):.1f}x pct"))

    # (d) real-thread throughput against the raw SQLite floor
    floor = get("BM_RawSqliteFloor")["items_per_second"]
    rows.append(("(d) stress throughput, 8 threads", "raw SQLite floor", f"{floor:.0f} deliveries/s", "1x"))
    for handler in ("unique_key", "cas", "unique_key_cas", "three_layer"):
        b = get(f"BM_StressThroughput/{handler}")
        rows.append(("(d) stress throughput, 8 threads", handler.replace("_cas", "+cas").replace("_", "-"),
                     f"{b['items_per_second']:.0f} deliveries/s", f"{b['items_per_second'] / floor:.2f}x floor"))

    load_avg = ", ".join(f"{x:.2f}" for x in context.get("load_avg", []))
    print(f"<!-- {path}: {context.get('date', '?')}, {context.get('num_cpus', '?')} CPUs, load average {load_avg}; "
          f"{'medians of the repetitions' if median else 'one repetition'} -->")
    print("| benchmark | case | measured | ratio |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
