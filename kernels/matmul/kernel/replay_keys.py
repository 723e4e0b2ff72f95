"""The example matmul's replayable unit (ascend_sim/engine/replay.py): one output tile (`MatmulTiles.ComputeTile`,
on A2/A3 and on the 950), applied at the end of matmul_kernel.py so that no kernel line moves.

A tile's records depend on its shape (use_m x use_n: the last row or column of tiles is smaller), the L0 half it
starts in and the queues' state; its GM addresses move with the tile's place in A, B and C. The three GlobalTensors
are left out of the key (their bases are the anchors').
"""
from __future__ import annotations

from ascend_sim.ascendc import protocol_state, replay_unit

# The kernel sources (replay.kernel_sources_digest of this folder) the units below were last checked against in
# verify mode: an edited kernel has another digest, and its units then run for real (tests/ascend_sim/engine/
# test_replay_sources.py says when to update it).
VERIFIED_SOURCES = "7965fba6281cc443ef49b4fd7e1203000e8d2abe"


def _extra(tiles, tile, ping) -> tuple:
    """- the tile's shape (use_m, use_n) and the L0 half it starts in;
    - the tile itself when two operands share a GM buffer (one anchor per buffer could not move both)."""
    _, _, _, use_m, use_n = tiles.TilePlace(tile)
    buffers = {tiles.a.buffer, tiles.b.buffer, tiles.c.buffer}
    return use_m, use_n, ping, tile if len(buffers) < 3 else None


def _key(tiles, tile, ping) -> tuple:
    """The queue protocol's state of the L1 and L0C queues and the pipe (with extra: what decides a tile)."""
    return (protocol_state(tiles.pipe, tiles.qa1, tiles.qb1, tiles.qc),)


def _anchors(tiles, tile, ping) -> dict:
    """- A moves with the tile's first element (batch, row m0), B with its first column (batch, column n0), C with
    its first element (batch, m0, n0)."""
    t = tiles.t
    batch, m0, n0, _, _ = tiles.TilePlace(tile)
    a, b, c = tiles.a, tiles.b, tiles.c
    b_batch = 0 if t.shared_b else batch * t.K * t.N
    return {a.buffer: a.address + (batch * t.M * t.K + m0 * t.K) * a.dtype.itemsize,
            b.buffer: b.address + (b_batch + n0) * b.dtype.itemsize,
            c.buffer: c.address + (batch * t.M * t.N + m0 * t.N + n0) * c.dtype.itemsize}


def compute_tile_unit(method):
    """MatmulTiles.ComputeTile (one output tile) as a replayable unit."""
    return replay_unit("MatmulTiles.ComputeTile", fixed=("t", "tools"), exclude=("a", "b", "c"), extra=_extra,
                       key=_key, anchors=_anchors, verified=VERIFIED_SOURCES)(method)
