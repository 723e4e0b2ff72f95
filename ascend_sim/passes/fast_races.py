"""The race checks of races.py, compiled: both checkers (per core and between cores in GM) over the records in
schedule order, in one numba pass over flat arrays.

Used by the fast engine (fast_engine.py) when races are checked: the compiled pass only says whether, and at
which record, the Python checkers would fault. On a race the engine runs the Python checkers on the same order,
so the fault (type, message, core, instruction, byte range, source line) is theirs, written once.

Why it finds the same first race: it is a transcription of races.py, not a model of it. It keeps the same state
(per core the pipes' vector clocks, the SetFlag copies, the cross-core set clocks and what each CrossCoreWaitFlag
learned, per (core, buffer, pipe) the logged accesses pruned by the same rule; across cores the cores' clocks,
generations, set snapshots, the access list, the GM shadows per granule and the shared on-chip buffers' shadows
per core, their accesses as one-dimensional boxes among the footprints) and changes it by the same steps in
the same order. Three liberties, none visible: a race is looked for among all logged accesses instead of
stopping at the first (only whether one exists matters here), the prefix maximum of a core's cross-core set
clocks is kept as they come instead of taken on each wait, and a GM box's granules are visited in the fewest,
longest rows (`_merged`: the same set of granules), a unit-step row checked by a slice's min / max and stored
by a fill. tests/ascend_sim/passes/test_fast_races.py checks
both against races.py on kernels, fault cases and random streams with and without races.

numba is imported only when this pass runs (the fast engine imports it lazily, as fast_schedule).
"""
from __future__ import annotations

from itertools import chain, compress
from operator import attrgetter

import numpy as np

from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.passes.fast_schedule import _CORE, _KIND, _PIPE, CROSS_SET, CROSS_WAIT, SET_FLAG, SYNC_ALL, WAIT_FLAG
from ascend_sim.passes.numba_jit import njit

_N = len(QUEUES)
_ALL = int(Pipe.ALL)
_KEEP = 256  # races.py: a (buffer, pipe) log keeps at most this many accesses once pruned ...
_PRUNE_PAST = 64  # ... and is pruned when it holds more than this many
_RING = 512  # entries a log holds: at least _KEEP + 1 (between an append and its prune), a power of 2 so that
_MASK = _RING - 1  # a ring position is a mask, not a division (the R3D stem's 1M accesses: 1.3-1.5x faster)
_MAXD = 8  # dimensions of a GM footprint box handled here (more: the Python checkers run)
_PAD = [(0,) * (_MAXD - nd) for nd in range(_MAXD + 1)]
CLEAN, UNSUPPORTED = -1, -2  # first_race's answers other than a position
# the schedule's R (fast_schedule.py) gives each record's core, pipe and kind (its kind codes: a record on PIPE_ALL
# other than SyncAll and CrossCoreWaitFlag is a BARRIER_ALL, which both checkers treat as any record on PIPE_ALL);
# `rel` what released a wait (a WaitFlag's SetFlag record, a CrossCoreWaitFlag's round of sets); `slot` numbers
# the SetFlags among themselves and the CrossCoreSetFlags among themselves
# columns of FP (int64 per GM footprint box): GM buffer, byte offset, 0 read / 1 write / 2 atomic add, dimensions,
# then _MAXD sizes and _MAXD byte strides
_G, _OFF, _FK, _ND, _SHAPE = range(5)
_STRIDES = _SHAPE + _MAXD
# columns of G (int64 per GM buffer, or per shared on-chip buffer and core): shadows made yet, granules, where its
# write / read / atomic shadows start, and for a shared buffer's row its buffer's number (-1: GM); `peer_off` /
# `peer` list a shared row's rows of the other cores (GmRaceChecker.shared_shadows)
_MADE, _GRANULES, _W, _R, _A, _SHARED = range(6)

_reads, _writes, _footprint = attrgetter("reads"), attrgetter("writes"), attrgetter("footprint")


# ------------------------------------------------------------------------------------------ compiled pass
@njit(cache=True)
def _next_row(idx, nd, shape) -> bool:
    """Advance idx over a box's outer dimensions (all but the last), odometer-style; False past the last row."""
    k = nd - 2
    while k >= 0:
        idx[k] += 1
        if idx[k] < shape[k]:
            return True
        idx[k] = 0
        k -= 1
    return False


