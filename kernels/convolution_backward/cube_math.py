"""cubeMathType on A2: which dtype the cube kernels compute in, and whether fp32 runs as HF32.

From the aclnnConvolutionBackward API page and hicann/ops-nn (`aclnn_convolution_backward.cpp` InputPreProcess:
USE_FP16 casts gradOutput, input and weight to float16 before the kernels; `cube_util.cpp` NeedCubeGoHF32: HF32 only
for a float32 promote type with ALLOW_FP32_DOWN_PRECISION or USE_HF32):

| dtype    | 0 KEEP_DTYPE | 1 ALLOW_FP32_DOWN_PRECISION | 2 USE_FP16 | 3 USE_HF32 |
|----------|--------------|-----------------------------|------------|------------|
| float32  | float32      | HF32                        | float16    | HF32       |
| float16  | float16      | float16                     | float16    | float16 (HF32 has no effect) |
| bfloat16 | bfloat16     | bfloat16                    | float16    | bfloat16   |

The outputs keep their dtypes: the results are cast back (OutputPostProcess). grad_bias is a ReduceSum of
gradOutput in its own dtype: cubeMathType does not apply to it.
"""
from __future__ import annotations

from dataclasses import dataclass

KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION, USE_FP16, USE_HF32 = 0, 1, 2, 3


@dataclass(frozen=True)
class CubeMath:
    dtype: str  # what the cube kernels read
    hf32: bool  # float32 operands rounded to HF32 in the cube


def cube_math(dtype: str, cube_math_type: int) -> CubeMath:
    """The A2 meaning of cube_math_type (already checked to be 0..3) for inputs of `dtype`."""
    if cube_math_type == USE_FP16:
        return CubeMath("float16", False)
    if dtype == "float32" and cube_math_type in (ALLOW_FP32_DOWN_PRECISION, USE_HF32):
        return CubeMath("float32", True)
    return CubeMath(dtype, False)
