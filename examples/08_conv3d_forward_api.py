"""Example 8: drive the Conv3D forward high-level API by hand on one core, and watch one Iterate.

The calls a kernel developer writes for the Ascend C Conv3D API (Init, SetWeight, SetBias, SetInputStartPosition,
SetInput, Iterate, GetTensorC, End), on one simulated core for a small convolution with a bias. A hook prints the
instructions of the first Iterate: the feature map into L1 and by LoadData 3Dv2 (img2col) into L0A, the weight by
LoadData 2D straight from GM into L0B (BL1 bypassed), the bias GM -> L1 -> BT, and the first Mmad starting from the
bias table. The result is checked against the numpy reference.

    python examples/08_conv3d_forward_api.py [--dtype float16|bfloat16|float32] [--quiet]
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import GlobalTensor
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0, ndc1hwc0_to_ncdhw
from ascend_sim.machine.tensor import GmAddr
from kernels.conv3d_v2.kernel.api import Conv3D
from kernels.conv3d_v2.kernel.conv3d_v2 import decode_tiling_key
from kernels.conv3d_v2.reference import conv3d_reference
from tiling.conv3d_v2 import conv3d_v2_tiling

# x (N, Cin, D, H, W), weight (Cout, Cin, kD, kH, kW): a 2x3x3 convolution with H/W pads and a bias
X, W, PADS = (1, 20, 3, 8, 10), (24, 20, 2, 3, 3), (0, 0, 1, 1, 1, 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    parser.add_argument("--quiet", action="store_true", help="do not print the instructions")
    args = parser.parse_args(argv)
    dtype = DTYPES[args.dtype]
    bias_dtype = dtype if args.dtype == "float16" else np.dtype(np.float32)  # DTYPE_BIAS
    rng = np.random.default_rng(0)
    x = rng.standard_normal(X).astype(dtype)
    weight = rng.standard_normal(W).astype(dtype)
    bias = rng.standard_normal(W[0]).astype(dtype)

    # The host side: the tiling; then one core does the whole problem (singleCore* = the whole output).
    tiling = conv3d_v2_tiling(X, W, pads=PADS, dtype=args.dtype, bias=True)
    t = tiling.convApiTiling
    n, cout, do, ho, wo = X[0], W[0], t.orgDo, t.orgHo, t.orgWo
    t = t.model_copy(update={"singleCoreDo": do, "singleCoreM": ho * wo, "singleCoreCo": cout})
    l0pingpong, bl1bypass, _, _ = decode_tiling_key(tiling.tiling_key)
    print(f"tiling key {tiling.tiling_key}: mL0 {t.mL0}, kL0 {t.kL0}, nL0 {t.nL0}, kAL1 {t.kAL1}, L0 ping-pong mode "
          f"{l0pingpong}, BL1 bypass {bl1bypass}")

    watching = {"on": not args.quiet, "run": []}  # the current run of one instruction from one source line

    def flush():
        run = watching["run"]
        if run:
            first, last = run[0], run[-1]
            times = f" x{len(run)}" if len(run) > 1 else ""
            print(f"  {first.pipe.name:>4} {first.name + times:<21} cycles [{first.start:6.0f}, {last.end:6.0f})  "
                  f"{first.source}")
        watching["run"] = []

    def watch(core, instr):
        if not watching["on"]:
            return
        run = watching["run"]
        if run and (run[-1].name, run[-1].source) != (instr.name, instr.source):
            flush()
        watching["run"].append(instr)
        if instr.name == "Fixpipe":  # the end of the first block: stop printing
            flush()
            watching["on"] = False

    chip = Chip("Ascend910B2", hooks=[watch])
    c0 = 32 // dtype.itemsize
    x_gm = GmAddr(chip.gm.upload("x", ncdhw_to_ndc1hwc0(x)))
    w_gm = GmAddr(chip.gm.upload("filter", filter_to_fractal_z_3d(weight)))
    b_gm = GmAddr(chip.gm.upload("bias", bias.astype(bias_dtype)))
    y_buf = chip.gm.alloc("y", n * do * -(-cout // c0) * ho * wo * c0 * dtype.itemsize)

    def kernel():
        conv = Conv3D(dtype, dtype, dtype, bias_dtype, l0pingpong, bl1bypass)
        conv.Init(t)
        conv.SetWeight(GlobalTensor(dtype).SetGlobalBuffer(w_gm))
        conv.SetBias(GlobalTensor(bias_dtype).SetGlobalBuffer(b_gm))
        conv.SetInputStartPosition(0, 0)  # first output depth (times strideD), first output pixel
        conv.SetInput(GlobalTensor(dtype).SetGlobalBuffer(x_gm))
        y = GlobalTensor(dtype).SetGlobalBuffer(GmAddr(y_buf))
        conv.IterateAll(y)  # = while conv.Iterate(): conv.GetTensorC(y)
        conv.End()

    # IterateAll loads the whole bias into L1 once (biasFullLoadFlag), then runs Iterate / GetTensorC per block
    report = chip.launch(kernel, 1)
    got = ndc1hwc0_to_ncdhw(y_buf.data.view(dtype).reshape(n, do, -(-cout // c0), ho, wo, c0), cout)
    expect = conv3d_reference(x, weight, bias, (1, 1, 1), PADS)
    err = float(np.abs(got.astype(np.float64) - expect).max() / np.abs(expect).max())
    verdict = "PASSED" if err < 1e-2 else "FAILED"
    print(f"y {got.shape} against the numpy reference: {verdict} (max error {err:.2e} of max |y|); "
          f"{report.instructions} instructions, {report.cycles:,.0f} cycles on one core")
    return 0 if verdict == "PASSED" else 1


if __name__ == "__main__":
    raise SystemExit(main())
