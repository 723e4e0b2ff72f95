"""The fast engine's scheduler pass: recorded streams timed by a numba-compiled copy of schedule.py.

Used by `RunReport.retime(platform, engine="fast")`. The streams become flat numpy arrays once per retime (per
record its core, pipe, kind code, flag key and cost on the target platform), one compiled function times them,
and the records are copied once with the result, into the same report the exact retime builds.

Why it is bit-identical to schedule.py: the compiled pass is a literal transcription of it, not a model of it.
It keeps the same state (scalar time, pipe free times, busy sums, per-pipe waiting queues, backlog, SetFlag
queues, cross-core counts and rounds, SyncAll arrivals, the woken list) and changes it by the same steps in the
same order: records submitted core after core in program order, `pump` after each, then the woken cores in the
order they were woken. The order matters: a core's cross-core counts are a FIFO filled in the order the exact
scheduler starts the sets, not in time order. The arithmetic is the same float64 adds and compares, and costs
come from each spec's own cost function, so every issue, start, end, busy sum and cycle count is the same
number. tests/ascend_sim/passes/test_fast_retime.py checks it on kernels, corner cases and random streams.

Queues as counters: a pipe's waiting queue is always a run of that pipe's queued records in program order
(issued, not yet started), so it is two counters into the pipe's record list; the backlog is the run from the
first record not yet issued to the last one submitted; the record a full queue waits for (`queue_depth` back
on the same pipe) is known in advance (`prev`). State lives in a few 2-D arrays with named columns, so that the
functions stay cheap to compile (about 7 s once; cache=True keeps them on disk) and to call.

Where the time goes (C3D conv3a dx layer, 46k records, benchmarks/bench_retime.py): the compiled pass took
about 8 ms where the exact scheduler spends about 60 ms of Python (since issue 23's h30sched, 0.5-1 ms for 51k
records: 10-20 ns a record, `_run`'s comment says why); the rest of a fast retime is per-record
Python that both engines share in kind: the costs (spec.cost per record, about 25 ms then; records are grouped
by spec, free specs such as flags skip the call, and since issue 23 the others call it once per distinct operands
object; the cost formulas are not rewritten here, so none can drift)
and the timed copies of the records (about 40 ms, plus the garbage collector's pass over them), which the exact
retime makes with the slower Record.unscheduled (about 140 ms). numba is imported only when this engine is used.
"""
from __future__ import annotations

import gc
from itertools import count, repeat
from operator import attrgetter, itemgetter

import numpy as np

from ascend_sim.machine.coretypes import mode4_route
from ascend_sim.machine.faults import SyncFault
from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.passes.numba_jit import njit
from ascend_sim.passes.schedule import CostModel, overflow_fault
from ascend_sim.record import Kind, Record, _no_cost

_N = len(QUEUES)  # pipes with a queue (S .. FIX); Pipe.ALL is 7
_ALL = int(Pipe.ALL)
# record kinds (what the scheduler does differently for them); a PipeBarrier on one pipe is plain (pipes are serial)
PLAIN, SET_FLAG, WAIT_FLAG, BARRIER_ALL, SYNC_ALL, CROSS_SET, CROSS_WAIT, BARRIER = range(8)
_KINDS = {Kind.SET_FLAG: SET_FLAG, Kind.WAIT_FLAG: WAIT_FLAG, Kind.BARRIER: BARRIER, Kind.SYNC_ALL: SYNC_ALL,
          Kind.CROSS_CORE_SET: CROSS_SET, Kind.CROSS_CORE_WAIT: CROSS_WAIT}
_BLOCKED, _ISSUED, _DONE = 0, 1, 2
_OVERFLOW = 1  # status: a cross-core flag counted past 15
_CAP = 16  # cross-core counts held per (core, flag): the 16th faults
# counters (one int64 array): rounds made, members written, woken queue head and length, SyncAll arrivals,
# status, the core and flag of a fault, and records run so far (the length of `order`)
_NROUNDS, _NMEMBERS, _WHEAD, _WLEN, _NARRIVED, _STATUS, _ERR_CORE, _ERR_FLAG, _NRUN = range(9)

# Column layouts of the state arrays (few arrays, so that the compiled functions stay cheap to compile and call).
# R (int64, per record, static): core, pipe, kind, key. T (float64, per record): cost, issue, start, end.
_CORE, _PIPE, _KIND, _KEY = range(4)
_COST, _ISSUE, _START, _END = range(4)
# CI (int64, per core): records issued / started per pipe, the first record not issued, records submitted,
# pending (backlog + waiting), whether it is in the woken list, the SyncAll record it has arrived at (or -1)
_NISS, _NST, _NXT, _NSUB, _PEND, _INWOKEN, _ARRIVED = 0, _N, 2 * _N, 2 * _N + 1, 2 * _N + 2, 2 * _N + 3, 2 * _N + 4
# CF (float64, per core): pipe free times, busy per pipe, scalar time
_FREE, _BUSY, _SCALAR = 0, _N, 2 * _N


