"""The Ascend 950 (arch 3510) instructions: each faults by name on another arch. `DataCopy`, `LoadData` and
`Fixpipe` (isa/__init__.py, isa/fixpipe.py) pick them by their parameter structs.

Each name is imported on first use (ascend_sim.machine.lazy_exports): an A2/A3 run loads only the modules the
shared instructions import (common, loop_mode and cast_8bit, for the vector core's DataCopy and Cast), not the
950's own instructions (issue 22: the default run's wall time)."""

from ascend_sim.machine.lazy_exports import lazy_exports

_DEFINED_IN = {
    "fixpipe_3510": ["CFG_COLUMN_MAJOR", "CFG_COLUMN_MAJOR_UB", "CFG_NZ_UB", "CFG_ROW_MAJOR_UB", "CO2Layout",
                     "FixpipeConfigArch3510", "FixpipeParamsArch3510", "Nz2DnParams", "Nz2NdParams", "fixpipe_arch35"],
    "load3d_stride": ["LoadDataRepeatParamWithStride", "LoadDataWithStride", "SetLoadDataRepeatWithStride"],
    "load2d_v2": ["LoadData2DParamsV2", "load_data_2d_v2"],
    "mte2_nz": ["Dn2NzParams", "copy_gm_to_l1_dn2nz", "copy_gm_to_l1_nd2nz_arch35"],
    "nddma": ["MultiCopyConfig", "MultiCopyLoopInfo", "MultiCopyParams", "NdDmaConfig", "NdDmaLoopInfo", "NdDmaParams",
              "copy_gm_to_ub_nddma", "kDefaultNdDmaConfig"],
    "ub_to_l1": ["copy_ub_to_l1"],
    "loop_mode": ["DataCopyMVType", "LoopModeParams", "SetLoopModePara", "ResetLoopModePara"],
}
__all__ = ["Reg", *(name for names in _DEFINED_IN.values() for name in names if name != "fixpipe_arch35")]
lazy_exports(__name__, {"Reg": f"{__name__}:reg",  # AscendC::Reg, the regbase micro-API
                        **{name: f"{__name__}.{module}" for module, names in _DEFINED_IN.items() for name in names}})
