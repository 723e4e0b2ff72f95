"""The Ascend 950's (arch 3510) regbase vector micro-API `AscendC::Reg`, as far as the arch35 dx kernel's vector
side uses it (conv_bp_input_sub_func_vector_intrinsics.h: the kernel-split re-interleave, the group / C04 weight
gathers): RegTensor, MaskReg, CreateMask, UpdateMask, LoadAlign, StoreAlign, Gather, Interleave, Duplicate, Adds.
Kernels write `Reg.Gather(dst, base, index, mask)` as Ascend C writes `AscendC::Reg::Gather(...)`.

Sources: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Reg矢量计算/: 寄存器数据类型/RegTensor.md (VL = 256 B),
MaskReg.md (one mask bit per byte lane: element e of a b16 / b32 operation reads bit 2e / 4e; the patterns;
UpdateMask's count), Reg数据搬入/连续对齐搬入（LoadAlign）.md, Reg数据搬出/连续对齐搬出（StoreAlign）.md,
Reg数据搬入/离散搬入（Gather）.md (element indices from a 32 B aligned UB base; b8 sources zero-extend into b16),
数据重排/Interleave.md (with the count-form example of Memory矢量计算/数据重排（ISASI）/Interleave.md: dst0 interleaves
the low halves of src0 and src1, dst1 the high halves), 数据填充/Duplicate.md, 基础算术/Adds.md.

A MaskReg is loaded from UB by LoadAlign<T>(MaskReg&, addr) (Reg数据搬入/MaskReg搬入（LoadAlign）.md: VL / 8 = 32
bytes, DIST_NORM, 32 B aligned; the C04 weight gather's tail mask). [own rule: the page gives no bit order; bit j of
byte b is lane 8b + j (little-endian words), which makes the dx kernel's 0xff per uint32 word the first 4 b16
elements of every 16, as its comments say]. Such a mask is known only when the load has run: Gather reads its mask
then; StoreAlign and Adds, whose write ranges are fixed when they issue, refuse one by name.

Each call is one instruction on PIPE_V. A RegTensor's values live in the object and change when the instruction
runs (in program order on PIPE_V), so records that read registers are not independent of the records before them:
a replay must run the VF's records in order. Own rules, flagged: a masked-off lane of Gather / Adds is zero
(zeroing, not merging); StoreAlign writes only the active lanes (its write range ends at the last one); Gather's
declared read range is its base to the end of UB (the indices are register values known only when it runs; an index
past UB faults then); each Reg instruction costs one cycle (no 950 vector timing source used); CreateMask /
UpdateMask build the mask in the front end (no record). Gather's base need only be element-aligned ([CONFLICT] with
the page's 32 B: the dx kernel gathers from any element of its ND weight). Only the normal distribution modes
(DIST_NORM) and single-register forms are modelled.
"""
from __future__ import annotations

from enum import Enum

import numpy as np

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import BLOCK, check_aligned, current_core
from ascend_sim.machine.faults import OutOfBounds, ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

V = Pipe.V
VL = 256  # bytes in one vector register


class MaskPattern(Enum):
    ALL = 0
    VL1 = 1
    VL2 = 2
    VL3 = 3
    VL4 = 4
    VL8 = 5
    VL16 = 6
    VL32 = 7
    VL64 = 8
    VL128 = 9
    M3 = 10
    M4 = 11
    H = 12
    Q = 13
    ALLF = 15


class RegTensor:
    """One vector register of VL bytes holding VL / sizeof(T) elements of T (zero until written)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.data = np.zeros(VL // self.dtype.itemsize, self.dtype)

    def __repr__(self) -> str:
        return f"RegTensor<{self.dtype}>"


class MaskReg:
    """VL / 8 bits, one per byte lane of a register: element e of a b16 operation is active when bit 2e is set.
    `loaded`: the bits come from UB (LoadAlign), so they are known only when that instruction has run."""

    def __init__(self, bits: np.ndarray):
        self.bits = np.asarray(bits, dtype=bool).copy()
        self.loaded = False

    def active(self, dtype) -> np.ndarray:
        """The active elements of an operation on `dtype`."""
        return self.bits[::np.dtype(dtype).itemsize].copy()


def _first(count: int, dtype) -> MaskReg:
    size = np.dtype(dtype).itemsize
    bits = np.zeros(VL, bool)
    bits[:count * size:size] = True
    return MaskReg(bits)


def CreateMask(dtype, mode: MaskPattern = MaskPattern.ALL) -> MaskReg:
    """CreateMask<T, mode>(): the pattern's elements of T active."""
    n = VL // np.dtype(dtype).itemsize
    counts = {MaskPattern.ALL: n, MaskPattern.ALLF: 0, MaskPattern.H: n // 2, MaskPattern.Q: n // 4,
              MaskPattern.VL1: 1, MaskPattern.VL2: 2, MaskPattern.VL3: 3, MaskPattern.VL4: 4, MaskPattern.VL8: 8,
              MaskPattern.VL16: 16, MaskPattern.VL32: 32, MaskPattern.VL64: 64, MaskPattern.VL128: 128}
    if mode in counts:
        return _first(min(counts[mode], n), dtype)
    size = np.dtype(dtype).itemsize
    step = 3 if mode is MaskPattern.M3 else 4
    bits = np.zeros(VL, bool)
    bits[:n * size:size * step] = True
    return MaskReg(bits)