# ------------------------------------------------------------------------------------------ compiled pass
@njit(cache=True)
def _layout(R, n_cores, depth):
    """Per (core, pipe): its queued records in program order (pl_off, plist), and per record the one issued
    `depth` before it on its pipe (prev, -1 if none): the entry a full queue waits for."""
    n = R.shape[0]
    counts = np.zeros(n_cores * _N + 1, np.int64)
    for i in range(n):
        k = R[i, _KIND]
        if k != CROSS_WAIT and k != BARRIER_ALL and k != SYNC_ALL:
            counts[R[i, _CORE] * _N + R[i, _PIPE] + 1] += 1
    pl_off = np.cumsum(counts)
    fill = pl_off[:-1].copy()
    plist = np.empty(pl_off[-1], np.int32)  # record numbers (int32: fewer fresh pages to touch)
    prev = np.full(n, -1, np.int32)
    for i in range(n):
        k = R[i, _KIND]
        if k != CROSS_WAIT and k != BARRIER_ALL and k != SYNC_ALL:
            q = R[i, _CORE] * _N + R[i, _PIPE]
            pos = fill[q]
            plist[pos] = i
            if pos - depth >= pl_off[q]:
                prev[i] = plist[pos - depth]
            fill[q] = pos + 1
    return pl_off, plist, prev


@njit(cache=True, inline="always")
def _wake(c, CI, woken, cnt):
    """Launch.wake: append core c to the woken list unless it is in it."""
    if CI[c, _INWOKEN] == 0:
        woken[(cnt[_WHEAD] + cnt[_WLEN]) % woken.shape[0]] = c
        cnt[_WLEN] += 1
        CI[c, _INWOKEN] = 1


@njit(cache=True, inline="always")
def _ready(i, R, KQ):
    """CoreSchedule._ready: a WaitFlag needs a started SetFlag of its key not yet waited."""
    return R[i, _KIND] != WAIT_FLAG or KQ[R[i, _KEY], 1] > KQ[R[i, _KEY], 0]


@njit(cache=True, inline="always")
def _start(i, R, T, rel, done, CI, CF, KQ, key_buf, D, d_rcv, RK, rk_buf, round_off, round_mem, CT, CR, CH,
           woken, cnt, params, order):
    """CoreSchedule._start: the record starts when its pipe is free (and its SetFlag has landed); a SetFlag joins
    its key's queue; then it is run (on_start: its place in `order`). (Inlined into the pump: a call would copy
    every array's descriptor.)"""
    c = R[i, _CORE]
    p = R[i, _PIPE]
    kind = R[i, _KIND]
    s = CF[c, _FREE + p]
    if T[i, _ISSUE] > s:
        s = T[i, _ISSUE]
    if kind == WAIT_FLAG:
        k = R[i, _KEY]
        j = key_buf[KQ[k, 0]]
        KQ[k, 0] += 1
        rel[i] = j
        released = T[j, _END] + params[1]
        if released > s:
            s = released
    cycles = T[i, _COST]
    e = s + cycles
    T[i, _START] = s
    T[i, _END] = e
    done[i] = 1
    CF[c, _FREE + p] = e
    CF[c, _BUSY + p] += cycles
    CI[c, _NST + p] += 1
    if kind == SET_FLAG:
        k = R[i, _KEY]
        key_buf[KQ[k, 1]] = i
        KQ[k, 1] += 1
    elif kind == CROSS_SET:
        _cross_set(i, R, T, CI, D, d_rcv, RK, rk_buf, round_off, round_mem, CT, CR, CH, woken, cnt)
        if cnt[_STATUS]:  # the exact scheduler raises before running the set
            return
    order[cnt[_NRUN]] = i
    cnt[_NRUN] += 1


@njit(cache=True)
def _cross_set(i, R, T, CI, D, d_rcv, RK, rk_buf, round_off, round_mem, CT, CR, CH, woken, cnt):
    """Launch.cross_core_set / _collective: the set joins its round, and a full round counts up each receiver
    (Launch._count). An AIC's mode-2 set is a round of one, which is what the exact scheduler's direct path
    amounts to."""
    d = R[i, _KEY]
    rk = D[d, 0]
    base = RK[rk, 0]
    rk_buf[base + RK[rk, 1]] = i
    RK[rk, 1] += 1
    if RK[rk, 1] != D[d, 1]:
        return
    m = RK[rk, 1]
    RK[rk, 1] = 0
    time = T[rk_buf[base], _END]
    for j in range(1, m):
        if T[rk_buf[base + j], _END] > time:
            time = T[rk_buf[base + j], _END]
    rnd = cnt[_NROUNDS]
    first = cnt[_NMEMBERS]
    for j in range(m):
        round_mem[first + j] = rk_buf[base + j]
    cnt[_NMEMBERS] = first + m
    cnt[_NROUNDS] = rnd + 1
    round_off[rnd + 1] = first + m
    flag = D[d, 2]
    for r in range(D[d, 3], D[d + 1, 3]):
        o = d_rcv[r]
        pos = (CH[o, flag, 0] + CH[o, flag, 1]) % _CAP
        CT[o, flag, pos] = time
        CR[o, flag, pos] = rnd
        CH[o, flag, 1] += 1
        if CH[o, flag, 1] > 15:
            cnt[_STATUS] = _OVERFLOW
            cnt[_ERR_CORE] = o
            cnt[_ERR_FLAG] = flag
            return
        _wake(o, CI, woken, cnt)


