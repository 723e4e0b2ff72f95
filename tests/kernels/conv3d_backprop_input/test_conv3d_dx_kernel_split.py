"""enableKernelSplit: the real host's flag for two hard-wired shapes, which the A2 Conv3DBackpropInputV2 entry does not run.

hicann/ops-nn: `Conv3DBackpropInputV2Tiling::CheckKernelSplitEnable` (op_host/op_tiling/arch22/
conv3d_backprop_input_v2_base_tiling.cpp) sets enableKernelSplit on 20- and 24-core chips for two video-GPT shapes
(kernel 4x4x4, stride 2, pad 3: dy (1, 16 cout1, 62, 66, 66) -> dx (1, 16 cin1, 120, 128, 128), and dy (1, 16
cout1, 122, 130, 130) -> dx (1, 1 cin1, 240, 256, 256)). The Conv3DBackpropInputV2 entry (op_kernel/
conv3d_backprop_input_v2.cpp) then runs the init-output pass and no driver; only Conv3DTransposeV2 instantiates
the kernel-split Conv3dDx. Before this was handled the operator returned an all-NaN dx after 0 instructions.

Now: the generator keeps the real host's answer (byte for byte, key 256), validate() refuses the flag, the plan
clears it (the same tiling values run on the general driver), an override setting it is refused before launch and
the kernel entry raises rather than return. The shapes are far too big to simulate whole in a test (one core's
share is about 500,000 instructions), so the data checks run the first tiles of one core of the real shape with
the plan's tiling and compare every element they write with PyTorch.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ascend_sim import Chip
from ascend_sim.ascendc import GetBlockIdx
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import filter_to_fractal_z_3d
from ascend_sim.machine.tensor import GmAddr
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2 import \
    conv3d_backprop_input_v2 as kernel_entry
from kernels.conv3d_backprop_input.plan import plan_conv3d_dx
from tiling import TilingValidationError, conv3d_backprop_input_tiling, validate

STRIDES, PADS = (2, 2, 2), (3, 3, 3, 3, 3, 3)
# (dy, filter, dx) NCDHW with cout1 = 16 and cin1 = 16 or 1 for the dtype's C0 (16 for 2 bytes, 8 for float32)
SHAPES = {
    ("first", 2): ((1, 256, 62, 66, 66), (256, 256, 4, 4, 4), (1, 256, 120, 128, 128)),
    ("first", 4): ((1, 128, 62, 66, 66), (128, 128, 4, 4, 4), (1, 128, 120, 128, 128)),
    ("second", 2): ((1, 256, 122, 130, 130), (256, 3, 4, 4, 4), (1, 3, 240, 256, 256)),
    ("second", 4): ((1, 128, 122, 130, 130), (128, 3, 4, 4, 4), (1, 3, 240, 256, 256)),
}
# Conv3DTransposeV2 UT vectors (conv/conv3d_transpose_v2/tests/ut/op_host/test_conv3d_transpose_v2_tiling.cpp,
# Conv3d_transpose_binary_test_kernel_split and _kernel_split2: bfloat16, Ascend910B3, tiling key 256). The
# transpose tiling derives from the Conv3DBackpropInputV2 base tiling, so these are the dx host's answers too.
UT_WORDS = {
    "first": "1 1 4 1 1 5 20 0 1 256 256 16 16 16 16 16 4 62 66 66 120 128 128 4 4 4 1 2 2 2 3 3 3 3 3 3 0 0 0 0 0 1 1 1 "
             "2 2 2 2 2 1 256 16 16 24 1 128 64 128 1 1 1 1 1 8 8 1 1 1 0 0 0 0 1 0 4096 0 256 0",
    "second": "1 1 4 1 1 5 20 0 1 3 256 16 1 16 1 16 4 122 130 130 240 256 256 4 4 4 1 2 2 2 3 3 3 3 3 3 0 0 0 0 0 1 1 1 "
              "2 2 2 1 2 1 256 16 1 48 1 256 64 16 1 1 1 1 1 16 32 1 1 1 0 0 0 0 1 0 16384 0 16 0",
}
DTYPE_NAMES = {"float16": 2, "bfloat16": 2, "float32": 4}


def _tiling(shape: str, dtype: str, platform: str):
    dy, w, dx = SHAPES[(shape, DTYPE_NAMES[dtype])]
    return conv3d_backprop_input_tiling(dy, w, dx, STRIDES, PADS, dtype=dtype, platform=platform)


def _plan(shape: str, dtype: str, platform: str):
    dy, w, dx = SHAPES[(shape, DTYPE_NAMES[dtype])]
    return plan_conv3d_dx(dx, w, dy, dtype, strides=(1, 1, *STRIDES), pads=PADS, data_format="NCDHW",
                          platform=platform, route="v2")


@pytest.mark.parametrize("shape", ["first", "second"])
def test_generator_gives_the_real_hosts_answer_and_validate_refuses_its_flag(shape):
    generated = _tiling(shape, "bfloat16", "Ascend910B3")
    assert generated.to_words() == [int(v) for v in UT_WORDS[shape].split()]
    assert generated.tiling_key == 256 and generated.enableKernelSplit
    report = validate(generated)
    assert [p.field for p in report.problems] == ["enableKernelSplit"], str(report)
    assert "Conv3DBackpropInputV2 entry" in str(report) and "unwritten" in str(report)
    assert any("enableKernelSplit=1" in note for note in generated.notes)


@pytest.mark.parametrize("platform", ["Ascend910B2", "Ascend910B3"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape", ["first", "second"])
def test_plan_runs_the_same_tiling_without_the_flag(shape, dtype, platform):
    generated = _tiling(shape, dtype, platform)
    assert generated.enableKernelSplit and generated.tiling_key == 256 + generated.loadB2Condition
    plan = _plan(shape, dtype, platform)
    assert plan.route == "v2" and not plan.tiling.enableKernelSplit
    assert plan.tiling.tiling_key == generated.loadB2Condition  # general driver (not the basic-block one)
    assert plan.tiling.to_words() == generated.to_words()  # the values are the host's, only the key differs
    assert validate(plan.tiling).ok
    assert any(note.startswith("enableKernelSplit cleared") for note in plan.notes)


def test_other_core_counts_never_set_the_flag():
    from ascend_sim.machine.platform import get_platform

    plat = get_platform("Ascend910B2").with_overrides(aic_cores=16)
    generated = _tiling("first", "float16", plat)
    assert not generated.enableKernelSplit and not generated.useBasicBlock  # still the base template, as the host
    assert validate(generated).ok


def _small_problem(dtype=np.float16):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 16, 2, 2, 2)).astype(dtype)
    dy = rng.standard_normal((1, 16, 3, 5, 5)).astype(dtype)
    return (1, 16, 4, 8, 8), w, dy


def test_an_override_setting_the_flag_is_refused_before_launch():
    dx_shape, w, dy = _small_problem()
    issued = []
    with pytest.raises(TilingValidationError, match="enableKernelSplit=1: the A2 Conv3DBackpropInputV2 entry"):
        conv3d_backprop_input_v2_run(dx_shape, w, dy, strides=(1, 1, 2, 2, 2), pads=(1,) * 6, data_format="NCDHW",
                                     route="v2", tiling_overrides={"enableKernelSplit": True},
                                     hooks=[lambda core, rec: issued.append(rec)])
    assert not issued


def test_the_kernel_entry_refuses_the_flag_instead_of_returning():
    dx_shape, w, dy = _small_problem()
    plan = plan_conv3d_dx(dx_shape, w.shape, dy.shape, "float16", strides=(1, 1, 2, 2, 2), pads=(1,) * 6,
                          data_format="NCDHW", route="v2")
    bad = plan.tiling.with_overrides(enableKernelSplit=True, validate=False)
    chip = Chip("Ascend910B2")
    y = chip.gm.alloc("y", 1 * 4 * 1 * 8 * 8 * 16 * 2)
    with pytest.raises(ValueError, match=r"tiling key \d+ sets enableKernelSplit.*would leave dx unwritten"):
        chip.launch(kernel_entry, bad.params.coreNum, None, GmAddr(chip.gm.upload("filter", filter_to_fractal_z_3d(w))),
                    GmAddr(chip.gm.upload("dy", np.zeros(1 * 3 * 1 * 5 * 5 * 16, np.float16))), GmAddr(y), None, bad,
                    tiling_key=bad.tiling_key, dtype=DTYPES["float16"])


class _Enough(Exception):
    """Stops a launch after a number of tiles (raised from a hook)."""


def _first_tiles_of_one_core(shape: str, dtype: str, platform: str, core: int, tiles: int):
    """Run core `core` of the operator's plan for the real hard-wired shape until it has written `tiles` tiles.

    Only that core runs (the others return at once; with initOutputFlag 0 no core waits for another). Its first
    tiles lie in its first dx plane d0, so GM y is that plane only: GM_ADDR y points d0 planes before the
    allocation, and any write outside the plane faults as OutOfBounds. The plane starts as NaN, and dy is random
    on the dy planes t0..t1-1 that plane d0 reads (zero elsewhere). Returns (plane as (Cin, Hi, Wi) float64, d0,
    rows of the core, t0, those dy planes as NCDHW float64, weight float64, the plan)."""
    plan = _plan(shape, dtype, platform)
    assert not plan.tiling.enableKernelSplit
    t, p = plan.tiling.conv3DDxTiling, plan.tiling.params
    assert p.kDim == p.nDim == p.batchDim == p.groupDim == 1
    dt = DTYPES[dtype]
    c0 = 32 // dt.itemsize
    (n, cout, do, ho, wo), w_shape, (_, cin, _, hi, wi) = SHAPES[(shape, dt.itemsize)]
    cout1, cin1 = -(-cout // c0), -(-cin // c0)
    m_idx, d_idx = core % p.mDim, core // p.mDim % p.dDim  # Conv3dDx::CalSingleCoreShape with kDim = nDim = 1
    d0 = d_idx * t.singleCoreDin
    rows = range(m_idx * t.singleCoreM // wi, min(hi, (m_idx + 1) * t.singleCoreM // wi))
    rng = np.random.default_rng(1)
    w = rng.standard_normal(w_shape).astype(dt)
    count = [0]

    def stop(core_, rec):
        if rec.spec.name == "Fixpipe":
            count[0] += 1
            if count[0] == tiles:
                raise _Enough

    chip = Chip(platform, hooks=[stop])
    dy_gm = chip.gm.alloc("out_backprop", n * do * cout1 * ho * wo * c0 * dt.itemsize)  # zero pages until written
    dy5 = dy_gm.data.view(dt).reshape(n, do, cout1, ho, wo, c0)
    t0, t1 = _dy_planes_of(d0, do)
    dy5[:, t0:t1] = rng.standard_normal((n, t1 - t0, cout1, ho, wo, c0)).astype(dt)
    plane = cin1 * hi * wi * c0
    y_gm = chip.gm.alloc("y", plane * dt.itemsize)
    y5 = y_gm.data.view(dt).reshape(cin1, hi, wi, c0)
    y5[...] = np.nan

    def only_this_core(*args, **kwargs):
        if GetBlockIdx() == core:
            kernel_entry(*args, **kwargs)

    with pytest.raises(_Enough):
        chip.launch(only_this_core, p.coreNum, None, GmAddr(chip.gm.upload("filter", filter_to_fractal_z_3d(w))),
                    GmAddr(dy_gm), GmAddr(y_gm, -d0 * plane * dt.itemsize), None, plan.tiling,
                    tiling_key=plan.tiling.tiling_key, dtype=dt)
    got = y5.astype(np.float64).transpose(0, 3, 1, 2).reshape(cin1 * c0, hi, wi)[:cin]
    dy64 = dy5[:, t0:t1].astype(np.float64).transpose(0, 2, 5, 1, 3, 4).reshape(n, cout1 * c0, t1 - t0, ho, wo)
    return got, d0, rows, t0, dy64[:, :cout], w.astype(np.float64), plan


def _dy_planes_of(d: int, do: int) -> tuple[int, int]:
    """[t0, t1): the dy planes t with 2t + kd - 3 = d for some kd in [0, 4) (stride 2, pad 3, kernel 4)."""
    return -(-d // 2), min(do, (d + 3) // 2 + 1)


def _torch_dx_rows(dy, t0, w, d, rows, wi):
    """dx[:, d, rows, :] (float64) for stride 2, pad 3, kernel 4 from dy planes [t0, t0 + len) (all that reach
    plane d): a transposed convolution of the dy window reaching those rows (no padding; output index p = 2t + k
    is dx index p - 3), cropped."""
    ho = dy.shape[3]
    r0, r1 = -(-rows[0] // 2), min(ho, (rows[-1] + 3) // 2 + 1)
    window = torch.from_numpy(np.ascontiguousarray(dy[:, :, :, r0:r1]))
    out = torch.nn.functional.conv_transpose3d(window, torch.from_numpy(w), stride=2).numpy()[0]
    return out[:, d + 3 - 2 * t0, rows[0] + 3 - 2 * r0:rows[-1] + 4 - 2 * r0, 3:3 + wi]


@pytest.mark.parametrize("shape,dtype,platform,core,tiles", [
    ("first", "bfloat16", "Ascend910B3", 9, 8),  # mDim 4 x dDim 5: core 9 = rows 32-63 of planes 48-71
    ("second", "float32", "Ascend910B2", 13, 4),  # dDim 24: core 13 = planes 130-139, all 256 rows
])
def test_real_shape_first_tiles_of_one_core_match_torch(shape, dtype, platform, core, tiles):
    got, d0, rows, t0, dy, w, plan = _first_tiles_of_one_core(shape, dtype, platform, core, tiles)
    t = plan.tiling.conv3DDxTiling
    written = ~np.isnan(got)
    hs = np.flatnonzero(written.any(axis=(0, 2)))
    assert hs.size and hs[0] >= rows[0] and hs[-1] <= rows[-1], "wrote outside the core's rows"
    assert written.sum() == tiles * t.baseM * min(t.baseN, got.shape[0])  # every written tile is whole
    ref = _torch_dx_rows(dy, t0, w, d0, range(hs[0], hs[-1] + 1), got.shape[2])
    part, mask = got[:, hs[0]:hs[-1] + 1], written[:, hs[0]:hs[-1] + 1]
    rtol = {"bfloat16": 8e-3, "float32": 1e-5}[dtype]
    scale = math.sqrt(dy.shape[1] * 64) * np.sqrt(np.mean(w ** 2))  # dy ~ N(0, 1) where it is not zero
    err = np.abs(part - ref)[mask] - rtol * (np.abs(ref[mask]) + scale)
    assert (err <= 0).all(), f"{int((err > 0).sum())} of {mask.sum()} elements differ"
    assert np.abs(ref[mask]).max() > 1  # the check compares real values, not zeros
