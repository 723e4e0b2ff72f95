"""Loop-based reference models of the Ascend 950 (arch 3510) instructions, in the style of isa_reference.py:
buffers are 1-D numpy arrays of ELEMENTS, every function returns a modified copy of dst, every element moves by
an explicit index formula, an index outside a buffer raises IndexError and a parameter out of its documented range
raises ValueError.

Sources (mirror-cann/asc-devkit 82b89a15, docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/...):
  矩阵计算的搬入/DataCopy（GMToL1随路转换-DN2NZ搬运）.md, .../DataCopy（GMToL1随路转换-ND2NZ搬运）.md,
  矩阵计算的搬入/LoadData_2D_V2.md, 矩阵计算的搬入/LoadDataWithStride.md,
  矩阵搬入辅助配置接口/SetLoadDataRepeatWithStride.md, 矩阵计算的搬出/Fixpipe（L0C到GM数据搬运）.md,
  矩阵搬出关键特性说明/NZ2DN.md (its pseudo code), and include/basic_api/kernel_struct_*.h for the fields.
"""
from __future__ import annotations

import numpy as np

try:
    from tests.isa_reference import _c0, _ceil_align, _ceil_div, _check_range, _copy, _read, _write
except ImportError:  # pragma: no cover - when tests/ is on sys.path directly
    from isa_reference import _c0, _ceil_align, _ceil_div, _check_range, _copy, _read, _write

B40 = 2**40 - 1


def ref_dn2nz(dst, src, dst_offset, src_offset, dnNum, nValue, dValue, srcDnMatrixStride, srcDValue,
              dstNzC0Stride, dstNzNStride, dstNzMatrixStride, elem_bytes):
    """DataCopy GM->L1 with Dn2NzParams. "DN到NZ的格式转换等价于ND到ZN": the source holds dValue rows of
    srcDValue elements; row d, element n is element (n, d) of an nValue x dValue matrix. dValue is zero-padded up
    to a multiple of C0; rows of the destination beyond nValue are not written.

        for t, n, c in range(dnNum) x range(nValue) x range(ceil(dValue/C0)*C0):
            dst[t*dstNzMatrixStride + (c//C0)*dstNzC0Stride*C0 + n*dstNzNStride*C0 + c%C0]
                = src[t*srcDnMatrixStride + c*srcDValue + n]  if c < dValue else 0
    """
    _check_range("dnNum", dnNum, 0, 4095)
    _check_range("nValue", nValue, 0, 16384)
    _check_range("dValue", dValue, 0, 2**21 - 1)
    _check_range("srcDnMatrixStride", srcDnMatrixStride, 0, B40)
    _check_range("srcDValue", srcDValue, 1, B40)
    _check_range("dstNzC0Stride", dstNzC0Stride, 1, 16384)
    _check_range("dstNzNStride", dstNzNStride, 1, 16384)
    _check_range("dstNzMatrixStride", dstNzMatrixStride, 0, 16384)
    out = _copy(dst)
    if dnNum == 0 or nValue == 0 or dValue == 0:
        return out
    c0 = _c0(elem_bytes)
    zero = np.zeros(1, dtype=out.dtype)[0]
    for t in range(dnNum):
        for n in range(nValue):
            for c in range(_ceil_align(dValue, c0)):
                d = dst_offset + t * dstNzMatrixStride + (c // c0) * dstNzC0Stride * c0 + n * dstNzNStride * c0 + c % c0
                if c < dValue:
                    _write(out, d, _read(src, src_offset + t * srcDnMatrixStride + c * srcDValue + n))
                else:
                    _write(out, d, zero)
    return out
