"""Platform model: one SoC's AI Core sizes, alignments, cube rates and transfer rates.

Sizes come from the CANN platform INI files (`<soc>.ini` in the CANN toolkit) and the Ascend C performance appendix
(mirror-cann/asc-devkit `docs/`). Every timing constant names its source next to it: a measured figure (the
profiling values of hw-native-sys/pto-isa's cost-model tests), a published one, Huawei's A2/A3 cost model
(hicann/pypto), or "modelling choice"; docs/timing.md has the table and the reference points. Every field can be
overridden.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

KiB = 1024
MiB = 1024 * KiB


class Alignments(BaseModel):
    """Start-address alignment in bytes per buffer (reference §1.4)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    GM: int = 1
    L1: int = 32
    UB: int = 32
    L0A: int = 512
    L0B: int = 512
    L0C: int = 64
    BT: int = 64
    FB: int = 64  # [CONFLICT] 64 B in the arch table, 128 B in the 2201 constraints table: fb_alignment=128 to switch
    mmad_dst_L0C: int = 1024  # [CONFLICT] the Mmad API page asks 1 KiB for Mmad's dst; set 64 for the generic rule


class CubeRates(BaseModel):
    """cube_k per operand dtype: MACs per cycle = 16 * 16 * cube_k (reference §2.1, asc-devkit). pto-isa's
    A2/A3 mad cost (2 cycles per 16x8x16 fp32 fractal, 1 per 16x16x16 fp16) agrees for float16 and float32."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    float16: int = 16
    bfloat16: int = 16
    float32: int = 4
    hf32: int = 8
    # the 3510 table (Cube指令理论性能汇总 table 2): 8-bit operands, k0 = 32; arch 2201 has no 8-bit float cube
    hifloat8: int = 32
    float8_e4m3fn: int = 32

    def cube_k(self, operand: str) -> int:
        return getattr(self, operand)


# Sources cited below (docs/timing.md has the reference points and the errors):
#   pto-isa  = hw-native-sys/pto-isa 3186c381, tests/costmodel/st/testcase/<case>/main.cpp, the `profiling` cycles
#   pypto    = hicann/pypto f771e1f9a, framework/src/cost_model/simulation_ca/A2A3/model/pipe.h
class TransferRates(BaseModel):
    """Bytes per cycle per core for each data path, plus per-instruction fixed overheads in cycles.

    An overhead is the instruction's whole fixed cost: a GM copy's read or write latency is folded into it, since
    consecutive copies on one pipe do not overlap their latency (pto-isa tload: 8 and 32 copies cost 8 and 32
    single copies; docs/timing.md, "latency").
    GM reads: min(per-core rate, chip cap / active cores). [CONFLICT] gm_to_l1 is measured at 128 (pto-isa tload,
    GM -> UB); the INI's l2 read rate is 110 and pto-isa's tloadconv GM -> L1 points fit about 20 + bytes/134:
    set gm_to_l1=110 for the INI, or gm_to_l1=134 and mte2_overhead=20 for tloadconv.
    L1->L0: the Ascend C table (256 A / 128 B, pypto agrees) is the default; the INI says 512 / 256 [CONFLICT]:
    set l1_to_l0a/l1_to_l0b to 512/256 to use the INI reading.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    gm_to_l1: float = 128.0  # per-core GM read: pto-isa tload c01-c09 fit (measured); INI l2 read 110, pypto 87
    l0c_to_gm: float = 86.0  # per-core GM write: INI l2 write; pypto 87; Fixpipe also caps at fixpipe_elems
    chip_gm_bytes_per_cycle: float = 833.0  # ~1.5 TB/s HBM at 1.8 GHz (pto-kernels roofline note); modelling choice
    l1_to_l0a: float = 256.0  # asc-devkit performance table; pypto l0aWrBandWidth_ 256
    l1_to_l0b: float = 128.0  # asc-devkit performance table; pypto l0bWrBandWidth_ 128
    fixpipe_elems: float = 64.0  # L0C elements per cycle: asc-devkit table (fp32->fp16 to L1; taken for GM too)
    l1_init_bytes: float = 64.0  # InitConstValue fill rate: modelling choice
    mte2_overhead: int = 264  # GM -> L1/UB copy: pto-isa tload c01-c09 fit (measured); pypto 347 + 4 latency
    mte3_overhead: int = 207  # UB/L1 -> GM copy: pypto ddrWrLatency_ 203 + 4 (a model, not measured)
    mte1_overhead: int = 10  # LoadData: modelling choice (pypto's 9 + 16 / 27 + 16 latency overlaps the next load)
    mmad_overhead: int = 6  # pto-isa tmatmul (profiling = fractals + 6 on all fp16/fp32 cases); pypto 20
    fixpipe_overhead: int = 207  # L0C -> GM: pypto ddrWrLatency_ 203 + 4 (a model, not measured)
    sync_latency: int = 2  # a SetFlag reaching its waiting pipe: modelling choice
    # arch 3510 only (the 950's new paths; asc-devkit NPU架构版本3510.md bandwidth table, INI [AICoreMemoryRates]
    # agrees): L1 -> UB on MTE1, UB -> L1 on MTE3, L0C -> UB on FIX. Not read on arch 2201, which has no such path.
    l1_to_ub: float = 128.0
    ub_to_l1: float = 128.0
    l0c_to_ub: float = 128.0


