#!/usr/bin/env python3
"""Prints bench/README.md's before/after table (issue #12) from two Google
Benchmark JSON files, one benchmark run per side:

    BEFORE/bench/twice_bench --benchmark_filter="$F" --benchmark_min_time=1 \\
        --benchmark_out=before.json --benchmark_out_format=json
    AFTER/bench/twice_bench  ... --benchmark_out=after.json ...
    python3 bench/before_after.py before.json after.json

Several runs per side, comma-separated (before-1.json,before-2.json ...),
give each benchmark its fastest run of that side: on a machine whose speed
moves from minute to minute, alternate the sides and take each side's best.

with F='BM_SimulateOneSchedule|BM_SameStatementsOnOneConnection|BM_SeedDatabaseOnly|
BM_SchedulesPerSecond|BM_Floor|BM_Growth' (BM_Floor matches every floor, BM_FloorGrowth too). Each side's ratios compare
benchmarks of that side's one run. Times are CPU times of the one thread a
simulated run uses: on a machine others share, the figure least disturbed by
their load (real times are printed beside).
"""
import sys

from ratios import key, load  # noqa: E402  (same folder)


def cpu(b):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    return b["cpu_time"] * scale


def real(b):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    return b["real_time"] * scale


def t(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} us"


def main(before_path, after_path):
    sides = []
    for paths in (before_path, after_path):
        context, runs = {}, {}
        for path in paths.split(","):
            c, r, _ = load(path)
            context = context or c
            for name, b in r.items():
                if name not in runs or cpu(b) < cpu(runs[name]):
                    runs[name] = b
        sides.append((context, runs))

    def both(name):
        return [runs.get(name) for _, runs in sides]

    for (context, _), label in zip(sides, ("before", "after")):
        load_avg = ", ".join(f"{x:.1f}" for x in context.get("load_avg", []))
        print(f"<!-- {label}: {context.get('date', '?')}, load average {load_avg} -->")

    print("| benchmark | before: CPU (real) | after: CPU (real) | after / before |")
    print("|---|---|---|---|")

    def row(label, name, per_second=False):
        b, a = both(name)
        if not b or not a:
            print(f"| {label} | {'-' if not b else t(cpu(b))} | {'-' if not a else t(cpu(a))} | |")
            return
        extra = ""
        if per_second:
            extra = f"; {1 / cpu(b):,.0f} -> {1 / cpu(a):,.0f} per CPU-second"
        print(f"| {label} | {t(cpu(b))} ({t(real(b))}) | {t(cpu(a))} ({t(real(a))}) | "
              f"{cpu(a) / cpu(b):.2f}x{extra} |")

    row("floor: the schedule's statements, open connections, prepared, reset in place", "BM_Floor", True)
    row("floor: the same, the file held in memory as a run's is", "BM_FloorHeld", True)
    row("floor: the statements of the schedules the rate benchmark runs, held file", "BM_FloorSeeds", True)
    row("floor: those, plus the checker's oracle SQL", "BM_FloorSeedsChecked", True)
    row("floor: every statement SQLite stepped in those schedules, checked against the runs", "BM_FloorEverything", True)
    row("floor: the reset alone", "BM_FloorResetOnly", True)
    for scenario in ("concurrent_duplicates", "concurrent_topups", "sequential_duplicates"):
        row(f"one schedule, {scenario.replace('_', '-')} (seed 1, traced)",
            f"BM_SimulateOneSchedule/{scenario}", True)
    names = sorted({n for _, runs in sides for n in runs if n.startswith("BM_SchedulesPerSecond/")})
    for n in names:
        handler = n.split("/", 1)[1].replace("_cas", "+cas").replace("_", "-")
        row(f"schedules/s, {handler} x concurrent-duplicates (untraced)", n, True)

    print()
    print("| ratio to the floor (CPU) | before | after |")
    print("|---|---|---|")
    # A floor a side lacks (added after that revision) prints "-".
    for floor in ("BM_Floor", "BM_FloorHeld", "BM_FloorSeeds", "BM_FloorSeedsChecked", "BM_FloorEverything"):
        fb, fa = both(floor)
        for n in ("BM_SimulateOneSchedule/concurrent_duplicates", "BM_SchedulesPerSecond/unique_key_cas"):
            b, a = both(n)
            if not (b and a) or not (fb or fa):
                continue
            before = f"{cpu(b) / cpu(fb):.2f}x" if fb else "-"
            after = f"{cpu(a) / cpu(fa):.2f}x" if fa else "-"
            print(f"| {n} / {floor} | {before} | {after} |")

    print()
    print("| deliveries | spread before | spread after | burst before | burst after | steps (spread / burst) |")
    print("|---|---|---|---|---|---|")
    for n in (2, 8, 32, 128):
        sb, sa = both(f"BM_Growth/spread/{n}")
        bb, ba = both(f"BM_Growth/burst/{n}")
        cells = [t(cpu(x)) if x else "-" for x in (sb, sa, bb, ba)]
        steps = f"{sa['steps']:.0f} / {ba['steps']:.0f}" if sa and ba else "-"
        print(f"| {n} | " + " | ".join(cells) + f" | {steps} |")

    # The floor of each growth schedule (BM_FloorGrowth), where a side has it:
    # the schedule / its floor at each n says whether the simulator's own cost
    # grows faster than the statements'.
    if not any(both(f"BM_FloorGrowth/{m}/2")[i] for m in ("spread", "burst") for i in (0, 1)):
        return
    print()
    print("| deliveries | mode | floor before | floor after | schedule / floor before | schedule / floor after |")
    print("|---|---|---|---|---|---|")
    for mode in ("spread", "burst"):
        for n in (2, 8, 32, 128):
            fb, fa = both(f"BM_FloorGrowth/{mode}/{n}")
            gb, ga = both(f"BM_Growth/{mode}/{n}")
            ratio = lambda g, f: f"{cpu(g) / cpu(f):.2f}x" if g and f else "-"
            floors = [t(cpu(x)) if x else "-" for x in (fb, fa)]
            print(f"| {n} | {mode} | " + " | ".join(floors) + f" | {ratio(gb, fb)} | {ratio(ga, fa)} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
