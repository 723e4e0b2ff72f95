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

# float16 -> float32 by table: the same bits as astype (NaN payloads included) at a third of the time
_F16_TO_F32 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
# 8-bit codes -> float32 by table (every code is exact in fp32)
_BYTE_TO_F32 = {dtype: np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
                for dtype in EIGHT_BIT_DTYPES.values()}


def element_bits(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bytes (uint8) holding elements of `dtype` viewed as what to_float32 takes."""
    if dtype == float16:
        return data.view(np.uint16)
    return data if dtype.itemsize == 1 else data.view(dtype)


def to_float32(elements: np.ndarray, dtype: np.dtype, out: np.ndarray | None = None) -> np.ndarray:
    """Elements of `dtype` (an array of their bits: uint16 for float16, uint8 for the 8-bit types, else of
    `dtype` itself; any shape and strides) as a fresh C-contiguous float32 array of that shape, or written into
    `out` (C-contiguous float32 of that shape; the table lookups unbuffered: every index is in its table, so
    mode "clip" changes nothing) and returned. Every element converts exactly, so the result does
    not depend on how many are converted at once (the cube's operands, isa/cube.py, and the replay engine's
    batched data work, engine/replay_data.py, share it)."""
    table = _F16_TO_F32 if dtype == float16 else _BYTE_TO_F32[dtype] if dtype.itemsize == 1 else None
    if table is not None:
        return table.take(elements) if out is None else table.take(elements, out=out, mode="clip")
    if out is None:
        out = np.empty(elements.shape, np.float32)
    np.copyto(out, elements, casting="unsafe")
    return out


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
