"""Small vector kernels the tests of several layers run (the TQue tests, the vector engine tests)."""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import Add, DataCopy, GetBlockIdx, GetBlockNum, GlobalTensor, TPipe, TPosition, TQue


def add_kernel(n, tile, buffers):
    """z = x + y in tiles through VECIN / VECOUT queues of `buffers` buffers each, split over the cores."""
    def kernel(x, y, z):
        per_core = n // GetBlockNum()
        base = GetBlockIdx() * per_core
        pipe = TPipe()
        qx, qy, qz = TQue(TPosition.VECIN, buffers), TQue(TPosition.VECIN, buffers), TQue(TPosition.VECOUT, buffers)
        for q in (qx, qy, qz):
            pipe.InitBuffer(q, buffers, tile * 4)
        gx, gy, gz = (GlobalTensor(np.float32).SetGlobalBuffer(a) for a in (x, y, z))
        for t in range(per_core // tile):
            off = base + t * tile
            a, b = qx.AllocTensor(np.float32), qy.AllocTensor(np.float32)
            DataCopy(a, gx[off], tile)
            DataCopy(b, gy[off], tile)
            qx.EnQue(a)
            qy.EnQue(b)
            a, b = qx.DeQue(np.float32), qy.DeQue(np.float32)
            c = qz.AllocTensor(np.float32)
            Add(c, a, b, tile)
            qz.EnQue(c)
            qx.FreeTensor(a)
            qy.FreeTensor(b)
            c = qz.DeQue(np.float32)
            DataCopy(gz[off], c, tile)
            qz.FreeTensor(c)
    return kernel
