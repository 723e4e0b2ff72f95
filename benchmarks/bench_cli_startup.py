"""Wall time of `ascend-sim --help` and each command's --help (issue 22's target: under 0.3 s each), best of 5
fresh interpreters, next to a bare `python -c pass` for the interpreter's own start.

    python benchmarks/bench_cli_startup.py
"""
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [[], ["conv3d-dx"], ["conv3d-dw"], ["conv3d"], ["conv-backward"], ["matmul"], ["tiling"],
            ["tiling", "conv3d-dx"], ["debug"], ["debug", "conv3d-dx"], ["debug", "conv-backward"], ["sweep"]]


def best_of(argv: list[str], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    print(f"{'python -c pass':<40s} {best_of([sys.executable, '-c', 'pass']):.3f} s")
    for words in COMMANDS:
        label = " ".join(["ascend-sim", *words, "--help"])
        print(f"{label:<40s} {best_of([sys.executable, '-m', 'frontends.cli', *words, '--help']):.3f} s")


if __name__ == "__main__":
    main()
