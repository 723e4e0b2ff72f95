"""Conv3DV2 (the forward 3D convolution) for Atlas A2, written against the simulated Ascend C API.

Modules, one job each (device code under kernel/):
- kernel/api.py           the high-level API class Conv3D (Init, SetInput/SetWeight/SetBias, SetSingleOutputShape,
                          SetInputStartPosition, Iterate, IterateAll, GetTensorC, End) with its loops and event protocols
- kernel/load_a.py        x GM -> L1 window (pads, depth planes) -> L0A by LoadData 3Dv2 (img2col)
- kernel/load_b.py        weight (FRACTAL_Z_3D) GM -> L0B by LoadData 2D (BL1 bypass), or GM -> L1 -> L0B
- kernel/load_b_groups.py the same for grouped convolutions (group-opt blocks, the partly empty last block)
- kernel/bias.py          bias GM -> L1 -> BT
- kernel/hw_mode.py       the HW-mode tools (one output row per M block: the L1 window, L0A start, weight copy, Fixpipe offset)
- kernel/pointwise.py     the pointwise tools (NCDHW 1x1x1: Nd2Nz into L1, transposing loads, bias Mmad, NZ2ND Fixpipe)
- routing.py              aclnn's choice of the pointwise kernel
- kernel/mmad.py          one Mmad per K step (bias from BT on the first)
- kernel/store_c.py       L0C -> GM Fixpipe into NDC1HWC0
- kernel/conv3d_v2.py     the entry conv3dv2 (dispatch by tiling key and fmap format), KernelConv3DV2,
                          KernelConv3DV2WithGroups, KernelConv3DV2HwMode and KernelConv3DV2PointWise (per-core split, GM offsets)
- arguments.py            the host operator's argument checks
- operator.py             the host operator conv3d_v2 and conv3d_v2_run
- reference.py            a plain numpy forward convolution (the CLI's check)
"""
from kernels.conv3d_v2.kernel.api import Conv3D
from kernels.conv3d_v2.kernel.conv3d_v2 import (KernelConv3DV2, KernelConv3DV2HwMode, KernelConv3DV2PointWise,
                                                KernelConv3DV2WithGroups, conv3dv2)
from kernels.conv3d_v2.operator import conv3d_v2, conv3d_v2_run

__all__ = ["Conv3D", "KernelConv3DV2", "KernelConv3DV2HwMode", "KernelConv3DV2PointWise",
           "KernelConv3DV2WithGroups", "conv3d_v2", "conv3d_v2_run", "conv3dv2"]
