"""The Ascend C programming model in one namespace: kernels write `from ascend_sim.ascendc import *`, or import the
names they use. The Ascend 950's instructions and structs (ascend_sim.isa.arch35) are imported on first use: name
them (`from ascend_sim.ascendc import NdDmaParams`); `import *` leaves them out, and an A2/A3 run never loads them."""
from ascend_sim.engine.api_call import api_call
from ascend_sim.engine.chip import current_core
from ascend_sim.engine.replay import replay_unit
from ascend_sim.isa import *  # noqa: F401,F403
from ascend_sim.isa import arch35
from ascend_sim.isa.tpipe import TBuf, TPipe, TQue, protocol_state
from ascend_sim.machine.lazy_exports import lazy_exports
from ascend_sim.machine.pipes import (PIPE_ALL, PIPE_FIX, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_S, PIPE_V,
                                      HardEvent, Pipe)
from ascend_sim.machine.tensor import GlobalTensor, GmAddr, LocalTensor, TPosition

lazy_exports(__name__, {name: arch35.__name__ for name in arch35.__all__})
