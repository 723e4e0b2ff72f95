"""A mutation hunt on fault detection: does a plausible bug in a real kernel port get caught and named?

    python benchmarks/mutate_kernels.py --mutants 100 --seed 1 [--kernels dx dw forward dx950 matmul] [-v]

Per kernel: the lines its small problems run (a line trace on the exact engine), every mutation site on them
(benchmarks/kernel_mutants.py), --mutants of them drawn by seed round-robin over the kinds. Each mutant runs in a
forked process on every problem of its kernel on the exact, the default ("auto") and the replay engine, and is
classed:
  fault    a SimFault on some run (the engines must agree on the message: else "engines");
  wrong    a wrong result against the operator tests' oracle, no fault (a detection gap unless the hardware
           would run it silently too: docs/testing.md, "A mutation hunt on fault detection");
  same     every result right (an equivalent mutant on these problems);
  invalid  `+ 16` on a tensor, parameter struct or enum (a TypeError in the mutated file: not a kernel bug);
  crash    any other exception (a simulator bug: a traceback instead of a fault);
  hang     no end within --timeout seconds;
  engines  the engines disagree (results or fault messages).
Exit status 1 on a crash, hang or engine disagreement. The kernel files are never written.
"""
from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import os
import random
import signal
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests"), str(Path(__file__).resolve().parent)]

import torch  # noqa: E402

from ascend_sim.machine.faults import SimFault  # noqa: E402
from kernel_mutants import install, mutate, sites  # noqa: E402
from kernels import conv3d_backprop_input_v2_run, conv3d_v2_run  # noqa: E402
from kernels.matmul import MatmulTiling, run_matmul  # noqa: E402
from tests.dw_reference import dw_reference  # noqa: E402
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _problem as dw_operands  # noqa: E402
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _run as run_dw  # noqa: E402
from tests.kernels.conv3d_backprop_input import test_arch35_kernel as dx950  # noqa: E402
from tests.kernels.conv3d_backprop_input.test_conv3d_dx import BF16, F16, F32, RTOL, assert_close  # noqa: E402
from tests.kernels.conv3d_backprop_input.test_conv3d_dx import make_problem, torch_dx  # noqa: E402
from tests.kernels.conv3d_v2.test_conv3d_v2 import _check as check_forward  # noqa: E402
from tests.kernels.conv3d_v2.test_conv3d_v2 import _operands as forward_operands  # noqa: E402
from tests.kernels.matmul.test_matmul import assert_matmul_close  # noqa: E402

torch.set_num_threads(1)  # no OpenMP team in the parent: a forked child would wait on it forever
ENGINES = ("exact", "auto", "replay")
_ILL_TYPED = ("TypeError: unsupported operand type(s) for +",  # `+ 16` on a tensor, struct or enum, or a list:
              "TypeError: can only concatenate")  # not a kernel bug


def _dx(dtype, x, w, strides, pads, **kw):
    def run(engine):
        weight, dy = make_problem(dtype, x, w, strides, pads)
        r = conv3d_backprop_input_v2_run(x, weight, dy, strides=(1, 1, *strides), pads=pads, route="v2",
                                         data_format="NCDHW", filter_format="NCDHW", engine=engine, **kw)
        ref = torch_dx(x, weight, dy, strides, pads, (1, 1, 1), 1)
        return r, lambda: assert_close(r.result, ref, weight, dy, 1, RTOL[dtype])
    return run


def _dw(dtype, n, cin, cout, dhw, kernel, strides, pads):
    def run(engine):  # integer-valued operands: the fp32 sums are exact
        x, dy, w_shape = dw_operands(dtype, n, cin, cout, dhw, kernel, strides, pads)
        r, got = run_dw(x, dy, w_shape, strides, pads, (1, 1, 1), 1, engine=engine)
        expect = dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), strides, pads, (1, 1, 1), 1)
        return r, lambda: np.testing.assert_array_equal(got, expect.astype(np.float32))
    return run


def _forward(x_shape, w_shape, strides, pads, dtype):
    def run(engine):
        x, w, b = forward_operands(x_shape, w_shape, dtype, True)
        r = conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, engine=engine)
        return r, lambda: check_forward(r.result, x, w, b, strides, pads)
    return run


