"""The Ascend C programming model in one namespace: kernels write `from ascend_sim.ascendc import *`."""
from .chip import current_core
from .isa import *  # noqa: F401,F403
from .pipes import PIPE_ALL, PIPE_FIX, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_S, PIPE_V, HardEvent, Pipe
from .tensor import GlobalTensor, GmAddr, LocalTensor, TPosition
from .tpipe import TBuf, TPipe, TQue
