"""The cube-side instruction set, grouped by the pipe that executes it. `DataCopy` and `LoadData` are the
overloaded Ascend C entry points: the parameter struct picks the instruction.

The Ascend 950's instructions (isa/arch35) are loaded when first used: an A2/A3 run never loads them (issue 22,
the default run's wall time), so none of their parameter structs exist there (_is_arch35_struct); the 950's names
are exported by ascend_sim.ascendc on first use."""
from __future__ import annotations

import math
import sys

from ascend_sim.engine.chip import current_core
from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.atomic import SetAtomicAdd, SetAtomicNone
from ascend_sim.isa.bias_table import copy_l1_to_bt
from ascend_sim.isa.common import BLOCK, FRACTAL
from ascend_sim.isa.ctrl import GetCtrlSpr, ResetCtrlSpr, SetCtrlSpr
from ascend_sim.isa.cube import Mmad, MmadParams, SetHF32Mode, SetHF32TransMode
from ascend_sim.isa.fixpipe import (CFG_NZ, CFG_ROW_MAJOR, DataCopyCO12DstParams, FixpipeConfig, FixpipeParams,
                                    FixpipeParamsV220, QuantMode_t, QuantParams, copy_l0c_to_gm, fixpipe_v220)
from ascend_sim.isa.load2d_gm import load_data_2d_gm
from ascend_sim.isa.load2d_transpose import LoadData2dTransposeParams, LoadDataWithTranspose
from ascend_sim.isa.mte1 import (FMATRIX_LEFT, FMATRIX_RIGHT, LoadData2DParams, LoadData3DParamsV2,
                                 LoadDataRepeatParams, SetFmatrix, SetLoadDataRepeat, load_data_2d, load_data_3d_v2)
from ascend_sim.isa.mte2 import (DataCopyParams, InitConstValue, InitConstValueParams, Nd2NzParams, copy_gm_to_l1,
                                 copy_gm_to_l1_contiguous, copy_gm_to_l1_nd2nz)
from ascend_sim.isa.mte3 import copy_l1_to_gm
from ascend_sim.isa.sync import (ASCEND_IS_AIC, ASCEND_IS_AIV, CrossCoreSetFlag, CrossCoreWaitFlag, GetBlockIdx,
                                 GetBlockNum, GetSubBlockIdx, PipeBarrier, SetFlag, SyncAll, WaitFlag)
from ascend_sim.isa.vector import *  # noqa: F401,F403 - the vector core's instructions
from ascend_sim.isa.vector.datacopy import data_copy_ub, is_ub
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor

# the 950's modules whose structs the entry points below take
_NDDMA, _MTE2_NZ, _FIXPIPE_3510, _LOAD2D_V2 = (f"ascend_sim.isa.arch35.{module}"
                                          for module in ("nddma", "mte2_nz", "fixpipe_3510", "load2d_v2"))


