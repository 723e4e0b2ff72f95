"""The Conv3D API tiling's constants and integer helpers (conv3d_common_utils.h, conv3d_api_tiling_utils.h and
the constants of conv3d_api_tiling_base.h, hicann/ops-nn e5c3fa93): shared by the tiling object and its algorithms."""
from __future__ import annotations

import math

# Conv3dCommon constants (conv3d_common_utils.h) and the API's own (conv3d_api_tiling_utils.h, _base.h).
C0_BYTE_SIZE = 32
LOAD3D_MAX_STRIDE_H_W = 63
LOAD3D_MAX_DILATION_H_W = 255
LOAD3D_MAX_PAD = 255
LOAD3D_MAX_FILTER_H_W = 511
LOAD3D_MAX_DDR2L1_SIZE = 65535
POSTK_LIMIT = 65535
KL0_LIMIT = 4096
MIN_BURST_SIZE = 128
DOUBLE_BUFFER_NUM = 2
M_MODE, HW_MODE = 0, 1
UINT64_MAX = 2**64 - 1

DTYPE_SIZE = {"float16": 2, "float32": 4, "bfloat16": 2, "int8": 1, "uint8": 1, "int64": 8, "uint64": 8, "int32": 4}
# CUBE_MKN_TAB: (m0, k0, n0) per fmap dtype; CUBE_TYPE_TAB: the Mmad accumulator type.
CUBE_MKN = {"float16": (16, 16, 16), "bfloat16": (16, 16, 16), "float32": (16, 8, 16), "int8": (16, 32, 16)}
MAD_TYPE = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "int8": "int32", "uint8": "int32"}

# [fmap, weight, (bias,) output] dtypes the API accepts (SUPPORTED_TYPES_*).
SUPPORTED_TYPES_WITH_BIAS = {("float16",) * 4, ("float32",) * 4, ("int8", "int8", "int32", "float16"),
                             ("bfloat16", "bfloat16", "float32", "bfloat16")}
SUPPORTED_TYPES_WITHOUT_BIAS = {("float16",) * 3, ("float32",) * 3, ("int8", "int8", "float16"), ("bfloat16",) * 3}
POINTWISE_SUPPORTED_TYPES_WITH_BIAS = {("float16", "float16", "float32", "float16"), ("float32",) * 4,
                                       ("bfloat16", "bfloat16", "float32", "bfloat16")}
POINTWISE_SUPPORTED_TYPES_WITHOUT_BIAS = {("float16",) * 3, ("float32",) * 3, ("bfloat16",) * 3}


class ApiTilingError(ValueError):
    """The API tiling refused its inputs (the real GetTiling returns INVALID_VALUE, -1)."""


class NotPorted(NotImplementedError):
    """A path of the real API tiling this port does not have yet (named in the message)."""


def ceil_div(a: int, b: int) -> int:
    return 0 if b == 0 else -(-a // b)


def align_up(value: int, align: int) -> int:
    return 0 if align == 0 else ceil_div(value, align) * align


def mul_overflows_u64(*factors: int) -> bool:
    """Conv3dCommon::MulWithOverflowCheck over unsigned 64-bit products, left to right."""
    product = 1
    for factor in factors:
        if factor == 0:
            return False  # a zero product cannot overflow further on
        product *= factor
        if product > UINT64_MAX:
            return True
    return False


def calc_comm_factor(num: int, num_max: int) -> list[int]:
    """CalcCommFactor: the divisors of num up to num_max, ascending."""
    if num == 0:
        return []
    found = set()
    for i in range(1, math.isqrt(num) + 1):
        if num % i == 0:
            found.update(d for d in (i, num // i) if d <= num_max)
    return sorted(found)


def calc_comm_factor_with_power_of_two(num: int, num_max: int) -> list[int]:
    """CalcCommFactorWithPowerOfTwo: the divisors up to num_max, plus every power of two up to min(num, num_max)."""
    found = set(calc_comm_factor(num, num_max))
    power = 2
    while power <= min(num, num_max):
        found.add(power)
        power *= 2
    return sorted(found)


def infer_hi_l1(ho_l1: int, hi: int, k: int, dilation: int, stride: int) -> int:
    """Conv3dCommon::InferHiL1 / InferWiL1: the input rows an output tile needs, at most the whole input."""
    return min((ho_l1 - 1) * stride + (k - 1) * dilation + 1, hi)
