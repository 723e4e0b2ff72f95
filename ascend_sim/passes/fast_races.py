"""The race checks of races.py, compiled: both checkers (per core and between cores in GM) over the records in
schedule order, in one numba pass over flat arrays.

Used by the fast engine (fast_engine.py) when races are checked: the compiled pass only says whether, and at
which record, the Python checkers would fault. On a race the engine runs the Python checkers on the same order,
so the fault (type, message, core, instruction, byte range, source line) is theirs, written once.

Why it finds the same first race: it is a transcription of races.py, not a model of it. It keeps the same state
(per core the pipes' vector clocks, the SetFlag copies, the cross-core set clocks and what each CrossCoreWaitFlag
learned, per (core, buffer, pipe) the logged accesses pruned by the same rule; across cores the cores' clocks,
generations, set snapshots, the access list and the GM shadows per granule) and changes it by the same steps in
the same order. Two liberties, neither visible: a race is looked for among all logged accesses instead of
stopping at the first (only whether one exists matters here), and the prefix maximum of a core's cross-core set
clocks is kept as they come instead of taken on each wait. tests/ascend_sim/passes/test_fast_races.py checks
both against races.py on kernels, fault cases and random streams with and without races.

numba is imported only when this pass runs (the fast engine imports it lazily, as fast_schedule).
"""
from __future__ import annotations

from itertools import chain, count
from operator import attrgetter, itemgetter

import numpy as np
from numba import njit

from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.record import Kind

_N = len(QUEUES)
_ALL = int(Pipe.ALL)
# record kinds as the race checkers tell them apart
PLAIN, SET_FLAG, WAIT_FLAG, CROSS_SET, CROSS_WAIT, SYNC_ALL = range(6)
_KINDS = {Kind.SET_FLAG: SET_FLAG, Kind.WAIT_FLAG: WAIT_FLAG, Kind.CROSS_CORE_SET: CROSS_SET,
          Kind.CROSS_CORE_WAIT: CROSS_WAIT, Kind.SYNC_ALL: SYNC_ALL}
_KEEP = 256  # races.py: a (buffer, pipe) log keeps at most this many accesses once pruned ...
_PRUNE_PAST = 64  # ... and is pruned when it holds more than this many
_RING = _KEEP + 1  # entries a log can hold between an append and its prune
_MAXD = 8  # dimensions of a GM footprint box handled here (more: the Python checkers run)
CLEAN, UNSUPPORTED = -1, -2  # first_race's answers other than a position
# columns of REC (int64 per record): core, pipe, kind, what released it (a WaitFlag's SetFlag record, a
# CrossCoreWaitFlag's run of setters in cw_off), its slot (a SetFlag's or a CrossCoreSetFlag's own number)
_CORE, _PIPE, _KIND, _REL, _SLOT = range(5)
# columns of FP (int64 per GM footprint box): GM buffer, byte offset, 0 read / 1 write / 2 atomic add, dimensions,
# then _MAXD sizes and _MAXD byte strides
_G, _OFF, _FK, _ND, _SHAPE = range(5)
_STRIDES = _SHAPE + _MAXD
# columns of G (int64 per GM buffer): shadows made yet, granules, where its write / read / atomic shadows start
_MADE, _GRANULES, _W, _R, _A = range(5)

_core, _pipe, _spec, _reads, _writes, _footprint = (attrgetter(a) for a in
                                                     ("core", "pipe", "spec", "reads", "writes", "footprint"))
_first, _lo, _hi = itemgetter(0), itemgetter(1), itemgetter(2)


# ------------------------------------------------------------------------------------------ compiled pass
@njit(cache=True)
def _box_races(shadow, base, nd, shape, strides, off, granules, gen_start, c, acc_core, acc_tick, gclock):
    """GmRaceChecker._access's test on one shadow: an access of another core in this generation, over the box's
    granules, not ordered before core c's clock. 1 race, 0 none, -1 the box leaves the shadow."""
    idx = np.zeros(_MAXD, np.int64)
    for k in range(nd):
        if shape[k] <= 0:
            return 0
    while True:
        at = off
        for k in range(nd):
            at += idx[k] * strides[k]
        if at < 0 or at >= granules:
            return -1
        v = shadow[base + at]
        if v >= gen_start:
            d = acc_core[v]
            if d != c and acc_tick[v] > gclock[c, d]:
                return 1
        k = nd - 1
        while k >= 0:
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return 0


