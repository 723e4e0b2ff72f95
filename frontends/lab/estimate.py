"""An analytical estimate of a Conv3DBackpropInputV2 tiling: no simulation, only the tiling and the platform.

The kernel's loop nest is walked at the level of tiles (one baseM x baseN block of dx for one output depth), not
instructions: per core, the tasks the driver gives it (basic-block tasks, or the general driver's single-core
shape), per task the M x N tiles, per tile the kernel planes kd that reach its output depth, and per plane the K
loop in closed form (full K steps and the tail). Each pipe's busy cycles are the sum over its instructions of their
cost: the operands each instruction would be issued with (the few fields its cost reads) priced by the instruction's
own cost function (`spec.cost(operands, model)`, the one the simulator's schedulers call), so no formula is written
twice:

  MTE2  GM->L1: the A1 loads (dy rows of stepKa K steps) and B1 loads (weights of stepKb K steps), InitConstValue
        before a zero-inserting A1 load;
  MTE1  L1->L0A: one LoadData 3Dv2 per K step (its rate set by the rows it touches), L1->L0B: one transposing
        LoadData 2D per K fractal (fp16/bf16) or one LoadData 3Dv2 per 8 couts (fp32; per 16 with a 1x1 kernel),
        taken to touch one row of its fmap (a load that straddles two is slower in the simulator);
  M     one Mmad per K step;
  FIX   one Fixpipe per computed tile.

The roofline is the busiest pipe of the busiest core. With a single A1 buffer (al1Pbuffer = 1) MTE1 cannot
overlap the A1 reloads (it runs in order and each K step loads A first), so the estimate is the larger of the
roofline and MTE1 plus those reloads. It ignores the other waits the scheduler adds (between MTE2 and MTE1 over
the L1 buffers, between MTE1 and M at each K step, filling and draining the pipeline), the init-output pass and
the vector cores of a MIX launch; all of them only add cycles, so the roofline is a lower bound of the simulated
cycles (the sweep prunes by it). docs/tiling_lab.md says where that matters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ascend_sim.isa.cube import MMAD, MmadOperands
from ascend_sim.isa.fixpipe import FIXPIPE, FixpipeOperands
from ascend_sim.isa.mte1 import LOAD_DATA_2D, LOAD_DATA_3DV2, Load2DOperands, Load3DOperands
from ascend_sim.isa.mte2 import DATA_COPY, INIT_CONST_VALUE, CopyOperands, InitConstOperands
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.platform import get_platform
from ascend_sim.passes.schedule import CostModel

PIPES = ("MTE2", "MTE1", "M", "FIX")
BLOCK = 16
FRACTAL_BYTES = 512


@dataclass
class Estimate:
    """Per-pipe busy cycles of the busiest core, chip-wide bytes per path and cube fractals, and the roofline."""

    busy: dict[str, float]
    bytes_by_path: dict[str, int]
    fractals: int
    cores: int
    core_busy: list[dict[str, float]] = field(repr=False, default_factory=list)  # per core, by block index
    serial_l1: float = 0.0  # MTE1 plus the loads into a single A1 buffer, on the core where that is largest

    @property
    def roofline(self) -> float:
        """The busiest pipe of the busiest core."""
        return max(self.busy.values())

    @property
    def cycles(self) -> float:
        """The roofline, or MTE1 and the loads into a single A1 buffer taking turns when that is longer."""
        return max(self.roofline, self.serial_l1)

    @property
    def bound(self) -> str:
        return max(self.busy, key=self.busy.get)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class _Walker:
    """Accumulates pipe cycles and bytes for one core while the tiles are walked."""

    def __init__(self, t, platform, dtype_bytes: int, out_bytes: int, block_dim: int, hf32: bool):
        self.t, self.p = t, platform
        self.model = CostModel(platform, block_dim)  # the launch's share of the GM bandwidth, as the run's
        self.db, self.ob = dtype_bytes, out_bytes
        self.operand = "hf32" if dtype_bytes == 4 and hf32 else ("float32" if dtype_bytes == 4 else "float16")
        # the destinations the loads' rates depend on (their cost reads the destination buffer's name)
        self.l0a, self.l0b = (Buffer(name, platform.capacity(name), platform.alignment(name))
                              for name in ("L0A", "L0B"))
        self.hkwk = t.hk * t.wk
        self.hkwkc0 = self.hkwk * t.c0
        self.k_cost = lru_cache(maxsize=None)(self._k_loop)

    # ------------------------------------------------------------------------------------------ costs
    # Each is the instruction's own cost of the operands it would be issued with (only the fields it reads).
    def _mte2(self, nbytes: float, count: int = 1) -> float:
        """`count` GM -> L1 DataCopys moving `nbytes` in all (the cost is linear in the bytes)."""
        if not count:
            return 0.0
        model = self.model
        return (DATA_COPY.cost(CopyOperands(nbytes=nbytes), model)
                + (count - 1) * DATA_COPY.cost(CopyOperands(nbytes=0), model))

    def _load3d(self, nbytes: int, rows: int, to_a: bool) -> float:
        # the kernel's LoadData 3Dv2 reads its L1 fmap with strideW 1 (zeros are inserted in L1)
        ops = Load3DOperands(dbuf=self.l0a if to_a else self.l0b, stride_w=1, rows=rows, nbytes=nbytes)
        return LOAD_DATA_3DV2.cost(ops, self.model)

    def _load2d_l0b(self, nbytes: int) -> float:
        return LOAD_DATA_2D.cost(Load2DOperands(dbuf=self.l0b, nbytes=nbytes), self.model)

    def _mmad(self, m: int, n: int, k: int) -> float:
        c0 = self.t.c0
        ops = MmadOperands(m1=_ceil(m, BLOCK), n1=_ceil(n, BLOCK), k1=_ceil(k, c0), c0=c0, operand=self.operand)
        return MMAD.cost(ops, self.model)

    def fixpipe(self, elems: int) -> float:
        return FIXPIPE.cost(FixpipeOperands(elems=elems, nbytes=elems * self.ob), self.model)

    def _a1_load(self, cout1: int, ho_size: int, skip: int) -> tuple[float, float, int]:
        """(MTE2 cycles, init cycles, bytes) of one A1 load of cout1 channel blocks and ho_size window rows."""
        t = self.t
        if ho_size <= skip or cout1 <= 0:
            copies, nbytes = 0, 0
        else:
            rows = _ceil(ho_size - skip, t.strideH) if t.strideH > 1 or t.strideW > 1 else ho_size
            if t.strideW > 1:
                copies = cout1 * rows
            elif t.strideH > 1:
                copies = cout1
            else:
                copies = 1 if (t.ho - ho_size) * t.wo <= 65535 else cout1
            nbytes = cout1 * rows * t.wo * 32
        init = 0.0
        if t.strideW * t.strideH > 1:
            init = INIT_CONST_VALUE.cost(InitConstOperands(nbytes=self.a1_buffer), self.model)
        # a load of zero blocks still issues one (empty) DataCopy: an issue slot, no cost
        return self._mte2(nbytes, copies), init, nbytes

    def _k_loop(self, m_use: int, m_ext: int, n_use: int, rows_a: int, ho_size: int, skip: int,
                k_iter: int, tail_k: int, cout1_total: int, load_b1: bool) -> tuple:
        """Pipe cycles and bytes of one kernel plane's K loop for one tile (closed form: full steps + tail)."""
        t = self.t
        c0, db = t.c0, self.db
        mte2 = init = mte1 = m = 0.0
        a_mte2 = 0.0  # the A1 loads' share of MTE2
        gm_l1 = l0a = l0b = fractals = 0
        # A1 / B1 loads: every stepKa / stepKb K steps, the last one short
        for step, is_a in ((t.stepKa, True), (t.stepKb, False)):
            if not is_a and not load_b1:
                continue
            rounds = _ceil(k_iter, step)
            for i in range(rounds):
                ks = step if i < rounds - 1 else k_iter - (rounds - 1) * step
                k_elems = (ks - 1) * t.baseK + tail_k if i == rounds - 1 else ks * t.baseK
                first = i * step * t.baseK
                per_cout1 = c0 if (t.hk * t.wk == 1 and t.loadB2Condition == 2) else self.hkwkc0
                cout1 = min(k_elems // per_cout1 if per_cout1 else 0, cout1_total - first // per_cout1)
                if is_a:
                    c, ini, nb = self._a1_load(max(cout1, 0), ho_size, skip)
                    mte2, init, gm_l1 = mte2 + c, init + ini, gm_l1 + nb
                    a_mte2 += c + ini
                else:
                    cin1 = _ceil(n_use, c0)
                    if db == 4:
                        cout_blocks = _ceil(k_elems // self.hkwkc0, 2) * BLOCK
                        nb = cin1 * self.hkwk * cout_blocks * c0 * db
                    else:
                        nb = cin1 * self.hkwk * max(cout1, 0) * c0 * c0 * db
                    mte2 += self._mte2(nb)
                    gm_l1 += nb
        # per K step: A to L0A, B to L0B, one Mmad
        for k, count in ((t.baseK, k_iter - 1), (tail_k, 1)):
            if count <= 0:
                continue
            a_bytes = m_ext * k * db
            mte1 += count * self._load3d(a_bytes, rows_a, True)
            l0a += count * a_bytes
            if db == 2:
                loads, per = k // c0, _ceil(n_use, c0) * FRACTAL_BYTES
                b_bytes = loads * per
                mte1 += count * loads * self._load2d_l0b(per)
            else:  # one LoadData 3Dv2 of 16 couts x n_use per C0 (8) couts of K, per 16 with a 1x1 kernel
                loads = _ceil(k, BLOCK) if t.loadB2Condition == 2 else k // c0
                per = BLOCK * n_use * db
                b_bytes = loads * per
                mte1 += count * loads * self._load3d(per, 1, False)
            l0b += count * b_bytes
            f = _ceil(m_use, BLOCK) * _ceil(n_use, BLOCK) * _ceil(k, c0)
            m += count * self._mmad(m_use, n_use, k)
            fractals += count * f
        return mte2 + init, mte1, m, gm_l1, l0a, l0b, fractals, a_mte2


def estimate_conv3d_dx(tiling, platform=None, *, out_dtype_bytes: int | None = None) -> Estimate:
    """The analytical estimate of a Conv3DBackpropInputV2TilingData on a platform (default: its own)."""
    plat = get_platform(platform if platform is not None else tiling.platform)
    t = tiling.conv3DDxTiling
    p = tiling.params
    db = 4 if tiling.dtype == "float32" else 2
    walker = _Walker(_Fields(t, tiling.loadB2Condition), plat, db, out_dtype_bytes or db, p.coreNum,
                     bool(t.hf32Flag))
    hkwk = t.hk * t.wk
    cal_rows = _cal_fmap_h(t, t.baseM * t.stepM)
    ho_expand = (t.ho - 1) * t.strideH + 1
    a_rows = min(cal_rows, ho_expand)
    a1 = a_rows * t.wo * t.strideW * (t.stepKa * t.baseK // hkwk) * db
    walker.a1_buffer = a1
    totals = dict.fromkeys(PIPES, 0.0)
    paths = {"GM->L1": 0, "L1->L0A": 0, "L1->L0B": 0, "L0C->GM": 0}
    fractals = 0
    per_core, serial_cycles = [], []
    for core in range(p.coreNum):
        busy = dict.fromkeys(PIPES, 0.0)
        serial = 0.0
        tasks = _basic_block_tasks(t, p, core) if tiling.useBasicBlock else _general_tasks(t, p, core)
        b1_full = (t.dk == 1 and t.bl1Pbuffer == 1 and t.baseK * t.stepKb >= t.singleCoreCout * hkwk
                   and t.stepN * t.baseN // t.c0 >= t.singleCoreCin1)
        b1_loaded = False
        for m_size, n_size, cout1, din, din_start, ho_start in tasks:
            m_iter, n_iter = _ceil(m_size, t.baseM), _ceil(_ceil(n_size, t.c0) * t.c0, t.baseN)
            tail_m, tail_n = m_size - (m_iter - 1) * t.baseM, _ceil(n_size, t.c0) * t.c0 - (n_iter - 1) * t.baseN
            k_total = cout1 * hkwk * t.c0
            k_iter = _ceil(k_total, t.baseK)
            tail_k = k_total - (k_iter - 1) * t.baseK
            for d in range(din_start, din_start + din):
                planes = sum(1 for kd in range(t.dk) if _valid_dout(t, d, kd))
                for mi in range(m_iter):
                    m_use = tail_m if mi == m_iter - 1 else t.baseM
                    m_ext = _ceil(m_use, BLOCK) * BLOCK if mi == m_iter - 1 else m_use
                    ho_idx = ho_start + mi * t.baseM // t.wi
                    ho_size = _cur_ho_size(cal_rows, ho_expand, ho_idx)
                    skip = _skip_lines(t.strideH, ho_idx)
                    if ho_size <= skip and t.initOutputFlag == 1:
                        continue
                    m_start = mi * t.baseM % t.wi
                    rows_a = _ceil(m_start + m_ext, t.wi)
                    for ni in range(n_iter):
                        if planes == 0:
                            continue
                        n_use = tail_n if ni == n_iter - 1 else t.baseN
                        load_b1 = not (b1_full and b1_loaded)
                        cost = walker.k_cost(m_use, m_ext, n_use, rows_a, ho_size, skip, k_iter, tail_k, cout1,
                                             load_b1)
                        if load_b1 and b1_full:
                            # resident B: the first plane loads it, later planes and tiles reuse it
                            b1_loaded = True
                            rest = walker.k_cost(m_use, m_ext, n_use, rows_a, ho_size, skip, k_iter, tail_k,
                                                 cout1, False)
                            cost = tuple(a + (planes - 1) * b for a, b in zip(cost, rest))
                        else:
                            cost = tuple(planes * c for c in cost)
                        mte2, mte1, mm, gm_l1, l0a, l0b, f, a_mte2 = cost
                        # a single A1 buffer: MTE1 (in order, A's load first in each K step) idles while it reloads
                        serial += mte1 + (a_mte2 if t.al1Pbuffer == 1 else 0)
                        busy["MTE2"] += mte2
                        busy["MTE1"] += mte1
                        busy["M"] += mm
                        elems = m_use * n_use
                        out = elems * walker.ob
                        busy["FIX"] += walker.fixpipe(elems)
                        paths["GM->L1"] += gm_l1
                        paths["L1->L0A"] += l0a
                        paths["L1->L0B"] += l0b
                        paths["L0C->GM"] += out
                        fractals += f
        per_core.append(busy)
        serial_cycles.append(serial)
        if max(busy.values()) >= max(totals.values()):
            totals = busy
    return Estimate(totals, {k: int(v) for k, v in paths.items()}, int(fractals), p.coreNum, per_core,
                    max(serial_cycles, default=0.0))


# ---------------------------------------------------------------------------------------------- the loop nest
class _Fields:
    """The tiling's fields plus loadB2Condition (the walker reads both by attribute)."""

    def __init__(self, t, load_b2: int):
        self.__dict__.update(t.model_dump())
        self.loadB2Condition = load_b2


def _cal_fmap_h(t, m_l1: int) -> int:
    if m_l1 >= t.wi:
        rows = m_l1 // t.wi + (2 if m_l1 % t.wi else 0)
    else:
        rows = 1 if t.wi % m_l1 == 0 else 2
    return rows - 1 + (t.hk - 1) * t.dilationH + 1


def _cur_ho_size(cal_rows: int, ho_expand: int, ho_idx: int) -> int:
    if ho_idx < 0:
        return min(cal_rows + ho_idx, ho_expand)
    if ho_idx + cal_rows >= ho_expand:
        return ho_expand - ho_idx if ho_idx < ho_expand else 0
    return cal_rows


def _skip_lines(stride_h: int, ho_idx: int) -> int:
    start = max(ho_idx, 0)
    return _ceil(start, stride_h) * stride_h - start if stride_h > 1 and start % stride_h else 0


def _valid_dout(t, din: int, kd: int) -> bool:
    d = din + t.padFront - kd * t.dilationD
    return d >= 0 and d % t.strideD == 0 and d < t.dout * t.strideD


def _basic_block_tasks(t, p, core: int):
    """(M, N, cout1, D, first depth, first window row) of each task the basic-block driver gives this core."""
    if core >= p.coreNum:
        return
    m, n = t.hi * t.wi, t.cin1 * t.c0
    hi = t.singleCoreM // t.wi
    single_m, single_n = hi * t.wi, t.singleCoreCin1 * t.c0
    m_cnt, n_cnt = _ceil(m, single_m), _ceil(n, single_n)
    m_tail = m - (m_cnt - 1) * single_m
    hi_len = (t.backpropPadDown - t.dilationH * (t.hk - 1)) * t.wi
    if hi_len > 0 and m_tail > hi_len:
        m_tail -= hi_len
    n_tail = t.cin - (n_cnt - 1) * single_n
    batch_depth = t.batch * t.di
    total = batch_depth * m_cnt * n_cnt
    rounds, tail = divmod(total, p.coreNum)
    start = core * rounds + min(core, tail)
    rounds += core < tail
    for idx in range(start, start + rounds):
        mi, rest = divmod(idx, batch_depth * n_cnt)
        bd, ni = divmod(rest, n_cnt)
        depth = bd % t.di
        ho_start = mi * hi - t.backpropPadUp
        aligned = 0 if ho_start < 0 else _ceil(ho_start, t.strideH)
        if aligned >= t.ho:
            continue
        yield (m_tail if mi == m_cnt - 1 else single_m, n_tail if ni == n_cnt - 1 else single_n, t.cout1, 1,
               depth, ho_start)


def _general_tasks(t, p, core: int):
    """The general driver: one IterateAll per batch (and per group) over this core's single-core shape."""
    k_dim = max(p.kDim, 1)
    n_idx = (core // k_dim) % p.nDim
    m_idx = (core // (k_dim * p.nDim)) % p.mDim
    b_idx = (core // (k_dim * p.nDim * p.mDim)) % p.batchDim
    d_idx = (core // (k_dim * p.nDim * p.mDim * p.batchDim)) % p.dDim
    g_idx = (core // (k_dim * p.nDim * p.mDim * p.batchDim * p.dDim)) % p.groupDim
    hi = t.singleCoreM // t.wi
    ho_start = m_idx * hi - t.backpropPadUp
    if (0 if ho_start < 0 else _ceil(ho_start, t.strideH)) >= t.ho:
        return
    m_tail = t.hi * t.wi - m_idx * t.singleCoreM
    d_tail = t.di - d_idx * t.singleCoreDin
    di_remain = t.backpropPadTail - t.dilationD * (t.dk - 1)
    if di_remain > 0 and d_tail > di_remain:
        d_tail -= di_remain
    hi_remain = t.backpropPadDown - t.dilationH * (t.hk - 1)
    if hi_remain > 0 and m_tail > hi_remain * t.wi:
        m_tail -= hi_remain * t.wi
    m = min(m_tail, t.singleCoreM)
    din = min(d_tail, t.singleCoreDin)
    batch = min(t.batch - b_idx * t.singleCoreBatch, t.singleCoreBatch)
    if m <= 0 or din <= 0 or batch <= 0:
        return
    if t.group == 1:
        n = min(t.cin - n_idx * t.singleCoreCin1 * t.c0, t.singleCoreCin1 * t.c0)
        if n <= 0:
            return
        for _ in range(batch):
            yield m, n, t.cout1, din, d_idx * t.singleCoreDin, ho_start
        return
    groups = min(t.group - g_idx * t.singleCoreGroup, t.singleCoreGroup)
    n_total = min(t.cin - g_idx * t.singleCoreGroup * t.cin1G * t.c0, t.singleCoreGroup * t.cin1G * t.c0)
    cout1_total = min(t.cout1 - g_idx * t.singleCoreGroup * t.cout1G, groups * t.cout1G)
    for _ in range(batch):
        for g in range(groups):
            cout1 = min(cout1_total - g * t.cout1G, t.cout1G)
            n_left = n_total - g * t.cin1G * t.c0 - n_idx * t.singleCoreCin1 * t.c0
            if cout1 <= 0 or n_left <= 0:
                continue
            yield m, min(n_left, t.singleCoreCin1 * t.c0), cout1, din, d_idx * t.singleCoreDin, ho_start
