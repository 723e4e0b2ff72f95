"""The Ascend 950 (arch 3510) instructions: each faults by name on another arch. `DataCopy`, `LoadData` and
`Fixpipe` (isa/__init__.py, isa/fixpipe.py) pick them by their parameter structs."""
from ascend_sim.isa.arch35 import reg as Reg  # AscendC::Reg, the regbase micro-API
from ascend_sim.isa.arch35.fixpipe_3510 import (CFG_COLUMN_MAJOR, CFG_COLUMN_MAJOR_UB, CFG_NZ_UB, CFG_ROW_MAJOR_UB,
                                                CO2Layout, FixpipeConfigArch3510, FixpipeParamsArch3510, Nz2DnParams,
                                                Nz2NdParams)
from ascend_sim.isa.arch35.load2d_v2 import LoadData2DParamsV2, load_data_2d_v2
from ascend_sim.isa.arch35.load3d_stride import (LoadDataRepeatParamWithStride, LoadDataWithStride,
                                                 SetLoadDataRepeatWithStride)
from ascend_sim.isa.arch35.loop_mode import DataCopyMVType, LoopModeParams, ResetLoopModePara, SetLoopModePara
from ascend_sim.isa.arch35.mte2_nz import Dn2NzParams, copy_gm_to_l1_dn2nz, copy_gm_to_l1_nd2nz_arch35
from ascend_sim.isa.arch35.nddma import (MultiCopyConfig, MultiCopyLoopInfo, MultiCopyParams, NdDmaConfig, NdDmaLoopInfo,
                                         NdDmaParams, copy_gm_to_ub_nddma, kDefaultNdDmaConfig)
from ascend_sim.isa.arch35.ub_to_l1 import copy_ub_to_l1

__all__ = ["Reg", "CFG_COLUMN_MAJOR", "CFG_COLUMN_MAJOR_UB", "CFG_NZ_UB", "CFG_ROW_MAJOR_UB", "CO2Layout",
           "FixpipeConfigArch3510", "FixpipeParamsArch3510", "Nz2DnParams", "Nz2NdParams",
           "LoadDataRepeatParamWithStride", "LoadDataWithStride", "SetLoadDataRepeatWithStride",
           "LoadData2DParamsV2", "load_data_2d_v2", "Dn2NzParams", "copy_gm_to_l1_dn2nz", "copy_gm_to_l1_nd2nz_arch35",
           "MultiCopyConfig", "MultiCopyLoopInfo", "MultiCopyParams", "NdDmaConfig", "NdDmaLoopInfo", "NdDmaParams",
           "copy_gm_to_ub_nddma", "kDefaultNdDmaConfig", "copy_ub_to_l1",
           "DataCopyMVType", "LoopModeParams", "SetLoopModePara", "ResetLoopModePara"]
