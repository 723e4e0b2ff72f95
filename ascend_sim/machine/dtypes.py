"""Element types: float16, bfloat16 (ml_dtypes), float32, HF32 rounding of fp32, and the Ascend 950's 8-bit
types hifloat8 (en-dtypes, the package Huawei's own goldens import) and float8_e4m3fn (ml_dtypes)."""
from __future__ import annotations

import en_dtypes
import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
hifloat8 = np.dtype(en_dtypes.hifloat8)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)

DTYPES: dict[str, np.dtype] = {"float16": float16, "bfloat16": bfloat16, "float32": float32}
EIGHT_BIT_DTYPES: dict[str, np.dtype] = {"hifloat8": hifloat8, "float8_e4m3fn": float8_e4m3fn}  # arch 3510 only
BLOCK_BYTES = 32  # one DataBlock; C0 is the number of elements in it


def dtype_name(dtype) -> str:
    dt = np.dtype(dtype)
    for name, value in DTYPES.items():
        if value == dt:
            return name
    raise TypeError(f"dtype={dt} is not supported; allowed: {sorted(DTYPES)}")


def arch_refuses(dtype, npu_arch: int) -> str | None:
    """Why `dtype` cannot be used on NpuArch `npu_arch`, or None: hifloat8 and float8_e4m3fn are arch 3510
    (Ascend 950) only; arch 2201 (A2/A3) has no 8-bit float in its Mmad, Fixpipe or Cast tables (asc-devkit)."""
    dt = np.dtype(dtype)
    for name, value in EIGHT_BIT_DTYPES.items():
        if value == dt and npu_arch != 3510:
            return f"{name} is an Ascend 950 (arch 3510) type; arch {npu_arch} (A2/A3) does not take it"
    return None


def c0_of(dtype) -> int:
    """C0 = 32 bytes / element size: 16 for fp16/bf16, 8 for fp32, 32 for the 8-bit types."""
    return BLOCK_BYTES // np.dtype(dtype).itemsize


HF32_NEAREST_EVEN, HF32_NEAREST_AWAY = 0, 1  # SetHF32TransMode values


def round_to_hf32(x: np.ndarray, mantissa_bits: int = 11, mode: int = HF32_NEAREST_EVEN) -> np.ndarray:
    """Round fp32 values to HF32 (fp32 range, `mantissa_bits` of mantissa: 11 on A2/A3, 10 on Ascend 950).

    mode HF32_NEAREST_EVEN rounds ties to even (the reset value of SetHF32TransMode); HF32_NEAREST_AWAY rounds
    ties away from zero, which is Huawei's golden `((bits >> 11) + 1) >> 1 << 12`. They differ only on exact
    ties. Infinities and NaNs pass through unchanged.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    drop = np.uint32(23 - mantissa_bits)
    bits = x.view(np.uint32)
    half = np.uint32(1) << (drop - np.uint32(1))
    if mode == HF32_NEAREST_AWAY:
        bias = half
    else:
        bias = half - np.uint32(1) + ((bits >> drop) & np.uint32(1))
    rounded = ((bits + bias) >> drop) << drop
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    return np.where(special, bits, rounded.astype(np.uint32)).view(np.float32)
