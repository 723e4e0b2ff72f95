"""Issue 22's two start-up targets, measured on fresh processes:

- `ascend-sim --help` and each command's --help: under 0.3 s each (wall, best of --repeat), next to a bare
  `python -c pass` for the interpreter's own start;
- the default `ascend-sim conv3d-dx` run: the process's wall time from start to exit (imports, the operands, the
  simulation, the reference check, the exit) within 1.5x of the simulation time it prints ("simulated in"). Each
  run's process wall, its printed simulation and check times, the ratio wall / simulation and the process's CPU
  time (user + system, all its threads: less disturbed by other load than the wall), whether the check ran
  alongside the simulation (only with a core to spare: frontends/cli/reference_alongside.py; conv3d-dx's early
  operand draw follows the same rule), the best run (the lowest ratio) and the median ratio of --repeat, and the
  load average before and after. With --against DIR, the same for
  another checkout (e.g. main's) in alternation, process by process, so that both see the same load.

Bytecode caches are allowed (PYTHONDONTWRITEBYTECODE is dropped for the children, and one unmeasured run writes
them): an installed package has them, and compiling ~190 modules from source would add ~0.3 s to every start.

    python benchmarks/bench_cli_startup.py [--repeat 5] [--skip-help] [--skip-run] [--against DIR]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [[], ["conv3d-dx"], ["conv3d-dw"], ["conv3d"], ["conv-backward"], ["matmul"], ["tiling"],
            ["tiling", "conv3d-dx"], ["debug"], ["debug", "conv3d-dx"], ["debug", "conv-backward"], ["sweep"]]
CLI = [sys.executable, "-m", "frontends.cli"]
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
SUMMARY = re.compile(r"simulated in ([0-9.]+) s .*?; reference check ([0-9.]+) s( alongside it)?")


def timed(argv: list[str], tree: Path = ROOT) -> tuple[float, str]:
    """(wall seconds from the process's start to its exit, its stdout), run in the checkout `tree`."""
    return timed_with_cpu(argv, tree)[:2]


def timed_with_cpu(argv: list[str], tree: Path = ROOT) -> tuple[float, str, float]:
    """(wall seconds from the process's start to its exit, its stdout, its CPU seconds: user + system), run in the
    checkout `tree` (`python -m frontends.cli` imports the checkout it is started in)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, run.stdout, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def best_of(argv: list[str], repeats: int) -> float:
    return min(timed(argv)[0] for _ in range(repeats))


def default_run(repeats: int, trees: list[Path]) -> None:
    for tree in trees:
        timed([*CLI, "conv3d-dx"], tree)  # writes the bytecode caches; not counted
    print(f"default `ascend-sim conv3d-dx`, {repeats} processes{' each, alternated' if len(trees) > 1 else ''}; "
          f"load average {os.getloadavg()[0]:.2f} before")
    rows = {tree: [] for tree in trees}
    for _ in range(repeats):
        for tree in trees:
            wall, out, cpu = timed_with_cpu([*CLI, "conv3d-dx"], tree)
            found = SUMMARY.search(out)
            if found is None:
                raise SystemExit(f"no 'simulated in ...; reference check ...' line in:\n{out}")
            simulation, check, alongside = float(found.group(1)), float(found.group(2)), bool(found.group(3))
            rows[tree].append((wall / simulation, wall, simulation, check, cpu, alongside))
    for tree in trees:
        if len(trees) > 1:
            print(f"{tree}:")
        print(f"  {'process wall':>12s} {'simulation':>10s} {'check':>6s} {'wall / simulation':>17s} "
              f"{'process CPU':>11s}  check alongside")
        for ratio, wall, simulation, check, cpu, alongside in rows[tree]:
            print(f"  {wall:10.2f} s {simulation:8.2f} s {check:4.2f} s {ratio:16.2f}x {cpu:9.2f} s  "
                  f"{'yes' if alongside else 'no (no core to spare)'}")
        ratio, wall, simulation, check, *_ = min(rows[tree])
        median = statistics.median(row[0] for row in rows[tree])
        print(f"  best: {wall:.2f} s wall for {simulation:.2f} s simulated (check {check:.2f} s): {ratio:.2f}x, "
              f"median {median:.2f}x (target 1.5x)")
    print(f"load average {os.getloadavg()[0]:.2f} after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-help", action="store_true", help="do not time the --help commands")
    parser.add_argument("--skip-run", action="store_true", help="do not time the default conv3d-dx run")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also time the default run in this checkout, alternating processes with this one")
    args = parser.parse_args()
    if not args.skip_help:
        print(f"{'python -c pass':<40s} {best_of([sys.executable, '-c', 'pass'], args.repeat):.3f} s")
        for words in COMMANDS:
            label = " ".join(["ascend-sim", *words, "--help"])
            print(f"{label:<40s} {best_of([*CLI, *words, '--help'], args.repeat):.3f} s")
    if not args.skip_run:
        default_run(args.repeat, [ROOT, args.against.resolve()] if args.against else [ROOT])


if __name__ == "__main__":
    main()
