"""The example matmul: a multi-core tiled (batch) matmul in the Ascend C style, C[b] = A[b] . B[b], all ND in GM.

Device code in kernel/matmul_kernel.py (the tile loop both archs share, and A2/A3's instructions; its docstring
walks through the data path) and kernel/arch35/matmul_kernel.py (the Ascend 950's instructions for that loop), the tiling in tiling/matmul, the host operator in
operator.py (it picks the kernel by the platform's arch)."""
from kernels.matmul.kernel.matmul_kernel import copy_nd_to_nz, load_a_zz, load_b_zn, load_b_zn_b32, matmul_kernel
from kernels.matmul.operator import run_matmul
from tiling.matmul import MatmulTiling

__all__ = ["MatmulTiling", "copy_nd_to_nz", "load_a_zz", "load_b_zn", "load_b_zn_b32", "matmul_kernel", "run_matmul"]
