"""MatmulTiling: the example matmul's tiling (baseM x baseN x baseK blocks, stepK K slices per L1 load, single or
double-buffered L1), its dtypes and its capacity checks.

The operand types are float16, bfloat16, float32 and, on the Ascend 950 only (the operator refuses them elsewhere),
hifloat8 and float8_e4m3fn, whose K fractal (C0) is 32 elements: baseK must be a multiple of C0. L1 and L0C
capacities come from the platform (L0C is 128 KiB on A2/A3, 256 KiB on the 950); L0A and L0B are 64 KiB on both,
used as two ping-pong halves."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES, c0_of
from tiling.common.problem import check_hf32

L0_HALF = 32 * 1024  # each ping-pong half of L0A / L0B
L0C_SIZE = 128 * 1024
L1_SIZE = 512 * 1024
OPERAND_DTYPES = {**DTYPES, **EIGHT_BIT_DTYPES}  # the 8-bit types: Ascend 950 (arch 3510) only


@dataclass(frozen=True)
class MatmulTiling:
    M: int
    N: int
    K: int
    baseM: int = 128
    baseN: int = 128
    baseK: int = 64
    stepK: int = 4  # baseK slices per L1 load
    l1_buffers: int = 2  # 2 = double-buffered A1/B1 (MTE2 overlaps the cube), 1 = single
    dtype: str = "float16"  # A and B
    out_dtype: str | None = None  # C; None = the operand dtype
    batch: int = 1
    shared_b: bool = False  # one B (K x N) for every batch
    hf32: bool = False  # float32 operands rounded to HF32 by the cube (SetHF32Mode)

    @classmethod
    def for_shape(cls, M: int, N: int, K: int, dtype: str = "float16", **fields) -> "MatmulTiling":
        """The default tiling for a dtype: 128 x 128 blocks, baseK 64 (128 for the 8-bit types: the same 16 KiB
        of L0A per block), 4 (16- and 8-bit) or 2 (float32) K slices per L1 load."""
        fields.setdefault("stepK", 2 if dtype == "float32" else 4)
        if dtype in EIGHT_BIT_DTYPES:
            fields.setdefault("baseK", 128)
        return cls(M, N, K, dtype=dtype, **fields)

    @property
    def out(self) -> str:
        return self.out_dtype or self.dtype

    @property
    def c0(self) -> int:
        """Elements of the operand type in 32 bytes: the K fractal (16, 8, or 32 for the 8-bit types)."""
        return c0_of(OPERAND_DTYPES[self.dtype])

    def check(self, l1_bytes: int = L1_SIZE, l0c_bytes: int = L0C_SIZE) -> None:
        for name in ("M", "N", "K", "batch", "stepK"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        for name in ("baseM", "baseN", "baseK"):
            value = getattr(self, name)
            if value <= 0 or value % 16:
                raise ValueError(f"{name}={value} must be a positive multiple of 16")
        for name in ("dtype", "out"):
            if getattr(self, name) not in OPERAND_DTYPES:
                raise ValueError(f"{name}={getattr(self, name)!r} is not supported; allowed: "
                                 f"{sorted(OPERAND_DTYPES)}")
        if self.baseK % self.c0:
            raise ValueError(f"baseK={self.baseK} must be a multiple of {self.c0} (the K fractal of {self.dtype})")
        if self.l1_buffers not in (1, 2):
            raise ValueError(f"l1_buffers={self.l1_buffers} must be 1 or 2")
        check_hf32("hf32", self.hf32, self.dtype)
        size = OPERAND_DTYPES[self.dtype].itemsize
        if self.baseM * self.baseK * size > L0_HALF or self.baseK * self.baseN * size > L0_HALF:
            raise ValueError(f"baseM*baseK and baseK*baseN {self.dtype} tiles must fit half of L0A/L0B "
                             f"({L0_HALF} B)")
        if self.baseM * self.baseN * 4 * 2 > l0c_bytes:
            raise ValueError(f"two fp32 baseM x baseN tiles must fit L0C ({l0c_bytes // 1024} KiB)")
        l1 = self.l1_buffers * (self.baseM + self.baseN) * self.baseK * self.stepK * size
        if l1 > l1_bytes:
            raise ValueError(f"A1 + B1 need {l1} B of L1 ({self.l1_buffers} x (baseM + baseN) x baseK x stepK x "
                             f"{size} B), more than its {l1_bytes} B: lower stepK")