class Platform(BaseModel):
    """One SoC. Build presets with `get_platform(name)`; change any field with `platform.with_overrides(...)`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    npu_arch: Literal[2201, 3510]
    aic_cores: int = Field(ge=1, le=1024)
    aiv_cores: int = Field(ge=0, le=2048)
    clock_mhz: float = Field(gt=0)
    L1: int = Field(gt=0, description="L1 bytes per core")
    L0A: int = Field(gt=0)
    L0B: int = Field(gt=0)
    L0C: int = Field(gt=0)
    UB: int = Field(gt=0)
    BT: int = Field(gt=0)
    FB: int = Field(gt=0)
    L2: int = Field(gt=0)
    hbm_bytes: int = Field(gt=0)
    l1_reserved: int = Field(default=128, ge=0, description="bytes of L1 kept by the runtime (KFC reserve)")
    alignments: Alignments = Alignments()
    cube: CubeRates = CubeRates()
    rates: TransferRates = TransferRates()
    hf32_mantissa_bits: Literal[10, 11] = 11
    l0a_layout: Literal["ZZ", "NZ"] = "ZZ"
    event_ids: int = 8
    queue_depth: int = 32  # instructions a pipe's queue holds: pypto isqMaxOtsd_ 32
    # What host code reads as GetCoreMemBw(L2) (B/cycle): the INI's l2 read rate. Host tilings use it; the
    # timing model's GM read rate (rates.gm_to_l1) is calibrated separately and may differ.
    l2_read_rate: float = Field(default=110.0, gt=0)
    scalar_issue_cycles: int = 1  # cycles the scalar unit needs to dispatch one instruction: modelling choice
    # vector instruction costs (isa/vector/timing.py): pto-isa's 910B3 measurements, or asc-devkit's published
    # parallelism with pypto's latencies [CONFLICT]: the measured binary ops take twice the published cycles
    vector_timing: Literal["measured", "published"] = "measured"

    @field_validator("L1", "L0A", "L0B", "L0C", "UB", "BT", "FB")
    @classmethod
    def _multiple_of_32(cls, value: int, info) -> int:
        if value % 32:
            raise ValueError(f"{info.field_name}={value} must be a multiple of 32 bytes")
        return value

    @property
    def usable_L1(self) -> int:
        """L1 bytes a kernel may allocate (total less the runtime reserve)."""
        return self.L1 - self.l1_reserved

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / self.clock_mhz

    def capacity(self, position: str) -> int:
        """Bytes of a buffer by name: 'L1', 'L0A', 'L0B', 'L0C', 'UB', 'BT', 'FB'.

        The whole physical L1: the 128-byte KFC reserve is a software budget (the base tiling keeps it, the
        basic-block tiling fills all 512 KiB), so the hardware buffer itself is not smaller."""
        return getattr(self, position)

    def alignment(self, position: str) -> int:
        return getattr(self.alignments, position)

    def with_overrides(self, **changes) -> "Platform":
        """A new platform with some fields changed; nested models take dicts (rates={'gm_to_l1': 32}).

        Give it a name with name=...; without one, a platform that differs from this one is called
        "<this name>+overrides", so that reports and tilings never show a changed chip under a preset's name.
        """
        data = self.model_dump()
        for key, value in changes.items():
            if key not in data:
                raise ValueError(f"unknown platform field {key!r}; fields are {sorted(data)}")
            if isinstance(data[key], dict) and isinstance(value, dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        result = Platform.model_validate(data)
        if "name" not in changes and result.model_copy(update={"name": self.name}) != self:
            result = result.model_copy(update={"name": _overridden_name(self.name)})
        return result

    def to_json(self, path: str | Path | None = None) -> str:
        text = self.model_dump_json(indent=2)
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_json(cls, source: str | Path) -> "Platform":
        """Load from a JSON file path or a JSON string; the platform keeps the JSON's name.

        A JSON named after a preset whose values differ from that preset (a dumped preset, edited) is loaded as
        "<preset>+overrides": reports must not show a changed chip under the preset's name."""
        text = Path(source).read_text() if Path(str(source)).suffix == ".json" else str(source)
        platform = cls.model_validate(json.loads(text))
        preset = PRESETS.get(platform.name)
        if preset is not None and platform != preset:
            platform = platform.model_copy(update={"name": _overridden_name(platform.name)})
        return platform