@njit(cache=True, inline="always")
def _next_woken(CI, woken, cnt):
    """Launch.drain's step: the first woken core, taken off the woken list."""
    c = woken[cnt[_WHEAD]]
    CI[c, _INWOKEN] = 0
    cnt[_WHEAD] = (cnt[_WHEAD] + 1) % woken.shape[0]
    cnt[_WLEN] -= 1
    return c


# _nrt=False: without numba's reference counts. With them, every inlined call (_start, _ready, _wake) took and
# dropped a reference to each array it was passed, two atomic operations per array per call: about 85 of the
# 100 ns a record took (perf: numba's NRT_incref/NRT_decref). The pass makes no array, so it needs none.
@njit(cache=True, _nrt=False)
def _run(R, T, prev, core_off, pl_off, plist, rel, done, CI, CF, KQ, key_buf, D, d_rcv, RK, rk_buf, round_off,
         round_mem, CT, CR, CH, woken, cnt, params, order):
    """retime's loop: submit every core's records in program order; after each, pump that core, then the cores
    it woke, in order (CoreSchedule.submit then Launch.drain). The pump is CoreSchedule.pump with _issue written
    in; submit's inline path (nothing pending) is taken first, as there: it is what the pump would do then."""
    n_cores = core_off.shape[0] - 1
    for sc in range(n_cores):
        for si in range(core_off[sc], core_off[sc + 1]):
            CI[sc, _NSUB] += 1
            c = sc
            kind = R[si, _KIND]
            if CI[sc, _PEND] == 0 and kind != CROSS_WAIT and kind != BARRIER_ALL and kind != SYNC_ALL:
                # Nothing pending: every earlier record of the core has started, so a full queue's oldest entry
                # has too, and the record issues now; it starts unless it is a WaitFlag whose SetFlag has not.
                t = CF[sc, _SCALAR]
                j = prev[si]
                if j >= 0 and T[j, _START] > t:
                    t = T[j, _START]
                T[si, _ISSUE] = t
                CI[sc, _NISS + R[si, _PIPE]] += 1
                CF[sc, _SCALAR] = t + params[0]
                CI[sc, _NXT] = si + 1
                if not _ready(si, R, KQ):
                    CI[sc, _PEND] = 1
                    continue
                _start(si, R, T, rel, done, CI, CF, KQ, key_buf, D, d_rcv, RK, rk_buf, round_off, round_mem, CT,
                       CR, CH, woken, cnt, params, order)
                if cnt[_STATUS]:
                    return
                if cnt[_WLEN] == 0:
                    continue
                c = _next_woken(CI, woken, cnt)  # a cross-core set woke cores: drain them
            else:
                CI[sc, _PEND] += 1
                if CI[sc, _NXT] < CI[sc, _NSUB] - 1:
                    # The scalar unit is stalled on an earlier record: the core is at rest (every pump runs
                    # until nothing more can start, and another core's step that frees it wakes it), so the
                    # record only joins the backlog, and a pump would change nothing.
                    continue
            while True:
                # ---- pump(c)
                progress = True
                while progress and CI[c, _PEND] > 0:
                    progress = False
                    for p in range(_N):
                        base = pl_off[c * _N + p]
                        while CI[c, _NST + p] < CI[c, _NISS + p]:
                            h = plist[base + CI[c, _NST + p]]
                            if not _ready(h, R, KQ):
                                break
                            _start(h, R, T, rel, done, CI, CF, KQ, key_buf, D, d_rcv, RK, rk_buf, round_off,
                                   round_mem, CT, CR, CH, woken, cnt, params, order)
                            CI[c, _PEND] -= 1
                            progress = True
                            if cnt[_STATUS]:
                                return
                    while CI[c, _NXT] < CI[c, _NSUB]:
                        i = CI[c, _NXT]
                        # ---- _issue(i)
                        kind = R[i, _KIND]
                        state = _ISSUED
                        if kind == CROSS_WAIT:  # blocks the issue of what follows until a count has arrived
                            f = R[i, _KEY]
                            if CH[c, f, 1] == 0:
                                state = _BLOCKED
                            else:
                                h = CH[c, f, 0]
                                rel[i] = CR[c, f, h]
                                CH[c, f, 0] = (h + 1) % _CAP
                                CH[c, f, 1] -= 1
                                t = CF[c, _SCALAR]
                                T[i, _ISSUE] = t
                                T[i, _START] = t
                                e = CT[c, f, h] + params[1]
                                if t > e:
                                    e = t
                                T[i, _END] = e
                                done[i] = 1
                                CF[c, _SCALAR] = e + params[0]
                                state = _DONE
                        elif kind == BARRIER_ALL or kind == SYNC_ALL:  # every pipe drained first
                            for p in range(_N):
                                if CI[c, _NST + p] < CI[c, _NISS + p]:
                                    state = _BLOCKED
                            if state != _BLOCKED and kind == SYNC_ALL and not done[i]:  # Launch.arrive
                                if CI[c, _ARRIVED] < 0:
                                    CI[c, _ARRIVED] = i
                                    cnt[_NARRIVED] += 1
                                if cnt[_NARRIVED] < n_cores:
                                    state = _BLOCKED
                                else:
                                    t = CF[0, _SCALAR]
                                    for o in range(n_cores):
                                        for p in range(_N):
                                            if CF[o, _FREE + p] > t:
                                                t = CF[o, _FREE + p]
                                        if CF[o, _SCALAR] > t:
                                            t = CF[o, _SCALAR]
                                    cnt[_NARRIVED] = 0
                                    for o in range(n_cores):  # sync_to(t) every core; release the others
                                        for p in range(_N):
                                            if t > CF[o, _FREE + p]:
                                                CF[o, _FREE + p] = t
                                        if t > CF[o, _SCALAR]:
                                            CF[o, _SCALAR] = t
                                        other = CI[o, _ARRIVED]
                                        CI[o, _ARRIVED] = -1
                                        if other != i:
                                            T[other, _ISSUE] = t
                                            T[other, _START] = t
                                            T[other, _END] = t
                                            done[other] = 1
                                            _wake(o, CI, woken, cnt)
                            if state != _BLOCKED:
                                t = CF[c, _FREE]
                                for p in range(1, _N):
                                    if CF[c, _FREE + p] > t:
                                        t = CF[c, _FREE + p]
                                if CF[c, _SCALAR] > t:
                                    t = CF[c, _SCALAR]
                                for p in range(_N):
                                    CF[c, _FREE + p] = t
                                CF[c, _SCALAR] = t
                                T[i, _ISSUE] = t
                                T[i, _START] = t
                                T[i, _END] = t
                                done[i] = 1
                                state = _DONE
                        else:
                            t = CF[c, _SCALAR]
                            j = prev[i]
                            if j >= 0:  # queue full: the scalar unit stalls until the oldest entry starts
                                if not done[j]:
                                    state = _BLOCKED
                                elif T[j, _START] > t:
                                    t = T[j, _START]
                            if state != _BLOCKED:
                                T[i, _ISSUE] = t
                                CI[c, _NISS + R[i, _PIPE]] += 1
                                CF[c, _SCALAR] = t + params[0]
                        # ---- back in pump
                        if state == _BLOCKED:
                            break
                        CI[c, _NXT] = i + 1
                        if state == _DONE:
                            CI[c, _PEND] -= 1
                            order[cnt[_NRUN]] = i
                            cnt[_NRUN] += 1
                        else:
                            p = R[i, _PIPE]
                            if CI[c, _NST + p] == CI[c, _NISS + p] - 1 and _ready(i, R, KQ):
                                CI[c, _PEND] -= 1
                                _start(i, R, T, rel, done, CI, CF, KQ, key_buf, D, d_rcv, RK, rk_buf, round_off,
                                       round_mem, CT, CR, CH, woken, cnt, params, order)
                                if cnt[_STATUS]:
                                    return
                        progress = True
                # ---- drain: the next woken core
                if cnt[_WLEN] == 0:
                    break
                c = _next_woken(CI, woken, cnt)