def _dx950(dtype, n, cin, cout, dhw, kernel, strides, pads):
    def run(engine):
        rng = np.random.default_rng(0)
        do = tuple(dx950.out_size(dhw[i], kernel[i], strides[i], pads[2 * i], pads[2 * i + 1], 1) for i in range(3))
        dy = rng.uniform(-1, 1, (n, cout, *do)).astype(dtype)
        w = rng.uniform(-1, 1, (cout, cin, *kernel)).astype(dtype)
        r = conv3d_backprop_input_v2_run((n, cin, *dhw), w, dy, strides=(1, 1, *strides), pads=pads, route="v2",
                                         data_format="NCDHW", filter_format="NCDHW", platform=dx950.PLATFORM,
                                         engine=engine)
        ref, bound = dx950.dx_reference((n, cin, *dhw), w, dy, strides, pads, (1, 1, 1), 1)
        return r, lambda: dx950.check(dtype, r.result, ref, bound)
    return run


def _matmul(m, n, k, **tiling):
    def run(engine):
        rng = np.random.default_rng(m + n + k)
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        r = run_matmul(a, b, tiling=MatmulTiling(m, n, k, **tiling), engine=engine, poison_output=True)
        return r, lambda: assert_matmul_close(r.result, a.astype(np.float64) @ b.astype(np.float64), k)
    return run


def _files(folder: str, *names: str) -> list[str]:
    skip = {"__init__.py", "replay_keys.py"}
    return [f"{folder}/{n}.py" for n in names] or sorted(
        str(p.relative_to(_ROOT)) for p in (_ROOT / folder).glob("*.py") if p.name not in skip)


KERNELS = {  # kernel: (its module files, {problem: run(engine) -> (Run, check)})
    "dx": (_files("kernels/conv3d_backprop_input/kernel/arch22", "api", "load_a", "load_b", "store_c", "vec_post",
                  "drivers", "init_output", "conv3d_backprop_input_v2"),
           {"MIX fp16 NCDHW": _dx(F16, (1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1,) * 6),
            "fp32 14 cores, stride 2": _dx(F32, (2, 20, 3, 7, 5), (18, 20, 2, 3, 3), (1, 2, 2), (1, 0, 1, 0, 1, 1)),
            "MIX bf16 M tail": _dx(BF16, (2, 20, 3, 7, 12), (24, 20, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1),
                                   tiling_overrides={"baseM": 48})}),
    "dw": (_files("kernels/conv3d_backprop_filter/kernel"),
           {"fp16 8 cores": _dw(F16, 1, 16, 16, (2, 6, 6), (1, 3, 3), (1, 1, 1), (0,) * 6),
            "bf16 stride 2": _dw(BF16, 2, 20, 24, (3, 7, 9), (2, 3, 2), (1, 2, 2), (1, 1, 1, 1, 0, 0))}),
    "forward": (_files("kernels/conv3d_v2/kernel"),
                {"fp16 pads": _forward((1, 5, 4, 6, 7), (7, 5, 2, 3, 3), (1, 1, 1), (1, 0, 1, 2, 0, 1), np.float16),
                 "fp32 L0 ping-pong": _forward((1, 16, 4, 12, 12), (32, 16, 3, 3, 3), (1, 1, 1), (1,) * 6,
                                               np.float32)}),
    "dx950": (_files("kernels/conv3d_backprop_input/kernel/arch35"),
              {"fp16 stride 2": _dx950(np.float16, 2, 20, 12, (3, 8, 7), (3, 3, 3), (2, 2, 2), (1,) * 6),
               "fp32 pad 1": _dx950(np.float32, 1, 16, 16, (3, 6, 10), (3, 3, 3), (1, 1, 1), (1,) * 6)}),
    "matmul": (["kernels/matmul/kernel/matmul_kernel.py", "kernels/matmul/__init__.py"],
               {"tails": _matmul(48, 32, 80, baseM=16, baseN=32, baseK=32, stepK=2),
                "9 cores": _matmul(160, 176, 272, baseM=64, baseN=64, baseK=64, stepK=3)}),
}


class Hang(BaseException):
    pass


def _hang(*_):
    raise Hang()


def _outcome(run, engine, right: str | None, timeout: int) -> dict:
    """One run: its result's SHA-1 and whether it is right, or the fault, exception or hang."""
    signal.alarm(timeout)
    digest = None
    try:
        r, check = run(engine)
        digest = hashlib.sha1(np.ascontiguousarray(r.result).tobytes()).hexdigest()
        if digest != right:
            check()
        return {"o": "right", "h": digest}
    except Hang:
        return {"o": "hang"}
    except AssertionError as e:
        return {"o": "wrong", "h": digest, "m": str(e)[:200]}
    except SimFault as e:
        return {"o": "fault", "m": str(e), "fields": [e.core, e.pipe, e.instruction, e.buffer, e.addr_range, e.source]}
    except Exception as e:  # noqa: BLE001 - what the hunt is for
        last = traceback.extract_tb(e.__traceback__)[-1]
        return {"o": "crash", "m": f"{type(e).__name__}: {str(e)[:200]}",
                "at": f"{os.path.relpath(last.filename, _ROOT)}:{last.lineno}"}
    finally:
        signal.alarm(0)


