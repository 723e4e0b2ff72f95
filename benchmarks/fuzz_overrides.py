"""Random tiling overrides on small problems of the 950 dx, dw and Conv3DV2: each must be refused before launch (a
ValueError / TypeError, the validator's TilingValidationError among them) or run and match the operator tests'
oracle. A simulator fault, a hang, a crash, a refusal after launch or a wrong result is a finding (the A2 dx has its
own property test: tests/tiling/conv3d_backprop_input/test_override_property.py).

    python benchmarks/fuzz_overrides.py --problems 300 --seed 5 [--operators dx950 forward] [--timeout 30]

Per problem: a random small problem, its generated tiling, then 1 to 3 of its knobs set to plausible values (twice
or half the generated one, multiples of 16) or edge ones (0, 1, one off, 2^20). Exit status 1 on any finding.
A known [SOURCE] over-read shows as a fault: the 950 kernel-split HW path reads up to wo - 1 elements past
out_backprop (docs/conv3d_backprop_input_arch35.md); it happens without overrides too.
"""
from __future__ import annotations

import argparse
import collections
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests")]  # this checkout's packages, and the oracles that live with the tests

from dw_reference import dw_reference  # noqa: E402

from ascend_sim import Chip  # noqa: E402
from ascend_sim.machine.dtypes import bfloat16, float16, float32  # noqa: E402
from ascend_sim.machine.faults import SimFault  # noqa: E402
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run  # noqa: E402
from kernels.common.tiling_reads import IgnoredOverrideWarning  # noqa: E402
from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35  # noqa: E402
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _problem as dw_operands  # noqa: E402
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _run as run_dw  # noqa: E402
from tests.kernels.conv3d_backprop_input import test_arch35_kernel as dx950  # noqa: E402
from tests.kernels.conv3d_v2.test_conv3d_v2 import _check as check_forward  # noqa: E402
from tests.kernels.conv3d_v2.test_conv3d_v2 import _operands as forward_operands  # noqa: E402

KNOBS = {
    "dx950": ("baseM baseN baseK stepKa stepKb al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer bl1Pbuffer singleCoreM "
              "singleCoreDin singleCoreBatch singleCoreCin singleCoreCout singleCoreGroup coreNum batchDim mDim nDim "
              "dDim groupDim kDim initOutputFlag enableVecTrans enableFullLoad enableSplitK singleIterateDk "
              "iterateOrder").split(),
    "dw": ("baseM baseN baseK stepM stepN stepKa stepKb al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer bl1Pbuffer "
           "iterateOrder bl1Bound singleCoreDk singleCoreGroup singleCoreCout singleCoreHo singleCoreBatch "
           "singleCoreCin batchDim groupDim mDim kDim nDim dkDim coreBindOrder").split(),
    "forward": ("mL0 kL0 nL0 kAL1 kBL1 nBL1 mAL1 hoL0 woL0 hoL1 woL1 singleCoreM singleCoreCo singleCoreDo "
                "singleCoreBatch singleCoreHo singleCoreWo pBufferFlag iterateMNOrder bl1FullLoad al1FullLoad batchDim "
                "doDim mDim nDim groupDim hoDim wDim").split(),
}
PLAIN, FINDINGS = ("ran right", "refused"), ("fault", "hang", "crash", "refused after launch", "wrong")


class Hang(BaseException):
    """The run took longer than --timeout (a kernel loop that never ends)."""