# ------------------------------------------------------------------------------------------ streams -> arrays
_spec, _pipe, _event, _args = attrgetter("spec"), attrgetter("pipe"), attrgetter("event"), attrgetter("args")


def _take(log: list, idx: np.ndarray) -> list:
    """log[i] for i in idx, in C (itemgetter)."""
    if idx.size == 1:
        return [log[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(log))


def encode(streams, kinds, groups, platform):
    """The streams as flat arrays: R (per record its core, pipe, kind code and key: a SetFlag/WaitFlag key
    numbered per (core, event, id), a cross-core set's descriptor, a cross-core wait's flag), each record's cost
    on `platform`, the cross-core descriptors and rounds, and the core offsets.

    Per-record Python is kept to C-level maps (attrgetter, itemgetter, dict.setdefault) except the cost: records
    are grouped by spec (the kind code is the spec's), a spec without a cost (flags, barriers) costs nothing,
    and every other record's cost is its spec's own function (spec.cost(rec.args, model)), called once per
    distinct operands object, so that no cost formula is written twice. On the C3D conv3a layer the costs were
    about a fifth of a fast retime; the timed copies of the records are the largest part
    (benchmarks/bench_retime.py)."""
    models = {kind: CostModel(platform, kinds.count(kind)) for kind in set(kinds)}
    arrays = [record_arrays(log, models[kinds[c]]) for c, log in enumerate(streams)]
    return encode_arrays([len(log) for log in streams], join(arrays), kinds, groups)


# A record's event (a flag's (event, id), a cross-core flag's (mode, flag id)) as a small int, the same in every
# launch of the process (so arrays encoded once, a replayed unit's template's, can be joined with any launch's);
# events are few (a core type's hardware events times the flag ids).
_EVENT_IDS: dict = {}
_EVENTS: list = []


def _event_ids(events: list) -> np.ndarray:
    """The events' ids, new events given the next ones."""
    try:
        return np.fromiter(map(_EVENT_IDS.__getitem__, events), np.int64, len(events))
    except KeyError:
        for event in events:
            if event not in _EVENT_IDS:
                _EVENT_IDS[event] = len(_EVENTS)
                _EVENTS.append(event)
        return np.fromiter(map(_EVENT_IDS.__getitem__, events), np.int64, len(events))


def event_of(event_id: int):
    """The event an id of `record_arrays`'s event array stands for."""
    return _EVENTS[event_id]


def record_arrays(log, model) -> tuple:
    """Records as (pipes, kind codes, costs, event ids): the per-record part of `encode` (also used on the
    records of replayed units' templates, once per launch: ascend_sim/engine/replay_engine.py). The event id
    (`event_of`) is given for flags and cross-core flags, -1 for the rest."""
    n = len(log)
    cost = np.zeros(n, np.float64)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), cost, np.zeros(0, np.int64)
    specs = list(map(_spec, log))
    pipes = np.fromiter(map(_pipe, log), np.int64, n)
    number = {spec: u for u, spec in enumerate(dict.fromkeys(specs))}  # specs hash by identity
    distinct, which = list(number), np.fromiter(map(number.__getitem__, specs), np.int64, n)
    kind_of = np.empty(len(distinct), np.int64)
    for u, spec in enumerate(distinct):
        kind_of[u] = _KINDS.get(spec.kind, PLAIN)
        if spec.cost is not _no_cost:
            idx = np.flatnonzero(which == u)
            args = list(map(_args, _take(log, idx)))
            if None in args:  # NOPs (no operands) cost nothing
                keep = np.fromiter((a is not None for a in args), bool, idx.size)
                idx, args = idx[keep], [a for a in args if a is not None]
            cost[idx] = _costs(spec.cost, args, model)
    kind = kind_of[which]
    # the exact scheduler's order of tests: CrossCoreWaitFlag, then anything on PIPE_ALL (or SyncAll)
    kind[(pipes == _ALL) & (kind != CROSS_WAIT) & (kind != SYNC_ALL)] = BARRIER_ALL
    event = np.full(n, -1, np.int64)
    flagged = np.flatnonzero((kind == SET_FLAG) | (kind == WAIT_FLAG) | (kind == CROSS_SET) | (kind == CROSS_WAIT))
    if flagged.size:
        event[flagged] = _event_ids(list(map(_event, _take(log, flagged))))
    return pipes, kind, cost, event