def _run_mutant(path: Path, site, problems: dict, right: dict, timeout: int) -> dict:
    """The mutant's outcomes per (problem, engine), from a forked process (the mutation dies with it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            install(str(path), mutate(ast.parse(path.read_text(), str(path)), site))
            out = {f"{name}/{engine}": _outcome(run, engine, right[name, engine], timeout)
                   for name, run in problems.items() for engine in ENGINES}
        except BaseException as e:  # noqa: BLE001
            out = {"harness": {"o": "crash", "m": repr(e), "at": ""}}
        os.write(write, json.dumps(out, default=str).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data) if data else {"harness": {"o": "crash", "m": "the child died", "at": ""}}


def classify(outcomes: dict, mutated_file: str) -> str:
    crashes = [o for o in outcomes.values() if o["o"] == "crash"]
    if crashes and all(o["at"].startswith(f"{mutated_file}:") and o["m"].startswith(_ILL_TYPED) for o in crashes):
        return "invalid"
    by_problem = collections.defaultdict(set)
    for key, o in outcomes.items():
        by_problem[key.split("/")[0]].add((o["o"], o.get("m") if o["o"] in ("fault", "crash") else o.get("h")))
    kinds = {o["o"] for o in outcomes.values()}
    for name in ("crash", "hang"):
        if name in kinds:
            return name
    if any(len(v) > 1 for v in by_problem.values()):
        return "engines"
    return "fault" if "fault" in kinds else "wrong" if "wrong" in kinds else "same"


def _covered(files: list[Path], problems: dict) -> dict:
    """{file: the lines the problems run} on the exact engine."""
    names, lines = {str(f) for f in files}, collections.defaultdict(set)

    def trace(frame, event, arg):
        if frame.f_code.co_filename not in names:
            return None

        def line(frame, event, arg):
            if event == "line":
                lines[frame.f_code.co_filename].add(frame.f_lineno)
            return line
        return line
    sys.settrace(trace)
    try:
        for run in problems.values():
            run("exact")
    finally:
        sys.settrace(None)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=60, help="mutants per kernel (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kernels", nargs="+", choices=list(KERNELS), default=list(KERNELS))
    parser.add_argument("--timeout", type=int, default=60, help="seconds before a run counts as a hang")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant, not only findings")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _hang)
    classes = ("fault", "wrong", "same", "invalid", "crash", "hang", "engines")
    print(f"{'kernel':8} {'sites':>6} " + " ".join(f"{c:>8}" for c in classes))
    failed = False
    for kernel in args.kernels:
        files, problems = KERNELS[kernel]
        paths = [_ROOT / f for f in files]
        lines = _covered(paths, problems)
        right = {(name, engine): _outcome(run, engine, None, args.timeout)["h"]
                 for name, run in problems.items() for engine in ENGINES}
        found = [(p, s) for p in paths for s in sites(ast.parse(p.read_text(), str(p)), lines[str(p)])]
        by_kind = collections.defaultdict(list)
        for p, s in found:
            by_kind[s.kind].append((p, s))
        rng = random.Random(f"{args.seed}/{kernel}")
        for pool in by_kind.values():
            rng.shuffle(pool)
        picked = []
        while len(picked) < min(args.mutants, len(found)):
            for kind in sorted(by_kind):
                if by_kind[kind] and len(picked) < args.mutants:
                    picked.append(by_kind[kind].pop())
        counts, report = collections.Counter(), []
        for p, s in picked:
            outcomes = _run_mutant(p, s, problems, right, args.timeout)
            c = classify(outcomes, str(p.relative_to(_ROOT)))
            counts[c] += 1
            if args.verbose or c in ("crash", "hang", "engines"):
                shown = [o for o in outcomes.values() if o["o"] == "fault"] or [o for o in outcomes.values()
                                                                                 if o["o"] != "right"]
                first = shown[0] if shown else {}
                report.append(f"  {c}: {p.relative_to(_ROOT)} {s}: {' '.join(first.get('m', '').split())[:300]}")
        print(f"{kernel:8} {len(found):6} " + " ".join(f"{counts[c]:8}" for c in classes))
        print("\n".join(report)) if report else None
        failed |= any(counts[c] for c in ("crash", "hang", "engines"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
