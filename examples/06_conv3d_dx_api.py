"""Example 6: drive the Conv3DBackpropInput high-level API by hand on one core, and watch it instruction by instruction.

The same calls a kernel developer writes in Ascend C (Init, SetSingleShape, SetStartPosition, SetGradOutput,
SetWeight, Iterate, GetTensorC, End), here on one simulated core for a small dx problem. A hook prints every
instruction of the first tile (pipe, start/end cycle, kernel source line) and shows L0C after the tile's last
Mmad; the result is checked against the numpy reference.

    python examples/06_conv3d_dx_api.py [--dtype float16|bfloat16|float32] [--quiet]
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import GlobalTensor, current_core
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0, ndc1hwc0_to_ncdhw
from ascend_sim.machine.tensor import GmAddr
from kernels.conv3d_backprop_input.kernel.arch22.api import Conv3DBackpropInput
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from tiling import conv3d_backprop_input_tiling

# dx (N, Cin, D, H, W), weight (Cout, Cin, kD, kH, kW): a 3x3x3 convolution with stride 2 in H and W
DX, W, STRIDES, PADS = (1, 32, 2, 8, 8), (16, 32, 1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    parser.add_argument("--quiet", action="store_true", help="do not print the instructions")
    args = parser.parse_args(argv)
    dtype = DTYPES[args.dtype]
    rng = np.random.default_rng(0)
    n, cin, di, hi, wi = DX
    dout, ho, wo = [(size + PADS[2 * i] + PADS[2 * i + 1] - k) // s + 1
                    for i, (size, k, s) in enumerate(zip(DX[2:], W[2:], STRIDES))]
    dy = rng.standard_normal((n, W[0], dout, ho, wo)).astype(dtype)
    weight = rng.standard_normal(W).astype(dtype)

    # The host side: the tiling, then one core does the whole problem (singleCore* = the whole shape).
    tiling = conv3d_backprop_input_tiling(dy.shape, W, DX, STRIDES, PADS, (1, 1, 1), 1, args.dtype)
    c0 = 32 // dtype.itemsize
    t = tiling.conv3DDxTiling.model_copy(update={"singleCoreM": hi * wi, "singleCoreDin": di,
                                                 "singleCoreCin1": -(-cin // c0), "singleCoreCin": cin})
    print(f"tiling: baseM {t.baseM}, baseK {t.baseK}, baseN {t.baseN}, stepKa {t.stepKa}, stepKb {t.stepKb}, "
          f"backprop pads up/down/left/right {t.backpropPadUp}/{t.backpropPadDown}/{t.backpropPadLeft}/"
          f"{t.backpropPadRight}")

    first_tile = {"done": False}

    def watch(core, instr):
        if first_tile["done"] or args.quiet:
            return
        print(f"  {instr.pipe.name:>4} {instr.name:<14} cycles [{instr.start:7.0f}, {instr.end:7.0f})  "
              f"{instr.source}")

    chip = Chip("Ascend910B2", hooks=[watch])
    dy_gm = GmAddr(chip.gm.upload("dy", ncdhw_to_ndc1hwc0(dy)))
    w_gm = GmAddr(chip.gm.upload("filter", filter_to_fractal_z_3d(weight)))
    y_buf = chip.gm.alloc("y", n * di * -(-cin // c0) * hi * wi * c0 * dtype.itemsize)

    def kernel():
        dedx = Conv3DBackpropInput(dtype, tiling.loadB2Condition)
        dedx.Init(t)
        dedx.SetSingleShape(hi * wi, t.dk * t.cout1 * t.hk * t.wk * c0, cin, di)  # M, K, N, D
        dedx.SetStartPosition(0, -t.backpropPadUp)  # first output depth, first dy row (may be negative)
        dedx.SetGradOutput(GlobalTensor(dtype).SetGlobalBuffer(dy_gm))
        dedx.SetWeight(GlobalTensor(dtype).SetGlobalBuffer(w_gm))
        y = GlobalTensor(dtype).SetGlobalBuffer(GmAddr(y_buf))
        while dedx.Iterate():  # one baseM x baseN tile of dx for one output depth, in L0C
            if not first_tile["done"]:  # L0C holds the tile in NZ: its first 16 floats are row 0, columns 0-15
                row0 = current_core().buffers["L0C"].data[:64].view(np.float32)
                print(f"tile (depth {dedx.curDinIdx}, m {dedx.curML0Idx}, n {dedx.curNL0Idx}) is in L0C; "
                      f"dx[0, 0:4, 0, 0, 0] = {np.round(row0[:4], 3)} (fp32, before Fixpipe rounds it)")
            dedx.GetTensorC(y)  # Fixpipe L0C -> GM (NDC1HWC0) with the dtype conversion
            first_tile["done"] = True
        dedx.End()

    report = chip.launch(kernel, 1)
    got = ndc1hwc0_to_ncdhw(y_buf.data.view(dtype).reshape(n, di, -(-cin // c0), hi, wi, c0), cin)
    expect = conv3d_dx_reference(dy, weight, DX, STRIDES, PADS)
    err = np.abs(got.astype(np.float64) - expect).max() / np.abs(expect).max()
    ok = err < {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5}[args.dtype]
    print(f"dx {DX} against the numpy reference: {'PASSED' if ok else 'FAILED'} (max error {err:.1e} of max |dx|)")
    print(report.summary())
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
