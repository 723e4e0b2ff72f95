"""The Ascend 950 (arch 3510) instructions: each faults by name on another arch. `DataCopy`, `LoadData` and
`Fixpipe` (isa/__init__.py, isa/fixpipe.py) pick them by their parameter structs."""
from .load2d_v2 import LoadData2DParamsV2, load_data_2d_v2
from .load3d_stride import LoadDataRepeatParamWithStride, LoadDataWithStride, SetLoadDataRepeatWithStride
from .mte2_nz import Dn2NzParams, copy_gm_to_l1_dn2nz, copy_gm_to_l1_nd2nz_arch35

__all__ = ["LoadDataRepeatParamWithStride", "LoadDataWithStride", "SetLoadDataRepeatWithStride",
           "LoadData2DParamsV2", "load_data_2d_v2", "Dn2NzParams", "copy_gm_to_l1_dn2nz", "copy_gm_to_l1_nd2nz_arch35"]
