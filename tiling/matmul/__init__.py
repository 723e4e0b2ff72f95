"""The tiling of the example matmul kernel (kernels/matmul): block sizes, K steps per L1 load, buffering."""
from tiling.matmul.model import L0_HALF, L0C_SIZE, L1_SIZE, OPERAND_DTYPES, MatmulTiling

__all__ = ["L0_HALF", "L0C_SIZE", "L1_SIZE", "OPERAND_DTYPES", "MatmulTiling"]