@njit(cache=True)
def _box_races(shadow, bases, n_bases, idx, nd, shape, strides, off, gen_start, c, acc_core, acc_tick, gclock):
    """GmRaceChecker._access's test, on the shadows starting at bases[:n_bases], over the box's granules: does
    one hold an access of another core in this generation that core c's clock does not know of? A shadow holds
    1 + the index of the granule's last access (0: none), so that a fresh shadow is zeros (first_race_of)."""
    inner, step = shape[nd - 1], strides[nd - 1]
    idx[:nd] = 0
    while True:
        at = off
        for k in range(nd - 1):
            at += idx[k] * strides[k]
        for b in range(n_bases):
            base = bases[b] + at
            if step == 1:  # as races.py: the lowest and highest access index first
                row = shadow[base:base + inner]  # a slice's min / max: vectorised (most rows, once merged)
                low, high = row.min(), row.max()
            else:
                low, high = shadow[base], shadow[base]
                for t in range(1, inner):
                    v = shadow[base + t * step]
                    low = min(low, v)
                    high = max(high, v)
            if high <= gen_start:
                continue  # untouched, or touched in an earlier generation only
            if low == high:  # one access covers them all
                d = acc_core[high - 1]
                if d != c and acc_tick[high - 1] > gclock[c, d]:
                    return True
                continue
            seen = -1
            for t in range(inner):
                v = shadow[base + t * step]
                if v != seen and v > gen_start:  # a run of one access is checked once
                    d = acc_core[v - 1]
                    if d != c and acc_tick[v - 1] > gclock[c, d]:
                        return True
                seen = v
        if not _next_row(idx, nd, shape):
            return False


@njit(cache=True)
def _merged(shape, strides, nd) -> int:
    """A box of granules (shape, strides: its first nd entries) as the same granules in fewer, longer rows: its
    dimensions of size 1 dropped and, when every stride left is positive, the others put in order of stride
    (largest first) and each two that are one run of granules merged (a Fixpipe's write of 2-byte elements in
    four dimensions becomes one row of granules). _box_races and _box_store treat a box as a set of granules,
    so the order they are visited in does not matter. Returns the dimensions left (at least 1)."""
    n = 0
    for k in range(nd):
        if shape[k] != 1:
            shape[n], strides[n] = shape[k], strides[k]
            n += 1
    if n == 0:
        shape[0], strides[0] = 1, 1
        return 1
    for k in range(n):
        if strides[k] <= 0:
            return n
    for k in range(1, n):  # insertion sort, largest stride first
        size, step = shape[k], strides[k]
        j = k - 1
        while j >= 0 and strides[j] < step:
            shape[j + 1], strides[j + 1] = shape[j], strides[j]
            j -= 1
        shape[j + 1], strides[j + 1] = size, step
    m = 0
    for k in range(1, n):
        if strides[m] == shape[k] * strides[k]:  # dimension k runs on where m steps: one dimension
            shape[m] *= shape[k]
            strides[m] = strides[k]
        else:
            m += 1
            shape[m], strides[m] = shape[k], strides[k]
    return m + 1


@njit(cache=True)
def _box_store(shadow, base, idx, nd, shape, strides, off, value):
    inner, step = shape[nd - 1], strides[nd - 1]
    idx[:nd] = 0
    while True:
        at = base + off
        for k in range(nd - 1):
            at += idx[k] * strides[k]
        if step == 1:
            shadow[at:at + inner] = value  # a fill (most rows, once merged)
        else:
            for t in range(inner):
                shadow[at + t * step] = value
        if not _next_row(idx, nd, shape):
            return