def _costs(cost, args: list, model) -> np.ndarray:
    """cost(a, model) for each operands tuple a, called once per distinct object: records the front-end cache
    made from one descriptor share theirs (on the dx layers a launch's records hold 4 to 14 times fewer operands
    objects than records), and a cost is a function of them."""
    distinct, which = _distinct(args)
    costs = np.fromiter(map(cost, distinct, repeat(model)), np.float64, len(distinct))
    return costs if len(distinct) == len(args) else costs[which]


def _distinct(objects: list) -> tuple[list, np.ndarray]:
    """The distinct objects (by identity, in order of first appearance) and each one's index among them, in C
    (dicts keyed by id: neither a sort nor the objects' own hashing)."""
    ids = list(map(id, objects))
    first = dict(zip(ids, objects))  # one object per id (the same object), in order of first appearance
    number = dict(zip(first, count()))
    return list(first.values()), np.fromiter(map(number.__getitem__, ids), np.int64, len(ids))


def join(parts) -> tuple:
    """`record_arrays` tuples -> one (pipes, kind codes, costs, event ids), in order."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


@njit(cache=True)
def _gather(pipes, kind, cost, event, starts, sizes, core_off, n_events):
    """The streams' R (core, pipe, kind, SetFlag/WaitFlag key) and T (cost filled in) from the pool's arrays, the
    streams being the pool's runs starts[p]:starts[p] + sizes[p] in order, `core_off` records apart; with the
    SetFlags per flag key (keys one per (core, event), numbered in order of first use) and the positions and
    event ids of the cross-core records. One pass writing each array once: made by numpy steps, the gathered copies, the core
    column and the masks were fresh arrays as long as the streams, first touched one after another."""
    n = core_off[-1]
    n_cores = core_off.shape[0] - 1
    R = np.empty((n, 4), np.int64)
    T = np.zeros((n, 4), np.float64)
    number = np.full(n_cores * n_events, -1, np.int64)
    sets = np.zeros(n_cores * n_events, np.int64)  # SetFlags per (core, event)
    cross = np.empty(n, np.int64)
    cross_events = np.empty(n, np.int64)
    n_keys = 0
    n_cross = 0
    i = 0
    c = 0
    for p in range(starts.shape[0]):
        for j in range(starts[p], starts[p] + sizes[p]):
            while i >= core_off[c + 1]:
                c += 1
            k = kind[j]
            R[i, _CORE] = c
            R[i, _PIPE] = pipes[j]
            R[i, _KIND] = k
            R[i, _KEY] = -1
            T[i, _COST] = cost[j]
            if k == SET_FLAG or k == WAIT_FLAG:
                code = c * n_events + event[j]
                if number[code] < 0:
                    number[code] = n_keys
                    n_keys += 1
                R[i, _KEY] = number[code]
                if k == SET_FLAG:
                    sets[code] += 1
            elif k == CROSS_SET or k == CROSS_WAIT:
                cross[n_cross] = i
                cross_events[n_cross] = event[j]
                n_cross += 1
            i += 1
    per_key = np.zeros(n_keys, np.int64)
    for code in range(number.shape[0]):
        if number[code] >= 0:
            per_key[number[code]] = sets[code]
    return R, T, per_key, cross[:n_cross].copy(), cross_events[:n_cross].copy()


def encode_arrays(lengths, pool, kinds, groups, starts=None, sizes=None):
    """`encode` from the cores' records as one `record_arrays` tuple `pool` (the cores one after another,
    `lengths` records each), or from runs of it: the streams are pool[starts[p]:starts[p] + sizes[p]] in order
    (replay_engine.stream_arrays). The flag keys and the cross-core descriptors and rounds. Keys, rounds and
    descriptors are numbered in an order of their own (only their identity matters to the pass)."""
    pipes, kind, cost, event = pool
    n_cores = len(lengths)
    core_off = np.zeros(n_cores + 1, np.int64)
    core_off[1:] = np.cumsum(lengths)
    if starts is None:
        starts, sizes = np.zeros(1, np.int64), np.array([len(kind)], np.int64)
    n_events = max(len(_EVENTS), 1)
    R, T, per_key, cross, events = _gather(pipes, kind, cost, event, starts, sizes, core_off, n_events)
    descriptors: dict = {}  # (round, setters, flag, receivers) -> descriptor
    rounds: dict = {}  # round key -> (round, how many sets it may hold)
    flag_index: dict = {}  # cross-core flag id -> a dense index
    memo: dict = {}  # (core, mode, flag) -> (round key, setters, receivers)
    is_set = R[cross, _KIND] == CROSS_SET
    n_cross = int(is_set.sum())
    if cross.size:  # one step per (core, event, set or wait): the sets of one count their round up together
        core = R[cross, _CORE]
        groups_of, first, which, group_sizes = np.unique((core * n_events + events) * 2 + is_set,
                                                         return_index=True, return_inverse=True, return_counts=True)
        key_of = np.empty(groups_of.size, np.int64)
        cores_of = _CoresOf(kinds, groups)
        for g, (j, size) in enumerate(zip(first.tolist(), group_sizes.tolist())):
            c, found = int(core[j]), _EVENTS[int(events[j])]
            mode, flag_id = found[0], found[1]
            flag = flag_index.setdefault(flag_id, len(flag_index))
            key_of[g] = flag if not is_set[j] else _descriptor(c, mode, flag, cores_of, descriptors, rounds,
                                                               memo, flag_index, flag_id, size)
        R[cross, _KEY] = key_of[which]
    return dict(core_off=core_off, R=R, T=T, n_keys=len(per_key), per_key=per_key, descriptors=descriptors,
                rounds=rounds, n_cross=n_cross, flags=list(flag_index))


class _CoresOf:
    """The cores of a launch by core type and by (core type, AI core), listed once (a cross-core round's setters
    and receivers are looked up per core and flag)."""

    def __init__(self, kinds, groups):
        self.kinds, self.groups = kinds, groups
        self.of_kind: dict = {}  # core type -> its cores
        self.of_kind_group: dict = {}  # (core type, AI core) -> its cores
        for c, (kind, group) in enumerate(zip(kinds, groups)):
            self.of_kind.setdefault(kind, []).append(c)
            self.of_kind_group.setdefault((kind, group), []).append(c)

    def of(self, kind, group) -> list:
        """The cores of type `kind` in AI core `group`, in core order."""
        return self.of_kind_group.get((kind, group), [])


def _descriptor(c, mode, flag, cores_of, descriptors, rounds, memo, flag_index, flag_id, sets=1) -> int:
    """Launch.cross_core_set for `sets` sets of core c: which round they join, how many sets fill the round
    (counted from the setting core, as there), which cores a full round counts up, in core order, and the flag
    they count (the set's own, except in mode 4: mode4_route)."""
    found = memo.get((c, mode, flag))
    if found is None:
        kind, group = cores_of.kinds[c], cores_of.groups[c]
        if mode == 0:
            same_type = cores_of.of_kind[kind]
            found = (0, kind, flag), same_type, same_type, flag
        elif mode == 1:
            members = cores_of.of(kind, group)
            found = (1, group, flag), members, members, flag
        elif mode == 4:  # one count on one core: a round of one
            aivs = cores_of.of("AIV", group)
            to_kind, sub, counted = mode4_route(kind, aivs.index(c) if c in aivs else 0, flag_id)
            target = aivs[sub] if to_kind == "AIV" else cores_of.of("AIC", group)[0]
            found = (4, c, flag), [c], [target], flag_index.setdefault(counted, len(flag_index))
        elif kind == "AIC":  # counts each AIV of its AI core at once: a round of one
            found = ("AIC", c, flag), [c], cores_of.of("AIV", group), flag
        else:
            found = (2, group, flag), cores_of.of("AIV", group), cores_of.of("AIC", group), flag
        memo[(c, mode, flag)] = found
    key, setters, receivers, counted = found
    round_id, size = rounds.get(key, (len(rounds), 0))
    rounds[key] = (round_id, size + sets)  # a round never holds more sets than were issued to it
    return descriptors.setdefault((round_id, len(setters), counted, tuple(receivers)), len(descriptors))


# ------------------------------------------------------------------------------------------ retime
def _make_copier():
    """copy_all(records, issues, starts, ends): copies of the records with their new schedule, as
    Record.unscheduled() then timed, written out attribute by attribute (several times faster than its loop)."""
    fields = [name for name in Record.__slots__ if name not in ("issue", "start", "end", "released_by")]
    lines = ["def copy_all(records, issues, starts, ends):",
             "    new = Record.__new__",
             "    out = []",
             "    append = out.append",
             "    for r, i, s, e in zip(records, issues, starts, ends):",
             "        c = new(Record)"]
    lines += [f"        c.{name} = r.{name}" for name in fields]
    lines += ["        c.issue = i", "        c.start = s", "        c.end = e", "        c.released_by = None",
              "        append(c)", "    return out"]
    namespace = {"Record": Record}
    exec("\n".join(lines), namespace)
    return namespace["copy_all"]


copy_all = _make_copier()


class Schedule:
    """What the compiled pass computed for the streams: per record (in stream order, cores one after another)
    its issue, start and end (`T`) and what released it (`rel`: a WaitFlag's SetFlag, a CrossCoreWaitFlag's
    round), the records in the order the exact scheduler runs them (`order`), and each core's final state."""

    def __init__(self, streams, core_off, R, T, rel, order, n_run, CI, CF, KQ, CH, RK, round_off, round_mem, cnt,
                 flags, plist, pl_off):
        self.streams, self.core_off, self.R, self.T, self.rel = streams, core_off, R, T, rel
        self.order = order[:n_run]
        self.CI, self.CF, self.KQ, self.CH, self.RK = CI, CF, KQ, CH, RK
        self.round_off, self.round_mem, self.cnt, self.flags = round_off, round_mem, cnt, flags
        self.plist, self.pl_off = plist, pl_off

    @property
    def overflow(self) -> bool:
        return self.cnt[_STATUS] == _OVERFLOW

    def overflow_fault(self) -> SyncFault:
        """schedule.overflow_fault of the set that overflowed: the last of the last round counted."""
        last = int(self.round_mem[self.round_off[int(self.cnt[_NROUNDS])] - 1])
        c = int(np.searchsorted(self.core_off, last, side="right")) - 1
        return overflow_fault(self.flags[int(self.cnt[_ERR_FLAG])], int(self.cnt[_ERR_CORE]),
                              self.streams[c][last - int(self.core_off[c])])

    @property
    def clean(self) -> bool:
        """Every record ran and nothing is left over: no SetFlag or cross-core count unwaited, no core at a
        SyncAll, no cross-core round half set. (Otherwise a run reports a fault.)"""
        return (not self.overflow and not self.CI[:, _PEND].any() and not (self.KQ[:, 1] - self.KQ[:, 0]).any()
                and not self.CH[:, :, 1].any() and not self.cnt[_NARRIVED] and not self.RK[:, 1].any())

    def times(self) -> tuple[list, list, list]:
        """Per record, in stream order: issue, start and end cycles."""
        return self.T[:, _ISSUE].tolist(), self.T[:, _START].tolist(), self.T[:, _END].tolist()

    def core_times(self, c: int) -> tuple[list, list]:
        """Core c's records' start and end cycles, in stream order."""
        lo, hi = int(self.core_off[c]), int(self.core_off[c + 1])
        return self.T[lo:hi, _START].tolist(), self.T[lo:hi, _END].tolist()

    def cycles(self) -> list[float]:
        return [max(max(row[_FREE:_FREE + _N]), 0.0) for row in self.CF.tolist()]

    def busy(self) -> list[list[float]]:
        return [row[_BUSY:_BUSY + _N] for row in self.CF.tolist()]

    def pipe_free(self) -> list[list[float]]:
        return [row[_FREE:_FREE + _N] for row in self.CF.tolist()]

    def releases(self, records: list):
        """(record index, what released it) per wait: a WaitFlag's SetFlag, a CrossCoreWaitFlag's round (a
        tuple of the sets that made it), taken from `records` (the streams' records, or copies of them)."""
        waits = np.flatnonzero(self.rel >= 0)
        if not waits.size:
            return
        cross_wait = (self.R[waits, _KIND] == CROSS_WAIT).tolist()
        offs, members = self.round_off.tolist(), self.round_mem.tolist()
        for i, by, is_cross in zip(waits.tolist(), self.rel[waits].tolist(), cross_wait):
            if is_cross:
                yield i, tuple(records[m] for m in members[offs[by]:offs[by + 1]])
            else:
                yield i, records[by]

    def stuck_head(self, c: int) -> int:
        """The first blocked record of core c (CoreSchedule.stuck()[0]), as an index into the streams."""
        CI = self.CI
        heads = [self.plist[self.pl_off[c * _N + p] + CI[c, _NST + p]] for p in range(_N)
                 if CI[c, _NST + p] < CI[c, _NISS + p]]
        return int(min(heads) if heads else CI[c, _NXT])


def schedule(streams: list[list], kinds: list[str], groups: list[int], platform, encoded: dict | None = None
             ) -> Schedule:
    """Time the streams (one list of records per core, with its core type name and AI core) on `platform` with
    the compiled pass. It stops where the exact scheduler would raise (a cross-core flag counted past 15).
    `encoded`: the streams already encoded (`encode_arrays`; replayed units are encoded from their templates)."""
    if platform.queue_depth < 1:
        raise ValueError(f"queue_depth={platform.queue_depth} must be at least 1")
    e = encode(streams, kinds, groups, platform) if encoded is None else encoded
    n_cores = len(kinds)
    core_off, R = e["core_off"], e["R"]
    n = R.shape[0]
    pl_off, plist, prev = _layout(R, n_cores, platform.queue_depth)
    params = np.array([platform.scalar_issue_cycles, platform.rates.sync_latency], np.float64)
    T = e["T"]  # costs filled in; issue, start and end zeros
    # cross-core descriptors (round, setters, flag, first receiver) and round buffers
    descs = sorted(e["descriptors"].items(), key=lambda item: item[1])
    D = np.zeros((len(descs) + 1, 4), np.int64)
    receivers = []
    for (round_id, n_setters, flag, rcv), d in descs:
        D[d, :3] = round_id, n_setters, flag
        D[d, 3] = len(receivers)
        receivers += rcv
    D[len(descs), 3] = len(receivers)
    d_rcv = np.array(receivers + [0], np.int64)
    RK = np.zeros((max(len(e["rounds"]), 1), 2), np.int64)
    for round_id, size in e["rounds"].values():
        RK[round_id, 1] = size
    RK[:, 0] = np.cumsum(RK[:, 1]) - RK[:, 1]
    rk_buf = np.zeros(max(int(RK[:, 1].sum()), 1), np.int64)
    RK[:, 1] = 0
    # SetFlag queues: one run of key_buf per key, as long as that key has SetFlags
    n_keys = max(e["n_keys"], 1)
    KQ = np.zeros((n_keys, 2), np.int64)
    per_key = e["per_key"]  # SetFlags per key
    KQ[:len(per_key), 0] = np.cumsum(per_key) - per_key
    KQ[:, 1] = KQ[:, 0]
    key_buf = np.zeros(max(int(per_key.sum()), 1), np.int64)
    flags, n_cross = e["flags"], e["n_cross"]
    n_flags = max(len(flags), 1)
    CI = np.zeros((n_cores, _ARRIVED + 1), np.int64)
    CI[:, _NXT] = CI[:, _NSUB] = core_off[:-1]
    CI[:, _ARRIVED] = -1
    CF = np.zeros((n_cores, _SCALAR + 1), np.float64)
    rel = np.full(n, -1, np.int64)
    round_off = np.zeros(n_cross + 1, np.int64)
    round_mem = np.zeros(max(n_cross, 1), np.int64)
    cnt = np.zeros(9, np.int64)
    order = np.zeros(n, np.int64)
    CH = np.zeros((n_cores, n_flags, 2), np.int64)
    _run(R, T, prev, core_off, pl_off, plist, rel, np.zeros(n, np.uint8), CI, CF, KQ, key_buf, D, d_rcv, RK,
         rk_buf, round_off, round_mem, np.zeros((n_cores, n_flags, _CAP), np.float64),
         np.zeros((n_cores, n_flags, _CAP), np.int64), CH, np.zeros(n_cores, np.int64), cnt, params, order)
    return Schedule(streams, core_off, R, T, rel, order, int(cnt[_NRUN]), CI, CF, KQ, CH, RK, round_off, round_mem,
                    cnt, flags, plist, pl_off)


def retime(streams: list[list], kinds: list[str], groups: list[int], platform):
    """schedule.retime on the compiled pass: (per core the timed copies of its records, cycles, busy per pipe)."""
    s = schedule(streams, kinds, groups, platform)
    if s.overflow:
        raise s.overflow_fault()
    core_off = s.core_off
    n_cores = len(streams)
    for c in range(n_cores):  # a deadlock: CoreSchedule.stuck()[0] of the first core left with records
        if s.CI[c, _PEND]:
            rec = streams[c][s.stuck_head(c) - int(core_off[c])]
            raise SyncFault(f"the recorded stream cannot be scheduled: {rec.describe()} never runs",
                            core=c, instruction=rec.name, pipe=rec.pipe.name, source=rec.source)
    # the timed copies, and what released each wait (its SetFlag; the cross-core sets of its round)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # one new object per record: the cyclic collector would walk the heap again and again
    try:
        copies = copy_all([rec for log in streams for rec in log], *s.times())
    finally:
        if gc_was_enabled:
            gc.enable()
    for i, by in s.releases(copies):
        copies[i].released_by = by
    logs = [copies[core_off[c]:core_off[c + 1]] for c in range(n_cores)]
    return logs, s.cycles(), s.busy()