def _is_arch35_struct(params, module: str, struct: str) -> bool:
    """isinstance(params, struct of the arch35 module `module`), without loading that module: until it is loaded
    (never on an A2/A3 run) no such struct exists."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(params, getattr(loaded, struct))


@cached
def DataCopy(dst, src, params, config=None, *, enableSmallC0: bool = False) -> None:
    """GM -> L1 (count, DataCopyParams, Nd2NzParams or, on arch 3510, Dn2NzParams), L1 -> BT (DataCopyParams into
    a C2 tensor), L1 -> GM (DataCopyParams into a GlobalTensor) or L0C -> GM (DataCopyCO12DstParams); GM <-> UB
    (count or DataCopyParams) on the vector core; on arch 3510 GM -> UB by ND-DMA (NdDmaParams, with the
    template's NdDmaConfig as `config`, kDefaultNdDmaConfig when None) and UB -> L1 (count or DataCopyParams) on
    the vector core. enableSmallC0 is DN2NZ's template switch (DataCopy<T, true>: 4-element rows,
    isa/arch35/mte2_nz.py)."""
    if _is_arch35_struct(params, _NDDMA, "NdDmaParams"):
        nddma = sys.modules[_NDDMA]
        return nddma.copy_gm_to_ub_nddma(dst, src, params, nddma.kDefaultNdDmaConfig if config is None else config)
    if is_ub(src) and isinstance(dst, LocalTensor) and dst.buffer.name == "L1":
        from ascend_sim.isa.arch35.ub_to_l1 import copy_ub_to_l1  # arch 3510 only: it faults by name elsewhere
        return copy_ub_to_l1(dst, src, params)
    if is_ub(dst) or is_ub(src):
        return data_copy_ub(dst, src, params)
    if isinstance(params, DataCopyParams):
        if isinstance(dst, LocalTensor) and dst.buffer.name == "BT":
            copy_l1_to_bt(dst, src, params)
        elif isinstance(dst, GlobalTensor):
            copy_l1_to_gm(dst, src, params)
        else:
            copy_gm_to_l1(dst, src, params)
    elif isinstance(params, Nd2NzParams):
        if current_core().platform.npu_arch == 3510:  # the 3510 struct: wider fields, other ranges
            from ascend_sim.isa.arch35.mte2_nz import copy_gm_to_l1_nd2nz_arch35
            copy_gm_to_l1_nd2nz_arch35(dst, src, params)
        else:
            copy_gm_to_l1_nd2nz(dst, src, params)
    elif _is_arch35_struct(params, _MTE2_NZ, "Dn2NzParams"):
        sys.modules[_MTE2_NZ].copy_gm_to_l1_dn2nz(dst, src, params, enableSmallC0)
    elif isinstance(params, DataCopyCO12DstParams):
        copy_l0c_to_gm(dst, src, params)
    elif isinstance(params, int):
        copy_gm_to_l1_contiguous(dst, src, params)
    else:
        raise TypeError(f"DataCopy: params of type {type(params).__name__} is not one of int, DataCopyParams, "
                        "Nd2NzParams, Dn2NzParams, DataCopyCO12DstParams")


@cached
def Fixpipe(dst, src, params, config=CFG_ROW_MAJOR) -> None:
    """L0C -> GM (or UB on the 950): FixpipeParamsV220 / FixpipeParams (A2/A3), FixpipeParamsArch3510 (arch 3510)."""
    if _is_arch35_struct(params, _FIXPIPE_3510, "FixpipeParamsArch3510"):
        sys.modules[_FIXPIPE_3510].fixpipe_arch35(dst, src, params, config)
    else:
        fixpipe_v220(dst, src, params, config)


def _load_data_alignment(alignments) -> dict:
    """What every LoadData form checks of its on-chip addresses: dst in L0A/L0B on a fractal (512 B), dst or src
    in L1 on the platform's L1 alignment (src on 32 B too: the 950's 2Dv2); their sizes are never read."""
    return {"L0A": FRACTAL, "L0B": FRACTAL, "L1": math.lcm(BLOCK, alignments.L1)}


@cached(on_chip_alignment=_load_data_alignment)  # one descriptor for the ping-pong L0 buffers and L1 offsets
def LoadData(dst, src, params, isSetFMatrix: bool = True) -> None:
    """L1 -> L0A/L0B: LoadData2DParams (fractal copy; from GM into L1/L0A/L0B on MTE2), LoadData3DParamsV2
    (img2col) or, on arch 3510, LoadData2DParamsV2."""
    if isinstance(params, LoadData2DParams):
        if isinstance(src, GlobalTensor):
            load_data_2d_gm(dst, src, params)
        else:
            load_data_2d(dst, src, params)
    elif isinstance(params, LoadData3DParamsV2):
        load_data_3d_v2(dst, src, params, isSetFMatrix)
    elif _is_arch35_struct(params, _LOAD2D_V2, "LoadData2DParamsV2"):
        sys.modules[_LOAD2D_V2].load_data_2d_v2(dst, src, params)
    else:
        raise TypeError(f"LoadData: params of type {type(params).__name__} is not LoadData2DParams, "
                        "LoadData3DParamsV2 or LoadData2DParamsV2")