@njit(cache=True)
def _box_store(shadow, base, nd, shape, strides, off, value):
    idx = np.zeros(_MAXD, np.int64)
    for k in range(nd):
        if shape[k] <= 0:
            return
    while True:
        at = off
        for k in range(nd):
            at += idx[k] * strides[k]
        shadow[base + at] = value
        k = nd - 1
        while k >= 0:
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return


@njit(cache=True)
def _first_race(order, REC, cw_off, cw_mem, acc_off, ACC, pair_of, fp_off, FP, G, shadow, granule, n_cores,
                cs_base, lr_base, n_sets, n_cross, n_pairs):
    """The position in `order` of the first record whose race checks fault, CLEAN, or UNSUPPORTED (a case the
    Python checkers would meet with an error of their own)."""
    clock = np.zeros((n_cores, _N, _N), np.int64)  # RaceChecker.clock per core
    set_clock = np.zeros((max(n_sets, 1), _N), np.int64)  # per SetFlag slot
    cs_max = np.zeros((max(n_cross, 1), _N), np.int64)  # per core: max of its first k cross-core set clocks
    cs_n = np.zeros(n_cores, np.int64)
    lr_seq = np.zeros(max(n_cross, 1), np.int64)  # RaceChecker.learned, per core from lr_base
    lr_clock = np.zeros((max(n_cross, 1), _N), np.int64)
    lr_n = np.zeros(n_cores, np.int64)
    applied = np.zeros((n_cores, _N), np.int64)
    # the access logs: per (core, buffer, pipe) a ring of (lo, hi, stamp, is_write)
    e_lo = np.zeros((max(n_pairs, 1), _RING), np.int64)
    e_hi = np.zeros((max(n_pairs, 1), _RING), np.int64)
    e_stamp = np.zeros((max(n_pairs, 1), _RING), np.int64)
    e_write = np.zeros((max(n_pairs, 1), _RING), np.uint8)
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
    for pos in range(order.shape[0]):
        i = order[pos]
        c = REC[i, _CORE]
        p = REC[i, _PIPE]
        kind = REC[i, _KIND]
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
                    set_clock[REC[i, _SLOT], q] = clock[c, p, q]
            elif kind == WAIT_FLAG:
                s = REC[REC[i, _REL], _SLOT]
                for q in range(_N):
                    if set_clock[s, q] > clock[c, p, q]:
                        clock[c, p, q] = set_clock[s, q]
            elif acc_off[i + 1] > acc_off[i]:  # _check
                stamp = clock[c, p, p]
                for a in range(acc_off[i], acc_off[i + 1]):
                    b, lo, hi, is_write = ACC[a, 0], ACC[a, 1], ACC[a, 2], ACC[a, 3]
                    for q in range(_N):
                        other = pair_of[b, q]
                        if q == p or other < 0:
                            continue
                        seen = clock[c, p, q]
                        for j in range(length[other] - 1, -1, -1):
                            e = (head[other] + j) % _RING
                            if e_stamp[other, e] <= seen:
                                break
                            if e_lo[other, e] < hi and lo < e_hi[other, e] and (is_write or e_write[other, e]):
                                return pos
                    mine = pair_of[b, p]
                    touched[mine] = 1
                    e = (head[mine] + length[mine]) % _RING
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
                            if horizon < e_stamp[mine, (head[mine] + mid) % _RING]:
                                hi_j = mid
                            else:
                                lo_j = mid + 1
                        drop = max(lo_j, length[mine] - _KEEP)
                        if drop > 0:
                            head[mine] = (head[mine] + drop) % _RING
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
                for r in range(cw_off[REC[i, _REL]], cw_off[REC[i, _REL] + 1]):
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
            s = REC[i, _SLOT]
            for d in range(n_cores):
                snap[s, d] = gclock[c, d]
            gclock[c, c] += 1
        elif kind == CROSS_WAIT:
            for r in range(cw_off[REC[i, _REL]], cw_off[REC[i, _REL] + 1]):
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
                granules = G[g, _GRANULES]
                for check in range(3):  # the write, read and atomic shadows this access is tested against
                    if check == 1 and fk == 0:
                        continue
                    if check == 2 and (fk == 2 or G[g, _A] < 0):
                        continue
                    found = _box_races(shadow, G[g, _W + check], gnd, shape, strides, goff, granules, gen_start, c,
                                       acc_core, acc_tick, gclock)
                    if found < 0:
                        return UNSUPPORTED
                    if found:
                        return pos
                mine = _W if fk == 1 else (_R if fk == 0 else _A)
                _box_store(shadow, G[g, mine], gnd, shape, strides, goff, n_acc)
                acc_core[n_acc] = c
                acc_tick[n_acc] = gclock[c, c]
                n_acc += 1
    return CLEAN