OVERRIDDEN = "+overrides"


def _overridden_name(name: str) -> str:
    return name if name.endswith(OVERRIDDEN) else name + OVERRIDDEN


def _a2(name: str, cores: int, mhz: float, l2_mib: int = 192, hbm_gib: int = 64) -> Platform:
    return Platform(
        name=name, npu_arch=2201, aic_cores=cores, aiv_cores=2 * cores, clock_mhz=mhz,
        L1=512 * KiB, L0A=64 * KiB, L0B=64 * KiB, L0C=128 * KiB, UB=192 * KiB, BT=1 * KiB, FB=2 * KiB,
        L2=l2_mib * MiB, hbm_bytes=hbm_gib * 1024 * MiB,
    )


def _ascend950(name: str, cores: int, mhz: float, hbm_gib: int) -> Platform:
    """An Ascend 950 (NpuArch 3510) from hicann/runtime@681ef761 src/platform/platform_config/cann-dev/<name>.ini:
    [SoCInfo] cube_core_cnt / vector_core_cnt (AIC:AIV 1:2), memory_size, l2_size; [AICoreSpec] cube_freq,
    l1_size, l0_a/b/c_size, ub_size (253952: the 248 KiB usable of a 256 KiB UB, asc-devkit NPU架构版本3510.md),
    bt_size, fb0_size, l0a_layout_zN=1; [AICoreMemoryRates] l2_read/write_rate 100, l1_to_l0_a/b_rate 256,
    l1_to_ub / ub_to_l1 / l0_c_to_ub_rate 128. Alignments: the 3510 table of asc-devkit (the A2 values). The PR and
    DT INIs differ only in DDR rates (31 / 80 B/cycle per AIC) and HBM size: GM reads here use the L2 rate, the
    DDR rate is not modelled. Modelling choices (no 950 source): the chip GM cap 889 B/cycle and every
    per-instruction overhead (the A2/A3 ones); docs/ascend950.md has the table."""
    return Platform(
        name=name, npu_arch=3510, aic_cores=cores, aiv_cores=2 * cores, clock_mhz=mhz,
        L1=512 * KiB, L0A=64 * KiB, L0B=64 * KiB, L0C=256 * KiB, UB=253952, BT=4 * KiB, FB=4 * KiB,
        L2=128 * MiB, hbm_bytes=hbm_gib * 1024 * MiB, l1_reserved=0,  # ASC_L1_SIZE = 512 KiB: no KFC reserve
        cube=CubeRates(float32=1, hf32=8),  # Cube指令理论性能汇总 table 2 (3510): fp32 cube_k 1, HF32 8
        rates=TransferRates(gm_to_l1=100.0, l0c_to_gm=100.0, chip_gm_bytes_per_cycle=889.0,
                            l1_to_l0a=256.0, l1_to_l0b=256.0, l1_to_ub=128.0, ub_to_l1=128.0, l0c_to_ub=128.0),
        hf32_mantissa_bits=10, l0a_layout="NZ", l2_read_rate=100.0,  # HF32: 10-bit mantissa on 3510
    )


PRESETS: dict[str, Platform] = {
    "Ascend910B1": _a2("Ascend910B1", 24, 1850),
    "Ascend910B2": _a2("Ascend910B2", 24, 1800),
    "Ascend910B3": _a2("Ascend910B3", 20, 1800),
    "Ascend910B4": _a2("Ascend910B4", 20, 1500, l2_mib=96, hbm_gib=32),
    # One die of an Atlas A3 (Ascend910_9391/9392): same core as A2 at 1850 MHz.
    "Ascend910_9391": _a2("Ascend910_9391", 24, 1850),
    **{name: _ascend950(name, cores, mhz, hbm_gib) for name, cores, mhz, hbm_gib in (
        ("Ascend950PR_9589", 32, 1650, 128), ("Ascend950PR_9599", 36, 1800, 128),
        ("Ascend950DT_9581", 32, 1650, 144), ("Ascend950DT_9591", 36, 1800, 144))},
}
PRESETS["AtlasA3"] = PRESETS["Ascend910_9391"]


def get_platform(platform: "str | Platform") -> Platform:
    """A preset by name (see PRESETS), or the platform object itself."""
    if isinstance(platform, Platform):
        return platform
    if isinstance(platform, str) and platform in PRESETS:
        return PRESETS[platform]
    raise ValueError(f"platform={platform!r} is not a known preset; choose one of {sorted(PRESETS)} "
                     "or pass a Platform object")
