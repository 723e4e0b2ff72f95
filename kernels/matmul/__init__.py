"""The example matmul: a multi-core tiled (batch) matmul in the Ascend C style: C[b] (M x N) = A[b] (M x K) . B[b] (K x N), all ND in GM.

Operands are float16, bfloat16 or float32 (optionally rounded to HF32 by the cube); the cube accumulates in fp32 in
L0C and Fixpipe writes C as float16 (F322F16), bfloat16 (F322BF16) or float32 (NoQuant). C0 = 32 B / element
size: 16 for the 16-bit types, 8 for float32. B may be shared by every batch (a broadcast right operand).

Per output tile (baseM x baseN) of this core:
  GM -> L1   DataCopy with Nd2NzParams (ND to NZ on the fly), stepK K-slices at a time, double-buffered (TQue A1/B1)
  L1 -> L0A  LoadData 2D: NZ fractals (16 x C0) are already ZZ fractals, so they are copied as they are
  L1 -> L0B  16-bit: LoadData 2D with ifTranspose: each 16 x 16 NZ fractal of B is transposed into ZN
             float32: LoadData 2D cannot transpose 32-bit data. The NZ slice of B in L1 is the same thing as an
             NC1HWC0 feature map with H = 1, W = K rows and C = N channels, so LoadData 3Dv2 into L0B with a 1x1
             filter moves it: its img2col rows (K) become the Mmad's K and its channels (N) the Mmad's N, in ZN
  Mmad       accumulates over K in L0C (cmatrixInitVal on the first K step), L0A/L0B ping-pong
  Fixpipe    L0C -> GM with NZ2ND and the dtype conversion, from a double-buffered CO1 queue
M, N and K need not be multiples of 16: Nd2Nz pads each row to C0 with zeros, the Mmad masks K exactly at k, and
Fixpipe writes only the mSize x nSize valid part of a tile.

On the Ascend 950 (npu_arch 3510) the operator runs kernel/arch35/matmul_kernel.py instead: A by ND2NZ and B by
DN2NZ into L1, LoadData2DParamsV2 into an NZ L0A and a ZN L0B, Fixpipe with FixpipeParamsArch3510; it also takes
hifloat8 and float8_e4m3fn (C0 = 32), whose C comes out through QF322HIF8_PRE / QF322FP8_PRE (docs/ascend950.md).

Device code in kernel/matmul_kernel.py (A2/A3) and kernel/arch35/, the tiling in tiling/matmul, the host operator in
operator.py.
"""
from kernels.matmul.kernel.matmul_kernel import copy_nd_to_nz, load_a_zz, load_b_zn, load_b_zn_b32, matmul_kernel
from kernels.matmul.operator import run_matmul
from tiling.matmul import MatmulTiling

__all__ = ["MatmulTiling", "copy_nd_to_nz", "load_a_zz", "load_b_zn", "load_b_zn_b32", "matmul_kernel", "run_matmul"]