# ------------------------------------------------------------------------------------------ encoding
def _dense(keys) -> tuple[np.ndarray, int]:
    """Dense numbers for hashable keys, in order of first appearance."""
    table: dict = {}
    ids = np.fromiter(map(table.setdefault, keys, count()), np.int64)
    if not ids.size:
        return ids, 0
    _, dense = np.unique(ids, return_inverse=True)
    return dense.astype(np.int64), len(table)


def encode(records: list, n_cores: int, granule: int):
    """The arrays _first_race reads, for `records` (every record of the launch; the order is given apart), or
    None when a record has a footprint box of no or more than _MAXD dimensions."""
    n = len(records)
    REC = np.full((n, 5), -1, np.int64)
    core = np.fromiter(map(_core, records), np.int64, n)
    REC[:, _CORE] = core
    REC[:, _PIPE] = np.fromiter(map(_pipe, records), np.int64, n)
    specs = list(map(_spec, records))
    ids = np.fromiter(map(id, specs), np.int64, n)
    uniq, first, which = np.unique(ids, return_index=True, return_inverse=True)
    kind = np.array([_KINDS.get(specs[j].kind, PLAIN) for j in first.tolist()], np.int64)[which] if n else \
        np.zeros(0, np.int64)
    REC[:, _KIND] = kind
    # slots: SetFlags numbered among themselves, CrossCoreSetFlags too
    sets, cross = np.flatnonzero(kind == SET_FLAG), np.flatnonzero(kind == CROSS_SET)
    REC[sets, _SLOT] = np.arange(sets.size)
    REC[cross, _SLOT] = np.arange(cross.size)
    index = {id(records[j]): j for j in chain(sets.tolist(), cross.tolist())}
    waits = np.flatnonzero(kind == WAIT_FLAG).tolist()
    REC[waits, _REL] = [index[id(records[j].released_by)] for j in waits]
    cw_off, cw_mem = [0], []
    for j in np.flatnonzero(kind == CROSS_WAIT).tolist():
        REC[j, _REL] = len(cw_off) - 1
        cw_mem += [REC[index[id(setter)], _SLOT] for setter in records[j].released_by]
        cw_off.append(len(cw_mem))
    # per-core logs: accesses (reads, then writes, of each record) of (core, buffer key) b
    reads, writes = list(map(_reads, records)), list(map(_writes, records))
    n_reads = np.fromiter(map(len, reads), np.int64, n)
    n_writes = np.fromiter(map(len, writes), np.int64, n)
    per_record = n_reads + n_writes
    acc_off = np.zeros(n + 1, np.int64)
    acc_off[1:] = np.cumsum(per_record)
    flat = list(chain.from_iterable(chain.from_iterable(zip(reads, writes))))
    na = len(flat)
    ACC = np.zeros((na, 4), np.int64)
    acc_core = np.repeat(core, per_record)
    if na:
        b, n_bufs = _dense(zip(acc_core.tolist(), map(attrgetter("key"), map(_first, flat))))
        ACC[:, 0] = b
        ACC[:, 1] = np.fromiter(map(_lo, flat), np.int64, na)
        ACC[:, 2] = np.fromiter(map(_hi, flat), np.int64, na)
        ACC[:, 3] = np.repeat(np.tile([0, 1], n), np.column_stack((n_reads, n_writes)).ravel())
        pipe_of = np.repeat(REC[:, _PIPE], per_record)
        pairs = np.unique(b * (_N + 1) + pipe_of)  # pipe ALL records (barriers) never reach _check
        pair_of = np.full((n_bufs, _N + 1), -1, np.int64)
        pair_of.ravel()[pairs] = np.arange(pairs.size)
        pair_of = np.ascontiguousarray(pair_of[:, :_N])
    else:
        pairs, pair_of = np.zeros(0, np.int64), np.full((1, _N), -1, np.int64)
    # GM footprints
    fp_off = np.zeros(n + 1, np.int64)
    boxes, gm_keys = [], {}
    with_footprint = [j for j, fp in enumerate(map(_footprint, records)) if fp]
    for j in with_footprint:
        for buf, offset, shape, strides, is_write in records[j].footprint:
            if not 1 <= len(shape) <= _MAXD:
                return None
            g = gm_keys.setdefault(buf.key, (len(gm_keys), buf.capacity))[0]
            boxes.append((g, offset, 2 if is_write == "atomic" else (1 if is_write else 0), len(shape), shape, strides))
        fp_off[j + 1] = len(boxes)
    np.maximum.accumulate(fp_off, out=fp_off)
    FP = np.zeros((len(boxes), _STRIDES + _MAXD), np.int64)
    for f, (g, offset, fk, nd, shape, strides) in enumerate(boxes):
        FP[f, :_SHAPE] = g, offset, fk, nd
        FP[f, _SHAPE:_SHAPE + nd] = shape
        FP[f, _STRIDES:_STRIDES + nd] = strides
    G = np.full((max(len(gm_keys), 1), 5), -1, np.int64)
    G[:, _MADE] = 0
    size = 0
    for g, capacity in gm_keys.values():  # shadows for the buffers some access writes (the others never race)
        kinds = set(FP[FP[:, _G] == g, _FK].tolist())
        G[g, _GRANULES] = -(-capacity // granule)
        if kinds & {1, 2}:
            for column, needed in ((_W, True), (_R, True), (_A, 2 in kinds)):
                if needed:
                    G[g, column] = size
                    size += G[g, _GRANULES]
    cs_base = np.zeros(n_cores, np.int64)
    lr_base = np.zeros(n_cores, np.int64)
    cs_base[1:] = np.cumsum(np.bincount(core[cross], minlength=n_cores))[:-1]
    lr_base[1:] = np.cumsum(np.bincount(core[kind == CROSS_WAIT], minlength=n_cores))[:-1]
    return dict(REC=REC, cw_off=np.array(cw_off, np.int64), cw_mem=np.array(cw_mem + [0], np.int64), acc_off=acc_off,
                ACC=ACC, pair_of=pair_of, fp_off=fp_off, FP=FP, G=G, shadow_size=size, granule=granule,
                n_cores=n_cores, cs_base=cs_base, lr_base=lr_base, n_sets=int(sets.size),
                n_cross=max(int(cross.size), int((kind == CROSS_WAIT).sum())), n_pairs=int(pairs.size))


def first_race(records: list, order, n_cores: int, granule: int) -> int:
    """Where in `order` (indices into `records`, every record of the launch with its released_by set) the Python
    checkers (a RaceChecker per core and one GmRaceChecker, as AICore._run drives them) would first fault: its
    position, CLEAN, or UNSUPPORTED (let the Python checkers run)."""
    e = encode(records, n_cores, granule)
    if e is None:
        return UNSUPPORTED
    shadow = np.full(max(e["shadow_size"], 1), -1, np.int32)
    return int(_first_race(np.asarray(order, np.int64), e["REC"], e["cw_off"], e["cw_mem"], e["acc_off"], e["ACC"],
                           e["pair_of"], e["fp_off"], e["FP"], e["G"], shadow, e["granule"], e["n_cores"],
                           e["cs_base"], e["lr_base"], e["n_sets"], e["n_cross"], e["n_pairs"]))
