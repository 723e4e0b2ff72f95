"""Benchmark: every real A2 dx tiling of hicann/ops-nn's UT run on the dx kernel, timing-only, on the replay engine.

    python benchmarks/bench_a2_dx_tilings.py [--workers 2] [--only NAME ...] [--engine replay]

The 23 cases of the Conv3DBackpropInputV2 tiling UT whose real tiling succeeds (tests/data/conv3d_dx_ut_cases_a2.json,
tests/dx_ut_cases.py) run at their real shapes, on their SoC with the UT's core count and buffer sizes, route v2,
with the UT's tiling forced field by field (every field and the key's template flags as tiling_overrides: the
launched blob is the UT's, checked before the run), timing-only (execute=False, no race checks, stand-in
operands); a case whose records the size guard refuses (kernels/common/size_guard.py: the two conv3d_dx_050_fp32,
about 30M instructions) runs with record=False on engine "auto", which streams the replay (each AI core's streams
scheduled once its Python has run, then dropped: ascend_sim/engine/streamed.py); with --engine exact or fast, on
the exact engine without records.
The two Conv3DTransposeV2 kernel-split shapes (its UT's Conv3d_transpose_binary_test_kernel_split and
_kernel_split2) are tried too, with the key's enableKernelSplit forced as the real host sets it: the A2 dx entry
refuses them by name (tests/kernels/conv3d_backprop_input/test_conv3d_dx_kernel_split.py), counted as refused.

Runs the cases on a pool of --workers processes, the smallest first (by dx elements times the kernel volume), so
that the long runs come last. The size guard's limit is a fraction of the memory available when the run starts,
so on a busy machine a case near it (conv3d_dx_bs16_net_ID_11) can fall back to the streamed replay; the last
column says which engine ran.
Prints per case the simulated instructions and cycles, the CPU seconds of the run (time.process_time in its
worker) and, at the end, the wall time of the whole and the CPU seconds summed.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_sim.machine.dtypes import DTYPES  # noqa: E402
from kernels.common.operands import stand_in  # noqa: E402
from kernels.common.size_guard import MemoryLimitError  # noqa: E402
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run  # noqa: E402
from kernels.common.tiling_reads import IgnoredOverrideWarning  # noqa: E402
from tests.dx_ut_cases import TILED, case_id, operator_arguments, real_overrides  # noqa: E402

# Conv3DTransposeV2's UT (conv/conv3d_transpose_v2/tests/ut/op_host/test_conv3d_transpose_v2_tiling.cpp), NDHWC
# data, DHWCN filter, bfloat16 on Ascend910B3 (20 cores): (dx, filter, dy) shapes, strides 2, pads 3
KERNEL_SPLIT = {
    "Conv3d_transpose_binary_test_kernel_split": ((1, 120, 128, 128, 256), (4, 4, 4, 256, 256), (1, 62, 66, 66, 256)),
    "Conv3d_transpose_binary_test_kernel_split2": ((1, 240, 256, 256, 3), (4, 4, 4, 3, 256), (1, 122, 130, 130, 256)),
}


def size(case: dict) -> int:
    """dx elements times the kernel volume: the order the cases are started in (smallest first)."""
    return math.prod(case["y_ori_shape"]) * math.prod(case["filter_ori_shape"][2:] if case["filter_ori_format"] ==
                                                      "NCDHW" else case["filter_ori_shape"][:3])


def run_case(name: str, engine: str) -> dict:
    """One UT case on the kernel with its real tiling: instructions, cycles, CPU seconds of the run."""
    case = next(c for c in TILED if case_id(c) == name)
    # every field is forced on purpose, also those the case's driver never reads
    warnings.simplefilter("ignore", IgnoredOverrideWarning)
    dtype = DTYPES[case["dtype"]]
    operands = stand_in(case["filter_ori_shape"], dtype), stand_in(case["out_backprop_ori_shape"], dtype)
    start = time.process_time()
    try:
        run = conv3d_backprop_input_v2_run(tuple(case["y_ori_shape"]), *operands, route="v2", execute=False,
                                           check_races=False, engine=engine, tiling_overrides=real_overrides(case),
                                           **operator_arguments(case))
        how = engine
    except MemoryLimitError:  # the records would not fit: keep none (auto streams the replay: engine/streamed.py)
        engine = "auto" if engine in ("replay", "auto") else "exact"
        start = time.process_time()
        run = conv3d_backprop_input_v2_run(tuple(case["y_ori_shape"]), *operands, route="v2", execute=False,
                                           check_races=False, engine=engine, record=False,
                                           tiling_overrides=real_overrides(case), **operator_arguments(case))
        how = f"{engine}, no records" + (" (streamed replay)" if engine == "auto" else "")
    report = run.report
    return {"name": name, "cpu": time.process_time() - start, "instructions": report.instructions,
            "cycles": report.cycles, "key": run.tiling.tiling_key, "cores": run.tiling.params.coreNum, "how": how}


def refusal(name: str) -> str:
    """Why the A2 dx entry refuses a Conv3DTransposeV2 kernel-split shape (raises if it does not)."""
    dx, weight, dy = KERNEL_SPLIT[name]
    try:
        conv3d_backprop_input_v2_run(dx, stand_in(weight, "bfloat16"), stand_in(dy, "bfloat16"),
                                     strides=(1, 2, 2, 2, 1), pads=(3,) * 6, data_format="NDHWC",
                                     filter_format="DHWCN", platform="Ascend910B3", route="v2", execute=False,
                                     check_races=False, tiling_overrides={"enableKernelSplit": 1})
    except ValueError as err:
        return " ".join(str(err).split())[:240]
    raise AssertionError(f"{name}: the A2 dx entry ran a kernel-split tiling")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine", default="replay", choices=("replay", "fast", "auto", "exact"))
    parser.add_argument("--only", nargs="*", help="run only the cases whose name contains one of these words")
    args = parser.parse_args(argv)
    names = [case_id(c) for c in sorted(TILED, key=size)
             if not args.only or any(word in case_id(c) for word in args.only)]
    print(f"{len(names)} real A2 dx tilings (UT), engine {args.engine}, {args.workers} worker(s), timing-only")
    print(f"{'case':44s} {'key':>4} {'cores':>5} {'instructions':>12} {'cycles':>12} {'CPU s':>8}  engine")
    start = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(args.workers) as pool:
        futures = {pool.submit(run_case, name, args.engine): name for name in names}
        for future in as_completed(futures):
            try:
                row = future.result()
            except Exception as err:  # noqa: BLE001 - a failing case is printed and counted, the others go on
                print(f"{futures[future]:44s} FAILED {type(err).__name__}: {' '.join(str(err).split())[:200]}")
                continue
            rows.append(row)
            print(f"{row['name']:44s} {row['key']:>4} {row['cores']:>5} {row['instructions']:>12,} "
                  f"{row['cycles']:>12,.0f} {row['cpu']:>8.2f}  {row['how']}", flush=True)
    wall = time.perf_counter() - start
    print(f"ran {len(rows)} of {len(names)} in {wall:.1f} s wall; CPU of the runs {sum(r['cpu'] for r in rows):.1f} s; "
          f"instructions {sum(r['instructions'] for r in rows):,}")
    for name in KERNEL_SPLIT:
        print(f"refused (Conv3DTransposeV2 kernel split): {name}: {refusal(name)}")


if __name__ == "__main__":
    main()
