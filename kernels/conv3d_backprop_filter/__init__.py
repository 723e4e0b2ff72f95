"""Conv3DBackpropFilterV2 (dw) for Atlas A2, written against the simulated Ascend C API.

Modules, one job each (device code under kernel/):
- kernel/api.py                       the high-level API class Conv3DBackpropFilter (Init ... Iterate / GetTensorC ... End)
- kernel/load_a.py                    dy GM -> L1 -> L0A (LoadData 3Dv2 with enTranspose: A = dy^T, couts x pixels)
- kernel/load_b.py                    x GM -> L1 rows -> L0B (img2col through the RIGHT fmatrix: B = pixels x (cin1, kh, kw, cin0))
- kernel/store_c.py                   L0C -> GM Fixpipe into the fp32 FRACTAL_Z_3D dw, atomic add
- kernel/drivers.py                   Conv3dDw (base template) and the basic-block drivers (SPLIT_M_K, SPLIT_K_N, SPLIT_M_N, stream-K)
- kernel/init_output.py               the init-output pass (zero dw, then all cores meet)
- kernel/conv3d_backprop_filter_v2.py the kernel entry conv3d_backprop_filter_v2 (dispatch by tiling key)
- operator.py                         the host operator: checks, tiling, formats, launch, dw back in filter_format
"""
from kernels.conv3d_backprop_filter.kernel.api import Conv3DBackpropFilter
from kernels.conv3d_backprop_filter.kernel.conv3d_backprop_filter_v2 import \
    conv3d_backprop_filter_v2 as conv3d_backprop_filter_v2_kernel
from kernels.conv3d_backprop_filter.kernel.drivers import (Conv3dDw, Conv3dDwBasicBlockSplitKN,
                                                           Conv3dDwBasicBlockSplitMK, Conv3dDwBasicBlockSplitMN,
                                                           Conv3dDwBasicBlockSplitMNStreamK)
from kernels.conv3d_backprop_filter.kernel.init_output import Conv3dDwInitOutput
from kernels.conv3d_backprop_filter.operator import conv3d_backprop_filter_v2, conv3d_backprop_filter_v2_run

__all__ = ["Conv3DBackpropFilter", "Conv3dDw", "Conv3dDwBasicBlockSplitKN", "Conv3dDwBasicBlockSplitMK",
           "Conv3dDwBasicBlockSplitMN", "Conv3dDwBasicBlockSplitMNStreamK", "Conv3dDwInitOutput",
           "conv3d_backprop_filter_v2", "conv3d_backprop_filter_v2_kernel", "conv3d_backprop_filter_v2_run"]