@njit(cache=True)
def _first_race(order, R, rel, slot, cw_off, cw_mem, acc_off, ACC, pair_of, fp_off, FP, G, peer_off, peer, shadow,
                granule, n_cores, cs_base, lr_base, n_sets, n_cross, n_pairs):
    """The position in `order` of the first record whose race checks fault, CLEAN, or UNSUPPORTED (a case the
    Python checkers would meet with an error of their own)."""
    clock = np.zeros((n_cores, _N, _N), np.int64)  # RaceChecker.clock per core
    # empty, not zeros (numba fills zeros: every page mapped and written, 14 MB on the R3D stem): a SetFlag's row
    # is written before its WaitFlag reads it, and a log's entries before they are read
    set_clock = np.empty((max(n_sets, 1), _N), np.int64)  # per SetFlag slot
    cs_max = np.zeros((max(n_cross, 1), _N), np.int64)  # per core: max of its first k cross-core set clocks
    cs_n = np.zeros(n_cores, np.int64)
    lr_seq = np.zeros(max(n_cross, 1), np.int64)  # RaceChecker.learned, per core from lr_base
    lr_clock = np.zeros((max(n_cross, 1), _N), np.int64)
    lr_n = np.zeros(n_cores, np.int64)
    applied = np.zeros((n_cores, _N), np.int64)
    # the access logs: per (core, buffer, pipe) a ring of (lo, hi, stamp, is_write)
    e_lo = np.empty((max(n_pairs, 1), _RING), np.int64)
    e_hi = np.empty((max(n_pairs, 1), _RING), np.int64)
    e_stamp = np.empty((max(n_pairs, 1), _RING), np.int64)
    e_write = np.empty((max(n_pairs, 1), _RING), np.uint8)
    head = np.zeros(max(n_pairs, 1), np.int64)
    length = np.zeros(max(n_pairs, 1), np.int64)
    touched = np.zeros(max(n_pairs, 1), np.uint8)
    # GmRaceChecker
    gclock = np.zeros((n_cores, n_cores), np.int64)
    for c in range(n_cores):
        gclock[c, c] = 1
    generation = np.zeros(n_cores, np.int64)
    current = 0
    gen_start = 0
    snap = np.zeros((max(n_cross, 1), n_cores), np.int64)  # per CrossCoreSetFlag slot
    acc_core = np.zeros(max(FP.shape[0], 1), np.int64)
    acc_tick = np.zeros(max(FP.shape[0], 1), np.int64)
    n_acc = 0
    shape = np.zeros(_MAXD, np.int64)
    strides = np.zeros(_MAXD, np.int64)
    idx = np.zeros(_MAXD, np.int64)
    bases = np.zeros(max(3, 2 * peer.shape[0]), np.int64)
    for pos in range(order.shape[0]):
        i = order[pos]
        c = R[i, _CORE]
        p = R[i, _PIPE]
        kind = R[i, _KIND]
        # ---- RaceChecker.observe
        if p == _ALL:
            for q in range(_N):
                m = clock[c, 0, q]
                for r in range(1, _N):
                    if clock[c, r, q] > m:
                        m = clock[c, r, q]
                for r in range(_N):
                    clock[c, r, q] = m
        else:
            base = lr_base[c]
            while applied[c, p] < lr_n[c] and lr_seq[base + applied[c, p]] < i:  # _take_learned
                k = base + applied[c, p]
                for q in range(_N):
                    if lr_clock[k, q] > clock[c, p, q]:
                        clock[c, p, q] = lr_clock[k, q]
                applied[c, p] += 1
            clock[c, p, p] += 1
            if kind == SET_FLAG:
                for q in range(_N):
                    set_clock[slot[i], q] = clock[c, p, q]
            elif kind == WAIT_FLAG:
                s = slot[rel[i]]
                for q in range(_N):
                    if set_clock[s, q] > clock[c, p, q]:
                        clock[c, p, q] = set_clock[s, q]
            elif acc_off[0, i + 1] > acc_off[0, i] or acc_off[1, i + 1] > acc_off[1, i]:  # _check
                stamp = clock[c, p, p]
                for is_write in range(2):  # its reads, then its writes
                    for a in range(acc_off[is_write, i], acc_off[is_write, i + 1]):
                        b, lo, hi = ACC[0, a], ACC[1, a], ACC[2, a]
                        for q in range(_N):
                            other = pair_of[b, q]
                            if q == p or other < 0:
                                continue
                            seen = clock[c, p, q]
                            for j in range(length[other] - 1, -1, -1):
                                e = (head[other] + j) & _MASK
                                if e_stamp[other, e] <= seen:
                                    break
                                if e_lo[other, e] < hi and lo < e_hi[other, e] and (is_write or e_write[other, e]):
                                    return pos
                        mine = pair_of[b, p]
                        touched[mine] = 1
                        e = (head[mine] + length[mine]) & _MASK
                        e_lo[mine, e], e_hi[mine, e], e_stamp[mine, e], e_write[mine, e] = lo, hi, stamp, is_write
                        length[mine] += 1
                        if length[mine] > _PRUNE_PAST:  # _prune
                            horizon = -1
                            for q in range(_N):
                                other = pair_of[b, q]
                                if q != p and other >= 0 and touched[other]:
                                    if horizon < 0 or clock[c, q, p] < horizon:
                                        horizon = clock[c, q, p]
                            if horizon < 0:
                                horizon = clock[c, p, p]
                            lo_j, hi_j = 0, length[mine]  # bisect_right on the stamps
                            while lo_j < hi_j:
                                mid = (lo_j + hi_j) // 2
                                if horizon < e_stamp[mine, (head[mine] + mid) & _MASK]:
                                    hi_j = mid
                                else:
                                    lo_j = mid + 1
                            drop = max(lo_j, length[mine] - _KEEP)
                            if drop > 0:
                                head[mine] = (head[mine] + drop) & _MASK
                                length[mine] -= drop
            elif kind == CROSS_SET:
                k = cs_base[c] + cs_n[c]
                for q in range(_N):
                    v = clock[c, p, q]
                    if cs_n[c] > 0 and cs_max[k - 1, q] > v:
                        v = cs_max[k - 1, q]
                    cs_max[k, q] = v
                cs_n[c] += 1
            elif kind == CROSS_WAIT:
                known = 0  # GmRaceChecker.own_sets_known
                for r in range(cw_off[rel[i]], cw_off[rel[i] + 1]):
                    if snap[cw_mem[r], c] > known:
                        known = snap[cw_mem[r], c]
                if known:
                    if cs_n[c] == 0:
                        return UNSUPPORTED  # races.py would take the max of nothing
                    k = cs_base[c] + min(known, cs_n[c]) - 1
                    j = lr_base[c] + lr_n[c]
                    lr_seq[j] = i
                    for q in range(_N):
                        lr_clock[j, q] = cs_max[k, q]
                    lr_n[c] += 1
        # ---- GmRaceChecker.observe
        if kind == SYNC_ALL:
            generation[c] += 1
            if generation[c] > current:
                current = generation[c]
                gen_start = n_acc
        elif kind == CROSS_SET:
            s = slot[i]
            for d in range(n_cores):
                snap[s, d] = gclock[c, d]
            gclock[c, c] += 1
        elif kind == CROSS_WAIT:
            for r in range(cw_off[rel[i]], cw_off[rel[i] + 1]):
                s = cw_mem[r]
                for d in range(n_cores):
                    if snap[s, d] > gclock[c, d]:
                        gclock[c, d] = snap[s, d]
        else:
            for f in range(fp_off[i], fp_off[i + 1]):
                g, off, fk, nd = FP[f, _G], FP[f, _OFF], FP[f, _FK], FP[f, _ND]
                if not G[g, _MADE]:
                    if fk == 0:
                        continue  # never written in this launch: reads cannot race
                    G[g, _MADE] = 1
                span = off + 1
                whole = off % granule == 0 and FP[f, _STRIDES + nd - 1] == 1 and FP[f, _SHAPE + nd - 1] % granule == 0
                for k in range(nd):
                    span += (FP[f, _SHAPE + k] - 1) * FP[f, _STRIDES + k]
                    if k < nd - 1 and FP[f, _STRIDES + k] % granule:
                        whole = False
                if whole:  # _in_granules
                    for k in range(nd):
                        shape[k] = FP[f, _SHAPE + k]
                        strides[k] = FP[f, _STRIDES + k] // granule
                    shape[nd - 1] //= granule
                    strides[nd - 1] = 1
                    gnd = nd
                else:
                    gnd = 1
                    shape[0] = -((-span) // granule) - off // granule
                    strides[0] = 1
                goff = off // granule
                first, last = goff, goff  # the box must lie in the shadow, with granules (numpy's view)
                for k in range(gnd):
                    if shape[k] <= 0:
                        return UNSUPPORTED  # races.py would take the max of nothing
                    reach = (shape[k] - 1) * strides[k]
                    if reach < 0:
                        first += reach
                    else:
                        last += reach
                if first < 0 or last >= G[g, _GRANULES]:
                    return UNSUPPORTED
                gnd = _merged(shape, strides, gnd)
                if G[g, _SHARED] >= 0:  # a shared on-chip buffer: the other cores' write (and read) shadows
                    n_bases = 0
                    for r in range(peer_off[g], peer_off[g + 1]):
                        bases[n_bases] = G[peer[r], _W]
                        n_bases += 1
                        if fk != 0:
                            bases[n_bases] = G[peer[r], _R]
                            n_bases += 1
                else:
                    bases[0] = G[g, _W]  # the shadows this access is tested against: writes, reads, atomic adds
                    n_bases = 1
                    if fk != 0:
                        bases[1] = G[g, _R]
                        n_bases = 2
                    if fk != 2 and G[g, _A] >= 0:
                        bases[n_bases] = G[g, _A]
                        n_bases += 1
                if _box_races(shadow, bases, n_bases, idx, gnd, shape, strides, goff, gen_start, c, acc_core,
                              acc_tick, gclock):
                    return pos
                _box_store(shadow, G[g, _W if fk == 1 else (_R if fk == 0 else _A)], idx, gnd, shape, strides, goff,
                           n_acc + 1)
                acc_core[n_acc] = c
                acc_tick[n_acc] = gclock[c, c]
                n_acc += 1
    return CLEAN


# ------------------------------------------------------------------------------------------ encoding
class Accesses:
    """What the checkers look at in a run of records, encoded once: per record its numbers of reads, writes and
    GM footprint boxes; per read and write its buffer (an index into `keys`, the buffers' race keys, with their
    `names` and `capacity`) and byte range; per box a row of FP (column _G an index into `keys`). A replayed block
    (replay_engine.py) is its template's Accesses moved to its core's buffers and GM shifts (`moved`), so its
    records need not be made. A moved Accesses shares its template's arrays and keeps the shift per key
    (`shift`): `encode` adds the shifts of all blocks at once; `r_range`, `w_range` and `fp` read them shifted."""

    __slots__ = ("counts", "r_key", "w_key", "keys", "names", "capacity", "shift", "offsets", "_r_range", "_w_range",
                 "_fp")

    def __init__(self, counts, r_key, r_range, w_key, w_range, fp, keys, names, capacity, shift=None):
        self.counts = counts  # (3, n): reads, writes, boxes per record
        self.r_key, self._r_range, self.w_key, self._w_range, self._fp = r_key, r_range, w_key, w_range, fp
        self.keys, self.names, self.capacity = keys, names, capacity
        self.shift = shift  # per key, the bytes its ranges and boxes move by (None: none moves)
        self.offsets = None  # per record, where its reads, writes and boxes start (made by `part`)

    @property
    def r_range(self) -> np.ndarray:
        return self._r_range if self.shift is None else self._r_range + self.shift[self.r_key, None]

    @property
    def w_range(self) -> np.ndarray:
        return self._w_range if self.shift is None else self._w_range + self.shift[self.w_key, None]

    @property
    def fp(self) -> np.ndarray:
        if self.shift is None:
            return self._fp
        fp = self._fp.copy()
        fp[:, _OFF] += self.shift[fp[:, _G]]
        return fp

    def part(self, lo: int, hi: int) -> Accesses:
        """The Accesses of records [lo, hi) of these (views, the same keys list): one encoding of many runs of
        records serves them all."""
        if self.offsets is None:
            self.offsets = np.zeros((3, self.counts.shape[1] + 1), np.int64)
            np.cumsum(self.counts, axis=1, out=self.offsets[:, 1:])
        (r0, w0, f0), (r1, w1, f1) = self.offsets[:, lo].tolist(), self.offsets[:, hi].tolist()
        return Accesses(self.counts[:, lo:hi], self.r_key[r0:r1], self._r_range[r0:r1], self.w_key[w0:w1],
                        self._w_range[w0:w1], self._fp[f0:f1], self.keys, self.names, self.capacity, self.shift)

    def moved(self, keys: list, shifts: dict) -> Accesses:
        """The same accesses on buffers with race keys `keys` (one per key of this), the bytes of buffer i moved
        by shifts[names[i]] (names absent: unmoved); the arrays shared, the shifts kept per key."""
        shift = np.array([shifts.get(name, 0) for name in self.names], np.int64) if shifts else None
        return Accesses(self.counts, self.r_key, self._r_range, self.w_key, self._w_range, self._fp, keys,
                        self.names, self.capacity, shift if shift is not None and shift.any() else None)


def accesses(records: list) -> Accesses | None:
    """The Accesses of `records`, or None when a record has a footprint box of no or more than _MAXD
    dimensions (the Python checkers then run)."""
    n = len(records)
    keys: dict = {}
    names: list = []
    capacity: list = []

    def index(buf) -> int:
        k = keys.setdefault(buf.key, len(keys))
        if k == len(capacity):
            names.append(buf.name)
            capacity.append(buf.capacity)
        return k

    counts = np.zeros((3, n), np.int64)
    ranges = []
    for row, get in ((0, _reads), (1, _writes)):
        lists = list(map(get, records))
        counts[row] = np.fromiter(map(len, lists), np.int64, n)
        flat = list(chain.from_iterable(lists))
        na = len(flat)
        if na:
            bufs, lo, hi = zip(*flat)  # the columns at once (not a tuple an access: R3D's 40k real records 1.4x)
            # buffer objects with one key are one buffer to the checker
            _, first, which = np.unique(np.fromiter(map(id, bufs), np.int64, na), return_index=True,
                                        return_inverse=True)
            key_of = np.array([index(bufs[j]) for j in first.tolist()], np.int64)
            lo_hi = np.empty((na, 2), np.int64)
            lo_hi[:, 0], lo_hi[:, 1] = lo, hi
            ranges.append((key_of[which].reshape(na), lo_hi))
        else:
            ranges.append((np.zeros(0, np.int64), np.zeros((0, 2), np.int64)))
    rows, boxes = [], {}
    for j in compress(range(n), map(_footprint, records)):
        footprint = records[j].footprint
        for buf, offset, shape, strides, is_write in footprint:
            nd = len(shape)
            if not 1 <= nd <= _MAXD:
                return None
            box = boxes.get((shape, strides))
            if box is None:
                box = boxes[(shape, strides)] = (nd, *shape, *_PAD[nd], *strides, *_PAD[nd])
            rows.append((index(buf), offset, 2 if is_write == "atomic" else (1 if is_write else 0)) + box)
        counts[2, j] = len(footprint)
    fp = np.array(rows, np.int64).reshape(len(rows), _STRIDES + _MAXD)
    return Accesses(counts, *ranges[0], *ranges[1], fp, list(keys), names, capacity)


def encode(parts: list, s, granule: int, shared: frozenset = frozenset()):
    """The arrays _first_race reads beside the schedule `s` (fast_schedule.Schedule of the records the parts
    encode, in order: the cores' streams one after another). `shared`: the race keys of the on-chip buffers
    several cores access (GmRaceChecker.shared), whose byte ranges join the GM footprints as one-dimensional
    boxes, after the record's own boxes, its reads before its writes (GmRaceChecker._shared_accesses)."""
    n = sum(p.counts.shape[1] for p in parts)
    R = s.R
    kind = R[:, _KIND]
    n_cores = s.core_off.shape[0] - 1
    slot = np.full(n, -1, np.int64)
    sets, cross = np.flatnonzero(kind == SET_FLAG), np.flatnonzero(kind == CROSS_SET)
    slot[sets] = np.arange(sets.size)
    slot[cross] = np.arange(cross.size)
    # one key number per race key over the parts
    keys: dict = {}
    capacity: list = []
    to_global = []
    by_keys: dict = {}  # id of a part's keys list -> its numbers (the parts of one Accesses share theirs)
    for p in parts:
        numbers = by_keys.get(id(p.keys))
        if numbers is None:
            for k, nbytes in zip(p.keys, p.capacity):
                if k not in keys:
                    keys[k] = len(keys)
                    capacity.append(nbytes)
            numbers = by_keys[id(p.keys)] = np.array([keys[k] for k in p.keys], np.int64)
        to_global.append(numbers)
    counts = np.concatenate([p.counts for p in parts], axis=1) if parts else np.zeros((3, 0), np.int64)
    # the parts' keys one after another: part k's key j is entry base[k] + j of `number` (its global number)
    # and of `shift` (the bytes its block moves it by: Accesses.moved), so every part's keys and shifts are
    # applied by one gather (not an array operation a block: X3D's 2,589 blocks)
    base = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([len(p.keys) for p in parts], out=base[1:])
    number = np.concatenate(to_global) if parts else np.zeros(0, np.int64)
    moved = any(p.shift is not None for p in parts)
    shift = (np.concatenate([np.zeros(len(p.keys), np.int64) if p.shift is None else p.shift for p in parts])
             if moved else None)
    # per-core logs: the accesses (each record's reads, then its writes) of buffer b: (core, buffer key)
    acc_off = np.zeros((2, n + 1), np.int64)  # a record's reads, then its writes, in ACC
    np.cumsum(counts[0], out=acc_off[0, 1:])
    np.cumsum(counts[1], out=acc_off[1, 1:])
    acc_off[1] += acc_off[0, -1]
    na = int(acc_off[1, -1])
    ACC = np.empty((3, na), np.int64)  # per access: b, lo, hi
    if na:
        at = np.empty(na, np.int64)  # per access, its key's entry in `number` and `shift`
        _entries(base, parts, "r_key", at[:acc_off[0, -1]])
        _entries(base, parts, "w_key", at[acc_off[0, -1]:])
        key_of = number[at]
        # the (b, pipe) logs that exist (a PIPE_ALL record's accesses are never logged)
        n_bufs, pairs = _buffer_numbers(R[:, _CORE], R[:, _PIPE], counts, key_of, len(keys), n_cores, ACC[0])
        np.concatenate([p._r_range for p in parts] + [p._w_range for p in parts], out=ACC[1:].T)
        if moved:
            by_access = shift[at]
            ACC[1] += by_access
            ACC[2] += by_access
        pair_of = np.full((n_bufs, _N + 1), -1, np.int64)
        pair_of.ravel()[pairs] = np.arange(pairs.size)
        pair_of = np.ascontiguousarray(pair_of[:, :_N])
    else:
        pairs, pair_of = np.zeros(0, np.int64), np.full((1, _N), -1, np.int64)
    # GM footprints: per box a row of FP, its buffer numbered among the footprints' buffers
    fp_off = np.zeros(n + 1, np.int64)
    np.cumsum(counts[2], out=fp_off[1:])
    FP = np.concatenate([p._fp for p in parts]) if parts else np.zeros((0, _STRIDES + _MAXD), np.int64)
    if FP.shape[0]:
        at = np.repeat(base[:-1], [len(p._fp) for p in parts]) + FP[:, _G]
        if moved:
            FP[:, _OFF] += shift[at]
        FP[:, _G] = number[at]
    shared_numbers = [number for key, number in keys.items() if key in shared]
    buffer_of = list(range(len(capacity)))  # a key number's buffer (a shared buffer's per-core rows: that buffer)
    if shared_numbers and na:
        FP, fp_off, pairs_of_shared = _with_shared_boxes(FP, counts, key_of, _access_cores(R, counts), ACC,
                                                         acc_off, shared_numbers, n, len(capacity))
        buffer_of += pairs_of_shared
        capacity += [capacity[k] for k in pairs_of_shared]
    if FP.shape[0]:
        used, FP[:, _G] = _ranked(FP[:, _G])
        kinds_of = np.zeros((used.size, 3), bool)  # per buffer, whether its boxes read (0), write (1), add (2)
        kinds_of[FP[:, _G], FP[:, _FK]] = True
    else:
        used, kinds_of = np.zeros(0, np.int64), np.zeros((0, 3), bool)
    G = np.full((max(used.size, 1), 6), -1, np.int64)
    G[:, _MADE] = 0
    size = 0
    for g, k in enumerate(used.tolist()):  # shadows for the buffers some access writes (the others never race)
        kinds = set(np.flatnonzero(kinds_of[g]).tolist())
        G[g, _GRANULES] = -(-capacity[k] // granule)
        if buffer_of[k] != k:  # a shared buffer's core: its shadows are made at its first access, a read too
            G[g, _MADE], G[g, _SHARED] = 1, buffer_of[k]
        if kinds & {1, 2} or buffer_of[k] != k:
            for column, needed in ((_W, True), (_R, True), (_A, 2 in kinds)):
                if needed:
                    G[g, column] = size
                    size += G[g, _GRANULES]
    # each shared row's peers: the rows of the same buffer on the other cores
    peer_off = np.zeros(G.shape[0] + 1, np.int64)
    peer = [[q for q in np.flatnonzero(G[:, _SHARED] == G[g, _SHARED]).tolist() if q != g]
            if G[g, _SHARED] >= 0 else [] for g in range(G.shape[0])]
    np.cumsum([len(p) for p in peer], out=peer_off[1:])
    peer = np.array([q for p in peer for q in p], np.int64)
    cs_base = np.zeros(n_cores, np.int64)
    lr_base = np.zeros(n_cores, np.int64)
    cs_base[1:] = np.cumsum(np.bincount(R[cross, _CORE], minlength=n_cores))[:-1]
    lr_base[1:] = np.cumsum(np.bincount(R[kind == CROSS_WAIT, _CORE], minlength=n_cores))[:-1]
    return dict(slot=slot, cw_mem=np.append(slot[s.round_mem], 0), acc_off=acc_off, ACC=ACC, pair_of=pair_of,
                fp_off=fp_off, FP=FP, G=G, peer_off=peer_off, peer=peer, shadow_size=size, cs_base=cs_base,
                lr_base=lr_base,
                n_sets=int(sets.size), n_cross=max(int(cross.size), int((kind == CROSS_WAIT).sum())),
                n_pairs=int(pairs.size))


def _ranked(numbers: np.ndarray) -> tuple:
    """np.unique(numbers, return_inverse=True) of small non-negative numbers (the GM footprints' buffers: a few,
    over Conv3DV2's VideoMAE's 0.7M boxes) without sorting them: the numbers present, and each one's rank among
    them."""
    present = np.zeros(int(numbers.max()) + 1, bool)
    present[numbers] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[numbers]


def _entries(base, parts: list, field: str, out) -> None:
    """Per access of the parts' reads or writes (`field`: "r_key" / "w_key"), its key's entry in encode's
    tables, its part's base plus its key, written to `out` (an array fewer of one value an access: on the R3D
    stem each is 1M entries, fresh pages in a full run)."""
    keys = [getattr(p, field) for p in parts]
    np.add(np.repeat(base[:-1], [k.size for k in keys]), np.concatenate(keys), out=out)


@njit(cache=True)
def _buffer_numbers(core, pipe, counts, key_of, n_keys: int, n_cores: int, out) -> tuple:
    """Per access (the records' reads, then their writes, `counts[0]` / `counts[1]` a record, each of buffer
    key `key_of`), its (core, buffer key) numbered in the order of core * n_keys + key (np.unique's inverse),
    written to `out`; the number of such buffers and the (buffer, pipe) pairs present, as buffer * (_N + 1) +
    pipe in increasing order. Two passes over the accesses, without the arrays of one value per access that
    numpy's repeat and unique would make (the R3D stem: 2 million accesses)."""
    seen = np.zeros(n_cores * n_keys, np.bool_)
    a = 0
    for row in range(2):
        for i in range(core.size):
            base = core[i] * n_keys
            for _ in range(counts[row, i]):
                seen[base + key_of[a]] = True
                a += 1
    rank = np.full(seen.size, -1, np.int64)
    n_bufs = 0
    for v in range(seen.size):
        if seen[v]:
            rank[v] = n_bufs
            n_bufs += 1
    pair_seen = np.zeros(n_bufs * (_N + 1), np.bool_)
    a = 0
    for row in range(2):
        for i in range(core.size):
            base, p = core[i] * n_keys, pipe[i]
            for _ in range(counts[row, i]):
                b = rank[base + key_of[a]]
                out[a] = b
                pair_seen[b * (_N + 1) + p] = True
                a += 1
    return n_bufs, np.flatnonzero(pair_seen)


def _access_cores(R, counts) -> np.ndarray:
    """Per access (the records' reads, then their writes), its record's core."""
    return np.repeat(np.tile(R[:, _CORE], 2), np.concatenate((counts[0], counts[1])))


def _with_shared_boxes(FP, counts, key_of, core_of, ACC, acc_off, shared_numbers: list, n: int, n_keys: int):
    """FP (buffers as global key numbers) with a one-dimensional box per non-empty access of a shared buffer
    added, each record's rows in the Python checker's order: its footprint boxes, its reads, its writes; the new
    fp_off; and the shared buffers' per-core rows: each numbered from n_keys on, with its buffer's key number."""
    sel = np.flatnonzero(np.isin(key_of, shared_numbers) & (ACC[2] > ACC[1]))
    rows = np.zeros((sel.size, _STRIDES + _MAXD), np.int64)
    per_core, rows[:, _G] = np.unique(key_of[sel] * (int(core_of.max()) + 1) + core_of[sel], return_inverse=True)
    rows[:, _G] += n_keys
    rows[:, _OFF] = ACC[1, sel]
    rows[:, _FK] = sel >= acc_off[0, -1]  # the writes follow all the reads in ACC
    rows[:, _ND] = 1
    rows[:, _SHAPE] = ACC[2, sel] - ACC[1, sel]
    rows[:, _STRIDES] = 1
    record_of_access = np.concatenate((np.repeat(np.arange(n), counts[0]), np.repeat(np.arange(n), counts[1])))
    record_of_row = np.concatenate((np.repeat(np.arange(n), counts[2]), record_of_access[sel]))
    by_record = np.argsort(record_of_row, kind="stable")  # boxes, then reads, then writes within a record
    fp_off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(record_of_row, minlength=n), out=fp_off[1:])
    return np.concatenate((FP, rows))[by_record], fp_off, (per_core // (int(core_of.max()) + 1)).tolist()


def first_race(records: list, s, granule: int, shared: frozenset = frozenset()) -> int:
    """Where in the schedule's order (`s`: fast_schedule.Schedule of `records`, the cores' streams one after
    another, with every record run) the Python checkers (races.first_fault) would first fault: its position,
    CLEAN, or UNSUPPORTED (let the Python checkers run). `shared`: GmRaceChecker.shared."""
    if not records:  # a launch whose kernels issued nothing
        return CLEAN
    part = accesses(records)
    return UNSUPPORTED if part is None else first_race_of(s, [part], granule, shared)


def first_race_of(s, parts: list, granule: int, shared: frozenset = frozenset()) -> int:
    """first_race over records given by their Accesses (`parts`, in the order of the schedule's records)."""
    e = encode(parts, s, granule, shared)
    # zeros (no access yet: _box_races), not a fill: where the shadows come fresh from the kernel, their pages are
    # then mapped only where an access lands (filling 19-29 MB with -1 measured 28-46 ms in such a process)
    shadow = np.zeros(max(e["shadow_size"], 1), shadow_type(e["FP"].shape[0]))
    return int(_first_race(s.order, s.R, s.rel, e["slot"], s.round_off, e["cw_mem"], e["acc_off"], e["ACC"],
                           e["pair_of"], e["fp_off"], e["FP"], e["G"], e["peer_off"], e["peer"], shadow, granule,
                           s.core_off.shape[0] - 1,
                           e["cs_base"], e["lr_base"], e["n_sets"], e["n_cross"], e["n_pairs"]))


SHORT_SHADOW_UP_TO = 65535  # GM boxes (accesses) a launch may have for shadows of 2 bytes a granule


def shadow_type(n_boxes: int):
    """The shadows' dtype: they hold 1 + an access's index, at most the number of GM boxes (shared buffers'
    included), so a launch of up to SHORT_SHADOW_UP_TO boxes (every benchmark layer: 300 to 22,292) takes 2
    bytes a granule instead of 4, half the pages a full run maps for them on first touch (most of the compiled
    pass's time on the short layers)."""
    return np.uint16 if n_boxes <= SHORT_SHADOW_UP_TO else np.int32
