"""Which Conv3DV2 kernel aclnn runs: the pointwise branch of Conv3dImpl::PreProcess (ops-nn
conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp).

    isPointWiseKernelFlag = !IsSupportND() && IsSupportConv3DToConv3DV2()
                            && NeedPointWiseKernel(weight, stride, padding, dilation, groups)
                            && !PointWiseKernelBeyondLimits(input)

IsSupportND() is true only on npu_arch 3510 and IsSupportConv3DToConv3DV2() on ASCEND910B / ASCEND910_93 (and 3510),
so on the A2/A3 presets (npu_arch 2201) the two platform terms hold. With the flag set aclnn runs Conv3DV2 on NCDHW
x, weight and y (no TransData around it) with a float32 bias; otherwise on NDC1HWC0 / FRACTAL_Z_3D.
"""
from __future__ import annotations

MAX_UINT16 = 65535


def need_point_wise_kernel(filter_shape, strides, pads, dilations, groups: int) -> bool:
    """NeedPointWiseKernel: groups 1, every dilation and stride 1, every pad 0, every kernel dimension 1."""
    if groups != 1:
        return False
    if any(d != 1 for d in dilations) or any(s != 1 for s in strides) or any(p != 0 for p in pads):
        return False
    return all(k == 1 for k in filter_shape[2:])


def point_wise_kernel_beyond_limits(x_shape) -> bool:
    """PointWiseKernelBeyondLimits: Di*Hi*Wi >= 65535 (the Nd2Nz source row pitch is 16 bits)."""
    _, _, di, hi, wi = x_shape
    return di * hi * wi >= MAX_UINT16


def use_point_wise_kernel(args, data_format: str) -> bool:
    """The aclnn decision for this problem on an A2/A3 platform, for NCDHW data (the format of the pointwise
    kernel's x and y; NDHWC data keeps the NDC1HWC0 path, docs/conv3d_v2.md)."""
    return (args.platform.npu_arch == 2201 and data_format == "NCDHW"
            and need_point_wise_kernel(args.filter_shape, args.strides, args.pads, args.dilations, args.groups)
            and not point_wise_kernel_beyond_limits(args.x_shape))
