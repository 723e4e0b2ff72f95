"""The real dw tiling vectors (tests/data/conv3d_dw_tiling_vectors_a2.json) as runnable cases: each vector's
blob decoded with Conv3DBackpropFilterV2TilingData.from_bytes, and, where the real shape is too large to
simulate in a test, the same problem with a smaller batch / output size (channels, kernel, strides, pads,
dilations kept) and the real tiling with only the fields that depend on those sizes changed."""
from __future__ import annotations

import json
import struct
from pathlib import Path

from ascend_sim.machine.platform import get_platform
from tiling.conv3d_backprop_filter import Conv3DBackpropFilterV2TilingData

DATA = Path(__file__).parent / "data" / "conv3d_dw_tiling_vectors_a2.json"
VECTORS = json.loads(DATA.read_text())["vectors"]


def real_tiling(v) -> Conv3DBackpropFilterV2TilingData:
    blob = struct.pack(f"<{len(v['tiling_words_int32'])}i", *v["tiling_words_int32"])
    platform = get_platform(v["soc"]).with_overrides(aic_cores=v["core_num"], aiv_cores=2 * v["core_num"])
    return Conv3DBackpropFilterV2TilingData.from_bytes(blob, tiling_key=v["tiling_key"], dtype=v["dtype"],
                                                       platform=platform)


def _input_size(out: int, k: int, s: int, d: int, before: int, after: int) -> int:
    return (out - 1) * s + (k - 1) * d + 1 - before - after


def shrunk_case(v, batch: int, dout: int, ho: int, wo: int):
    """(x_shape, dy_shape, tiling) of vector v with at most `batch`, `dout`, `ho`, `wo` (NCDHW shapes)."""
    n, cin, *_ = v["fmap_shape"]["ori"]
    _, cout, do_r, ho_r, wo_r = v["dy_shape"]["ori"]
    _cout_f, _cin_g, kd, kh, kw = v["filter_shape"]["ori"]
    sd, sh, sw = v["strides_DHW"]
    dd, dh, dw = v["dilations_DHW"]
    pf, pb, pt, pbm, pl, pr = v["pads"]
    n_s, do_s, ho_s, wo_s = min(n, batch), min(do_r, dout), min(ho_r, ho), min(wo_r, wo)
    # the input must still hold the kernel with the real pads
    while _input_size(do_s, kd, sd, dd, pf, pb) < 1:
        do_s += 1
    while _input_size(ho_s, kh, sh, dh, pt, pbm) < 1:
        ho_s += 1
    di = _input_size(do_s, kd, sd, dd, pf, pb)
    hi = _input_size(ho_s, kh, sh, dh, pt, pbm)
    wi = _input_size(wo_s, kw, sw, dw, pl, pr)
    t = real_tiling(v)
    d, p, bb = t.dwTiling, t.params, t.basicBlockTiling
    changes = {"batch": n_s, "dout": do_s, "ho": ho_s, "wo": wo_s, "di": di, "hi": hi, "wi": wi}
    if t.tiling_key == 0:  # base template: the batch*dout and K core splits follow the smaller sizes
        batch_dim = min(p.batchDim, n_s * do_s)
        single_batch = -(-n_s * do_s // batch_dim)
        k_dim = min(p.kDim, ho_s)
        single_ho = -(-ho_s // k_dim)
        changes.update(batchDim=-(-n_s * do_s // single_batch), singleCoreBatch=single_batch,
                       kDim=-(-ho_s // single_ho), singleCoreHo=single_ho)
    else:  # basic block: the K block in whole rows of the new Wo
        rows = ho_s if t.tiling_key in (3, 4) else max(1, min(bb.singleCoreK // wo_r, ho_s))
        changes.update(singleCoreK=rows * wo_s, singleCoreHo=rows,
                       singleCoreBatch=min(d.singleCoreBatch, n_s * do_s))
    shrunk = t.with_overrides(validate=False, **changes)
    return (n_s, cin, di, hi, wi), (n_s, cout, do_s, ho_s, wo_s), shrunk