def UpdateMask(dtype, scalarValue: int) -> tuple[MaskReg, int]:
    """UpdateMask<T>(scalarValue): the first min(scalarValue, VL_T) elements active, and the count left
    (C++ decrements scalarValue in place; Python returns it)."""
    n = VL // np.dtype(dtype).itemsize
    return _first(min(int(scalarValue), n), dtype), max(int(scalarValue) - n, 0)


RegLoadOperands = operands_type("RegLoadOperands", "buf address reg", "reg = VL bytes of buf at address.")
RegStoreOperands = operands_type("RegStoreOperands", "buf address reg active",
                                 "buf at address = reg where `active` (the mask's lanes).")
RegMaskLoadOperands = operands_type("RegMaskLoadOperands", "buf address mask",
                                    "mask's VL bits = the VL / 8 bytes of buf at address (bit j of byte b: lane "
                                    "8b + j).")
RegGatherOperands = operands_type("RegGatherOperands", "buf address src_dtype dst index mask",
                                  "dst[i] = buf's src_dtype element index[i] from address where the mask (read when "
                                  "the instruction runs) is active for dst's type, else 0.")
RegInterleaveOperands = operands_type("RegInterleaveOperands", "dst0 dst1 src0 src1",
                                      "dst0 / dst1 = src0 and src1 interleaved.")
RegDuplicateOperands = operands_type("RegDuplicateOperands", "dst value", "dst = value in every lane.")
RegAddsOperands = operands_type("RegAddsOperands", "dst src value active", "dst = src + value where active, else 0.")


def _cost(ops, model) -> float:
    return 1.0


def _execute_load(rec) -> None:
    buf, address, reg = rec.args
    reg.data[...] = buf.view(reg.dtype, address, reg.data.size)


