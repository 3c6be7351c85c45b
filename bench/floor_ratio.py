#!/usr/bin/env python3
"""Issue #12's ratio, a schedule of unique-key+cas x concurrent-duplicates
against BM_FloorEverything (every statement SQLite stepped in those schedules,
replayed prepared on open connections), as a statistic over several runs:

    python3 bench/floor_ratio.py build-release/bench/twice_bench
    python3 bench/floor_ratio.py BEFORE/bench/twice_bench AFTER/bench/twice_bench --runs 9
    python3 bench/floor_ratio.py build-release/bench/twice_bench --floor BM_Floor --floor BM_FloorEverything

Each run is one `twice_bench` process measuring both benchmarks back to back
(CPU time: a simulated run is one thread). The ratio is taken within each run,
so both sides of it saw the same machine; with two binaries the runs alternate
A, B, A, B ... On the shared 2-core machines the project is measured on, the
ratio of one run moves between about 1.0x and 3x (bench/README.md, sessions 14
to 16): read the median, not a single run. `--floor` (repeatable) names the
floors to divide by, all measured in the same runs; one row per binary and floor.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SCHEDULE = "BM_SchedulesPerSecond/unique_key_cas"
FLOORS = ("BM_Floor", "BM_FloorHeld", "BM_FloorSeeds", "BM_FloorSeedsChecked", "BM_FloorEverything")


def one_run(binary, min_time, floors):
    """CPU time per iteration, in microseconds, of the schedule and of each floor."""
    pattern = "|".join(f"{f}/" for f in floors) + f"|{SCHEDULE}/"
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    try:
        run = subprocess.run([binary, f"--benchmark_filter={pattern}", f"--benchmark_min_time={min_time}",
                              f"--benchmark_out={path}", "--benchmark_out_format=json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["no message"])[-1]
            sys.exit(f"floor_ratio.py: {binary} exited with {run.returncode} ({last}); is it twice_bench?")
        with open(path) as f:
            data = json.load(f)
    finally:
        os.unlink(path)
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    got = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"floor_ratio.py: {b['name']} failed in {binary}: {b.get('error_message', '?')}")
        name = b["name"].split("/real_time")[0].split("/min_time")[0]
        got[name] = b["cpu_time"] * scale[b.get("time_unit", "ns")]
    for name in (SCHEDULE, *floors):
        if name not in got:
            sys.exit(f"floor_ratio.py: {binary} did not report {name} (is it a twice_bench of this tree?)")
    return got[SCHEDULE], [got[f] for f in floors]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", metavar="TWICE_BENCH", help="one or two twice_bench binaries")
    parser.add_argument("--runs", type=int, default=9, help="runs per binary (default 9)")
    parser.add_argument("--min-time", type=float, default=1.0, help="--benchmark_min_time of each run (default 1)")
    parser.add_argument("--floor", action="append", choices=FLOORS, metavar="FLOOR",
                        help=f"a floor to divide by, repeatable (default BM_FloorEverything; one of {', '.join(FLOORS)})")
    args = parser.parse_args()
    floors = args.floor or ["BM_FloorEverything"]
    if len(args.binaries) > 2:
        parser.error("give one binary, or two to compare")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for b in args.binaries:
        if not os.access(b, os.X_OK):
            parser.error(f"{b} is not an executable file (build it: ninja -C build-release twice_bench)")

    results = {b: [] for b in args.binaries}
    for i in range(args.runs):
        for b in args.binaries:
            results[b].append(one_run(b, args.min_time, floors))
            sched, got = results[b][-1]
            print(f"run {i + 1}/{args.runs} of {b}: schedule {sched:.1f} us, "
                  + ", ".join(f"{name} {t:.1f} us" for name, t in zip(floors, got)), file=sys.stderr)

    print("| binary | floor | schedule: min / median | floor: min / median | schedule / floor per run, sorted | median ratio |")
    print("|---|---|---|---|---|---|")
    for b, runs in results.items():
        sched = [s for s, _ in runs]
        for k, name in enumerate(floors):
            floor = [f[k] for _, f in runs]
            ratios = sorted(s / f[k] for s, f in runs)
            print(f"| {b} | `{name}` | {min(sched):.1f} / {statistics.median(sched):.1f} us | "
                  f"{min(floor):.1f} / {statistics.median(floor):.1f} us | "
                  f"{' '.join(f'{r:.2f}' for r in ratios)} | **{statistics.median(ratios):.2f}x** |")


if __name__ == "__main__":
    main()