def _value(rng, generated: int) -> int:
    if rng.random() < 0.6:
        options = [generated * 2, max(1, generated // 2), generated + 16, max(16, generated - 16),
                   16 * int(rng.integers(1, 9)), int(rng.integers(1, 5))]
    else:
        options = [0, 1, generated + 1, max(0, generated - 1), 3, 2 ** 20, 2]
    return int(options[int(rng.integers(len(options)))])


def _problem(rng):
    """(dtype, n, cin, cout, (D, H, W), kernel, strides, pads, groups): small, pads inside the kernel."""
    dtype = np.dtype((float16, bfloat16, float32)[int(rng.integers(3))])
    groups = 1 if rng.random() < 0.75 else int(rng.integers(2, 4))
    cin, cout = (groups * int(rng.integers(1, 24 // groups + 1)) for _ in range(2))
    kernel = tuple(int(rng.integers(1, 4)) for _ in range(3))
    strides = tuple(int(rng.integers(1, 3)) for _ in range(3))
    pads = tuple(int(rng.integers(0, kernel[i // 2])) for i in range(6))
    sizes = tuple(int(rng.integers(k, k + (3 if axis == 0 else 8))) for axis, k in enumerate(kernel))
    return dtype, int(rng.integers(1, 3)), cin, cout, sizes, kernel, strides, pads, groups


def _dy_shape(p) -> tuple:
    _, n, _, cout, sizes, kernel, strides, pads, _ = p
    return (n, cout, *((sizes[i] + pads[2 * i] + pads[2 * i + 1] - kernel[i]) // strides[i] + 1 for i in range(3)))


def _generated(op: str, p) -> dict:
    dtype, n, cin, cout, sizes, kernel, strides, pads, groups = p
    if op == "dx950":
        return plan_arch35((n, cin, *sizes), (cout, cin // groups, *kernel), _dy_shape(p), dx950.NAMES[dtype],
                           strides=strides, pads=pads, dilations=(1, 1, 1), groups=groups, data_format="NCDHW",
                           filter_format="NCDHW", platform=dx950.PLATFORM, enable_hf32=False).fields()
    if op == "dw":
        x, dy, w_shape = dw_operands(dtype, n, cin, cout, sizes, kernel, strides, pads, groups=groups)
        return conv3d_backprop_filter_v2_run(x, w_shape, dy, strides=(1, 1, *strides), pads=pads, groups=groups,
                                             data_format="NCDHW", execute=False).tiling.fields()
    x, w, b = forward_operands((n, cin, *sizes), (cout, cin // groups, *kernel), dtype, True)
    t = conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, groups=groups, execute=False).tiling
    return {**t.convApiTiling.model_dump(), **t.convRunInfo.model_dump()}


def _run_and_check(op: str, p, overrides: dict) -> None:
    """Run with the overrides and compare with the oracle (AssertionError when off)."""
    dtype, n, cin, cout, sizes, kernel, strides, pads, groups = p
    if op == "dx950":
        rng = np.random.default_rng(0)
        dy = rng.uniform(-1, 1, _dy_shape(p)).astype(dtype)
        w = rng.uniform(-1, 1, (cout, cin // groups, *kernel)).astype(dtype)
        run = conv3d_backprop_input_v2_run((n, cin, *sizes), w, dy, strides=(1, 1, *strides), pads=pads,
                                           groups=groups, data_format="NCDHW", platform=dx950.PLATFORM, route="v2",
                                           tiling_overrides=overrides)
        ref, bound = dx950.dx_reference((n, cin, *sizes), w, dy, strides, pads, (1, 1, 1), groups)
        dx950.check(dtype, run.result, ref, bound)
    elif op == "dw":  # integer-valued operands: the fp32 sums are exact
        x, dy, w_shape = dw_operands(dtype, n, cin, cout, sizes, kernel, strides, pads, groups=groups, ints=True)
        _, got = run_dw(x, dy, w_shape, strides, pads, (1, 1, 1), groups, tiling_overrides=overrides)
        expect = dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), strides, pads, (1, 1, 1), groups)
        np.testing.assert_array_equal(got, expect.astype(np.float32))
    else:
        x, w, b = forward_operands((n, cin, *sizes), (cout, cin // groups, *kernel), dtype, True)
        run = conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, groups=groups, tiling_overrides=overrides)
        check_forward(run.result, x, w, b, strides, pads, (1, 1, 1), groups)


def _outcome(op: str, p, overrides: dict, launched: list, timeout: int) -> tuple[str, str]:
    launched.clear()
    signal.alarm(timeout)
    try:
        _run_and_check(op, p, overrides)
        return "ran right", ""
    except Hang:
        return "hang", f"no end after {timeout} s"
    except (ValueError, TypeError) as err:
        return ("refused after launch" if launched else "refused"), f"{type(err).__name__}: {err}"
    except SimFault as err:
        return "fault", f"{type(err).__name__}: {err}"
    except AssertionError as err:
        return "wrong", str(err)
    except Exception as err:  # noqa: BLE001 - the fuzzer's job is to report it
        return "crash", f"{type(err).__name__}: {err}"
    finally:
        signal.alarm(0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=100, help="problems per operator (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--operators", nargs="+", choices=list(KNOBS), default=list(KNOBS))
    parser.add_argument("--timeout", type=int, default=60, help="seconds before a run counts as a hang")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", IgnoredOverrideWarning)  # an override the kernel never reads is no finding
    launched = []
    launch = Chip.launch

    def counting_launch(self, *a, **kw):  # a refusal must come before this
        launched.append(True)
        return launch(self, *a, **kw)
    Chip.launch = counting_launch

    def hang(*_):
        raise Hang()
    signal.signal(signal.SIGALRM, hang)
    failed = False
    print(f"{'operator':10} {' '.join(f'{name:>9}' for name in PLAIN + FINDINGS)} {'seconds':>8}")
    for op in args.operators:
        rng = np.random.default_rng([args.seed, list(KNOBS).index(op)])
        counts, details, start = collections.Counter(), [], time.perf_counter()
        for _ in range(args.problems):
            p = _problem(rng)
            try:
                generated = _generated(op, p)
            except ValueError:
                continue  # the problem itself is refused: nothing to override
            names = rng.choice(KNOBS[op], int(rng.integers(1, 4)), replace=False)
            overrides = {str(name): _value(rng, generated[name]) for name in names if name in generated}
            outcome, detail = _outcome(op, p, overrides, launched, args.timeout)
            counts[outcome] += 1
            if outcome in FINDINGS:
                was = {name: generated[name] for name in overrides}
                details.append(f"  {outcome}: {op} {p[0].name} n={p[1]} cin={p[2]} cout={p[3]} dhw={p[4]} "
                               f"kernel={p[5]} strides={p[6]} pads={p[7]} groups={p[8]} overrides {overrides} "
                               f"(generated {was}): {detail[:300]}")
        print(f"{op:10} {' '.join(f'{counts[name]:9}' for name in PLAIN + FINDINGS)} "
              f"{time.perf_counter() - start:8.1f}")
        for line in details:
            print(line)
        failed |= bool(details)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