def _execute_mask_load(rec) -> None:
    buf, address, mask = rec.args
    mask.bits[...] = np.unpackbits(buf.view(np.uint8, address, VL // 8), bitorder="little").astype(bool)


def _execute_store(rec) -> None:
    buf, address, reg, active = rec.args
    span = active.size  # up to the last active lane (StoreAlign below)
    target = buf.view(reg.dtype, address, span)
    target[active] = reg.data[:span][active]


def _execute_gather(rec) -> None:
    buf, address, src_dtype, dst, index, mask = rec.args
    active = mask.active(dst.dtype)
    idx = index.data.astype(np.int64)[:dst.data.size]
    lanes = np.flatnonzero(active)
    last = (buf.capacity - address) // src_dtype.itemsize
    if lanes.size and int(idx[lanes].max()) >= last:
        raise OutOfBounds(f"Reg::Gather index {int(idx[lanes].max())} reads past UB (base {address}, {last} "
                          f"elements of {src_dtype} left)", instruction="Reg::Gather", pipe="V", buffer="UB",
                          addr_range=(address, buf.capacity))
    values = np.zeros(dst.data.size, dst.dtype)
    source = buf.view(src_dtype, address, last)
    picked = source[idx[lanes]]
    values[lanes] = picked.view(np.uint8).astype(dst.dtype) if src_dtype.itemsize < dst.dtype.itemsize else picked
    dst.data[...] = values


def _execute_interleave(rec) -> None:
    dst0, dst1, src0, src1 = rec.args
    half = src0.data.size // 2
    a, b = src0.data.copy(), src1.data.copy()  # a destination may also be a source
    dst0.data[0::2], dst0.data[1::2] = a[:half], b[:half]
    dst1.data[0::2], dst1.data[1::2] = a[half:], b[half:]


def _execute_duplicate(rec) -> None:
    dst, value = rec.args
    dst.data[...] = value


def _execute_adds(rec) -> None:
    dst, src, value, active = rec.args
    with np.errstate(all="ignore"):
        result = (src.data + np.asarray(value).astype(src.dtype)).astype(dst.dtype)
    dst.data[...] = np.where(active, result, dst.dtype.type(0))


_REG = Kind.VECTOR_REGISTER
LOAD_ALIGN = define("Reg::LoadAlign", V, kind=_REG, operands=RegLoadOperands, cost=_cost, execute=_execute_load,
                    doc="UB -> register: VL bytes.")
LOAD_ALIGN_MASK = define("Reg::LoadAlign(MaskReg)", V, kind=_REG, operands=RegMaskLoadOperands, cost=_cost,
                         execute=_execute_mask_load, doc="UB -> mask register: VL / 8 bytes (DIST_NORM).")
STORE_ALIGN = define("Reg::StoreAlign", V, kind=_REG, operands=RegStoreOperands, cost=_cost, execute=_execute_store,
                     doc="register -> UB: the mask's active elements.")
GATHER = define("Reg::Gather", V, kind=_REG, operands=RegGatherOperands, cost=_cost, execute=_execute_gather,
                doc="UB -> register: element i from base + index[i] where the mask is active.")
INTERLEAVE = define("Reg::Interleave", V, kind=_REG, operands=RegInterleaveOperands, cost=_cost,
                    execute=_execute_interleave, doc="dst0 / dst1 = src0 and src1 interleaved, low halves then high "
                    "halves.")
DUPLICATE = define("Reg::Duplicate", V, kind=_REG, operands=RegDuplicateOperands, cost=_cost,
                   execute=_execute_duplicate, doc="register = one scalar.")
ADDS = define("Reg::Adds", V, kind=_REG, operands=RegAddsOperands, cost=_cost, execute=_execute_adds,
              doc="register = register + scalar, masked.")


def _ub_address(core, name, tensor, role, alignment=BLOCK):
    if tensor.__class__ is not LocalTensor or tensor.buffer.name != "UB":
        raise core.fault(ParameterOutOfRange(f"{role} must be a UB address (a LocalTensor in UB)"), name, V)
    if tensor.address % alignment:
        check_aligned(core, name, V, tensor, alignment, role)
    return tensor.buffer, tensor.address


def _registers(core, name, *regs):
    for reg in regs:
        if not isinstance(reg, RegTensor):
            raise core.fault(ParameterOutOfRange(f"{reg!r} is not a RegTensor"), name, V)


def _begin(name):
    core = current_core()
    require_arch35(core, name, V, name)
    return core


def LoadAlign(dstReg, srcAddr) -> None:
    """LoadAlign(RegTensor, addr): VL bytes; LoadAlign<T>(MaskReg, addr): VL / 8 bytes into the mask (the
    MaskReg搬入（LoadAlign） page, DIST_NORM; T is srcAddr's type: b8, b16, b32 or b64)."""
    name = "Reg::LoadAlign"
    core = _begin(name)
    if isinstance(dstReg, MaskReg):
        return _load_mask(core, dstReg, srcAddr)
    _registers(core, name, dstReg)
    buf, address = _ub_address(core, name, srcAddr, "srcAddr")
    core.issue(LOAD_ALIGN, V, {"dtype": dstReg.dtype.name}, ((buf, address, address + VL),), (),
               RegLoadOperands(buf, address, dstReg))


def _load_mask(core, mask: MaskReg, srcAddr) -> None:
    name = "Reg::LoadAlign(MaskReg)"
    if srcAddr.__class__ is LocalTensor and srcAddr.dtype.itemsize not in (1, 2, 4, 8):
        raise core.fault(ParameterOutOfRange(f"srcAddr of {srcAddr.dtype}: a MaskReg loads from b8, b16, b32 or b64"),
                         name, V)
    buf, address = _ub_address(core, name, srcAddr, "srcAddr", VL // 8)
    mask.loaded = True
    core.issue(LOAD_ALIGN_MASK, V, {"dtype": srcAddr.dtype.name}, ((buf, address, address + VL // 8),), (),
               RegMaskLoadOperands(buf, address, mask))


def _issue_time_mask(core, name, mask: MaskReg, dtype) -> np.ndarray:
    """The active lanes an instruction needs when it is issued (its write range): a mask loaded from UB is not
    known then."""
    if mask.loaded:
        raise core.fault(ParameterOutOfRange(
            "a MaskReg loaded from UB (LoadAlign) as this instruction's mask: modelled for Reg::Gather only"), name, V)
    return mask.active(dtype)


def StoreAlign(dstAddr, srcReg: RegTensor, mask: MaskReg) -> None:
    name = "Reg::StoreAlign"
    core = _begin(name)
    _registers(core, name, srcReg)
    buf, address = _ub_address(core, name, dstAddr, "dstAddr")
    active = _issue_time_mask(core, name, mask, srcReg.dtype)
    # only the active lanes are written: the range ends at the last one (the dx kernel's gather index stores its
    # last 16 lanes at the end of a one-register buffer that ends UB)
    lanes = np.flatnonzero(active)
    active = active[:int(lanes[-1]) + 1] if lanes.size else active[:0]
    end = address + active.size * srcReg.dtype.itemsize
    core.issue(STORE_ALIGN, V, {"dtype": srcReg.dtype.name}, (), ((buf, address, end),),
               RegStoreOperands(buf, address, srcReg, active))


# Gather's table 3: (dst, src) -> index type
_GATHER_TYPES = {("int16", "int8"): "uint16", ("int16", "int16"): "uint16", ("uint16", "uint8"): "uint16",
                 ("uint16", "uint16"): "uint16", ("float16", "float16"): "uint16", ("bfloat16", "bfloat16"): "uint16",
                 ("int32", "int32"): "uint32", ("uint32", "uint32"): "uint32", ("float32", "float32"): "uint32"}


def Gather(dstReg: RegTensor, baseAddr, index: RegTensor, mask: MaskReg) -> None:
    """dstReg[i] = baseAddr[index[i]] (elements of baseAddr's type) where the mask is active, else 0."""
    name = "Reg::Gather"
    core = _begin(name)
    _registers(core, name, dstReg, index)
    src_dtype = baseAddr.dtype
    # [CONFLICT] Gather.md asks a 32 B aligned baseAddr, but the dx kernel's GatherDn2Nz4Group gathers from
    # srcAddr + kIdx (any element): the simulator follows the shipped kernel and takes an element-aligned base
    buf, address = _ub_address(core, name, baseAddr, "baseAddr", src_dtype.itemsize)
    want = _GATHER_TYPES.get((dstReg.dtype.name, src_dtype.name))
    if want is None or index.dtype.name != want:
        raise core.fault(ParameterOutOfRange(
            f"Gather of {src_dtype} into RegTensor<{dstReg.dtype}> with a {index.dtype} index is not in table 3 "
            f"(index type for this pair: {want})"), name, V)
    core.issue(GATHER, V, {"dtype": dstReg.dtype.name}, ((buf, address, buf.capacity),), (),
               RegGatherOperands(buf, address, src_dtype, dstReg, index, mask))


def Interleave(dstReg0: RegTensor, dstReg1: RegTensor, srcReg0: RegTensor, srcReg1: RegTensor) -> None:
    name = "Reg::Interleave"
    core = _begin(name)
    _registers(core, name, dstReg0, dstReg1, srcReg0, srcReg1)
    if dstReg0 is dstReg1:
        raise core.fault(ParameterOutOfRange("dstReg0 and dstReg1 may not be the same RegTensor"), name, V)
    if len({r.dtype for r in (dstReg0, dstReg1, srcReg0, srcReg1)}) != 1:
        raise core.fault(ParameterOutOfRange("the four RegTensors must have one data type"), name, V)
    core.issue(INTERLEAVE, V, {"dtype": dstReg0.dtype.name}, (), (),
               RegInterleaveOperands(dstReg0, dstReg1, srcReg0, srcReg1))


def Duplicate(dstReg: RegTensor, scalarValue) -> None:
    name = "Reg::Duplicate"
    core = _begin(name)
    _registers(core, name, dstReg)
    core.issue(DUPLICATE, V, {"dtype": dstReg.dtype.name, "scalarValue": scalarValue}, (), (),
               RegDuplicateOperands(dstReg, dstReg.dtype.type(scalarValue)))


def Adds(dstReg: RegTensor, srcReg: RegTensor, scalarValue, mask: MaskReg) -> None:
    name = "Reg::Adds"
    core = _begin(name)
    _registers(core, name, dstReg, srcReg)
    core.issue(ADDS, V, {"dtype": dstReg.dtype.name, "scalarValue": scalarValue}, (), (),
               RegAddsOperands(dstReg, srcReg, scalarValue, _issue_time_mask(core, name, mask, dstReg.dtype)))


__all__ = ["MaskPattern", "RegTensor", "MaskReg", "CreateMask", "UpdateMask", "LoadAlign", "StoreAlign", "Gather",
           "Interleave", "Duplicate", "Adds", "VL"]
