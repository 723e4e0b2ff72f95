"""Conv3DBackpropInputV2 (dx) for Atlas A2, written against the simulated Ascend C API.

Modules, one job each (device code under kernel/arch22/):
- kernel/arch22/api.py                      the high-level API class Conv3DBackpropInput (Init ... Iterate / GetTensorC ... End)
- kernel/arch22/load_a.py                   gradOutput GM -> L1 (zero insertion) -> L0A (img2col with the backprop pads)
- kernel/arch22/load_b.py                   weight GM -> L1 -> L0B (180-degree rotation, Cin/Cout transpose; Load3Dv2 path for fp32)
- kernel/arch22/store_c.py                  L0C -> GM Fixpipe into NDC1HWC0 (or the NCDHW build's workspace slot) with the dtype conversion
- kernel/arch22/vec_post.py                 the NCDHW build's vector side: each tile workspace -> UB -> TransDataTo5HD -> NCDHW
- kernel/arch22/drivers.py                  Conv3dDx (general) and Conv3dDxBasicBlockSplitMN: per-core work split and GM offsets
- kernel/arch22/init_output.py              the init-output pass (zero y, the cube cores' cross-core barrier)
- kernel/arch22/conv3d_backprop_input_v2.py the kernel entry conv3d_backprop_input_v2 (dispatch by tiling key)
- arguments.py                              the host operator's argument checks on shapes and dtype, and the thin layer for the arrays
                                            (shape errors name the data_format, suggest the other)
- rewrite.py                                the problem rewritten into the kernel's envelope (pads beyond the kernel reach, strideD > kD)
- plan.py                                   a run planned from the problem alone: checks, routing, rewrite, tiling, overrides, init flag
- routes.py                                 the operator's routes (aclnn, v2), importable without the planner
- operator.py                               the host operator: the plan run on the data (formats, launch, conversion back)
- matmul_route.py                           aclnn's matmul shortcuts (kernel == stride, feature map == kernel, 950 1x1x1) on the matmul
                                            kernel (kernels/matmul/)

Each name below is imported on first use (ascend_sim/machine/lazy_exports.py).
"""
from ascend_sim.machine.lazy_exports import lazy_exports

_EXPORTS = {
    "Conv3DBackpropInput": "kernels.conv3d_backprop_input.kernel.arch22.api",
    "Conv3dDx": "kernels.conv3d_backprop_input.kernel.arch22.drivers",
    "Conv3dDxBasicBlockSplitMN": "kernels.conv3d_backprop_input.kernel.arch22.drivers",
    "Conv3dDxInitOutput": "kernels.conv3d_backprop_input.kernel.arch22.init_output",
    "conv3d_backprop_input_v2_kernel":
        "kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2:conv3d_backprop_input_v2",
    "Conv3dDxPlan": "kernels.conv3d_backprop_input.plan",
    "conv3d_backprop_input_v2": "kernels.conv3d_backprop_input.operator",
    "conv3d_backprop_input_v2_run": "kernels.conv3d_backprop_input.operator",
    "plan_conv3d_dx": "kernels.conv3d_backprop_input.plan",
}
lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
