"""The Conv3DV2 forward operator against torch.nn.functional.conv3d in float64 (the oracle), grouped and depthwise
convolutions, its refusals before launch, its tiling validator, and its timing-only mode.

The oracle sees the same rounded inputs; the tolerance is the output dtype's rounding of the exact value plus the
fp32 accumulation's bound over the K terms (and HF32's operand rounding where enabled), relative to the sum of
|x * w| that formed each output."""
import math

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import conv3d_v2, conv3d_v2_run
from kernels.conv3d_v2.operator import plan_conv3d_v2_run
from tiling import TilingValidationError

BF16 = np.dtype(ml_dtypes.bfloat16)
OUT_EPS = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}


def _oracle(x, w, b, strides, pads, dilations, groups):
    """(y, sum |x*w|) in float64, NCDHW."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads[0:2], pads[2:4], pads[4:6]))
    conv = lambda a, k: F.conv3d(torch.tensor(a), torch.tensor(k), stride=strides, dilation=dilations,  # noqa: E731
                                 groups=groups).numpy()
    y = conv(xp, w.astype(np.float64))
    if b is not None:
        y += b.astype(np.float64).reshape(1, -1, 1, 1, 1)
    return y, conv(np.abs(xp), np.abs(w.astype(np.float64)))


def _check(got, x, w, b, strides, pads, dilations=(1, 1, 1), groups=1, hf32=False):
    y, mag = _oracle(x, w, b, strides, pads, dilations, groups)
    k = w.shape[1] * w.shape[2] * w.shape[3] * w.shape[4]
    tol = OUT_EPS[x.dtype.name] * np.abs(y) + (k + 2) * 2.0 ** -24 * mag + 1e-30
    if hf32:
        tol += 2.0 ** -10 * mag  # each operand rounded to 11 mantissa bits
    assert got.shape == y.shape
    assert not np.isnan(got.astype(np.float64)).any(), "an output element was never written"
    err = np.abs(got.astype(np.float64) - y)
    assert (err <= tol).all(), f"max error {err.max()} at {np.unravel_index(np.argmax(err - tol), err.shape)}"


def _operands(x_shape, w_shape, dtype, bias=True, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype) if bias else None
    return x, w, b


CASES = {  # x shape, filter shape, strides, pads, dilations, dtype, bias
    "fp16 bias asymmetric pads": ((1, 5, 4, 6, 7), (7, 5, 2, 3, 3), (1, 1, 1), (1, 0, 1, 2, 0, 1), (1, 1, 1),
                                  np.float16, True),
    "fp32 batch 2 no bias": ((2, 5, 4, 6, 7), (7, 5, 2, 3, 3), (1, 1, 1), (0,) * 6, (1, 1, 1), np.float32, False),
    "bf16 strides dilation": ((2, 20, 5, 9, 10), (33, 20, 3, 3, 2), (2, 2, 3), (1, 1, 2, 0, 1, 1), (1, 2, 1), BF16,
                              True),
    "fp32 L0 ping-pong": ((1, 16, 4, 12, 12), (32, 16, 3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), np.float32, True),
    "stride > kernel 1x1x1": ((1, 3, 3, 5, 5), (4, 3, 1, 1, 1), (3, 3, 3), (0,) * 6, (1, 1, 1), np.float16, True),
    "1x1x1 Cout 200 (the pointwise kernel; NDHWC data: key 2 in test_conv3d_v2_pointwise.py)": (
        (1, 3, 4, 7, 9), (200, 3, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), np.float16, True),
    "tiny": ((1, 1, 1, 1, 1), (1, 1, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), np.float16, True),
    "depth pads, dilation D": ((1, 17, 6, 5, 5), (18, 17, 3, 2, 2), (2, 1, 1), (2, 3, 0, 1, 1, 0), (2, 1, 1),
                               np.float16, True),
}


GROUP_CASES = {  # x shape, filter shape, groups, pads, dtype; (what the tiling makes of it)
    "2 groups in one fold": ((1, 8, 3, 5, 5), (8, 4, 2, 2, 2), 2, (0,) * 6, np.float16),
    "depthwise, 6 folds over 6 cores": ((1, 96, 4, 8, 8), (96, 1, 3, 3, 3), 96, (1,) * 6, np.float16),
    "depthwise fp32": ((1, 48, 3, 6, 6), (48, 1, 3, 3, 3), 48, (1,) * 6, np.float32),
    "fp32, unaligned fold": ((1, 12, 3, 6, 6), (18, 4, 3, 3, 3), 3, (1,) * 6, np.float32),
    "last fold partly empty (specialGroupDimTail)": ((1, 36, 3, 6, 6), (54, 4, 1, 3, 3), 9, (0,) * 6, np.float16),
    "weight through L1, batch 2": ((2, 36, 4, 6, 6), (54, 4, 3, 3, 3), 9, (1,) * 6, BF16),
}


@pytest.mark.parametrize("case", list(GROUP_CASES))
def test_groups_match_torch(case):
    x_shape, w_shape, groups, pads, dtype = GROUP_CASES[case]
    x, w, b = _operands(x_shape, w_shape, dtype)
    run = conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=pads, groups=groups)
    assert run.tiling.tiling_key & 0b1000  # GroupConvType GroupConv_Weight_Gfz: KernelConv3DV2WithGroups ran
    _check(run.result, x, w, b, (1, 1, 1), pads, groups=groups)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
@pytest.mark.parametrize("engine", ["exact", "fast"])
def test_grouped_cout_tail_in_the_first_block(dtype, engine):
    # issue 22: a core whose only nBL1 block is the group-opt Cout tail (12 of 48 couts) computed its first block
    # nL0 wide, because UpdateL1TailLoop ran after IterateK (asc-devkit's order, not ops-nn's); batch 2 put that
    # core's extra channels past the end of y (CrossCoreRace / OutOfBounds)
    x, w, b = _operands((2, 20, 6, 9, 4), (60, 4, 1, 1, 1), dtype, bias=False)
    run = conv3d_v2_run(x, w, None, strides=(1, 1, 1, 2, 1), pads=(0,) * 6, groups=5, engine=engine)
    assert run.tiling.tiling_key & 0b1000
    _check(run.result, x, w, None, (1, 2, 1), (0,) * 6, groups=5)


@pytest.mark.parametrize("platform", ["AtlasA3", "Ascend910B4"])
def test_grouped_cout_tail_in_the_first_block_ndhwc_other_presets(platform):
    x, w, _ = _operands((2, 20, 6, 9, 4), (60, 4, 1, 1, 1), np.float16, bias=False)
    run = conv3d_v2_run(np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1)), w, None, strides=(1, 1, 2, 1, 1),
                        pads=(0,) * 6, groups=5, data_format="NDHWC", platform=platform)
    _check(run.result.transpose(0, 4, 1, 2, 3), x, w, None, (1, 2, 1), (0,) * 6, groups=5)


@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(case):
    x_shape, w_shape, strides, pads, dilations, dtype, bias = CASES[case]
    x, w, b = _operands(x_shape, w_shape, dtype, bias)
    y = conv3d_v2(x, w, b, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dilations))
    assert y.dtype == x.dtype
    _check(y, x, w, b, strides, pads, dilations)


@pytest.mark.parametrize("case", list(CASES) + [f"groups: {name}" for name in GROUP_CASES])
def test_cases_in_replay_verify_mode(case, monkeypatch):
    """Every replayed L0C block (Conv3D.IterateK, kernel/replay_keys.py) is also run for real and compared record
    by record (ascend_sim/engine/replay.py); a difference raises ReplayMismatch."""
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    if case.startswith("groups: "):
        x_shape, w_shape, groups, pads, dtype = GROUP_CASES[case[len("groups: "):]]
        strides = dilations = (1, 1, 1)
    else:
        x_shape, w_shape, strides, pads, dilations, dtype, _ = CASES[case]
        groups = 1
    x, w, b = _operands(x_shape, w_shape, dtype, True)
    y = conv3d_v2(x, w, b, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dilations), groups=groups)
    _check(y, x, w, b, strides, pads, dilations, groups)


def test_hf32_within_its_tolerance_and_not_plain_fp32():
    x, w, b = _operands((1, 16, 3, 8, 8), (16, 16, 3, 3, 3), np.float32)
    run = conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(1,) * 6, enable_hf32=True)
    _check(run.result, x, w, b, (1, 1, 1), (1,) * 6, hf32=True)
    plain = conv3d_v2(x, w, b, strides=(1,) * 5, pads=(1,) * 6)
    assert not np.array_equal(run.result, plain)  # the operands really were rounded


def test_ndhwc_data_and_dhwcn_filter():
    x, w, b = _operands((2, 6, 4, 5, 7), (9, 6, 2, 3, 1), np.float16)
    y = conv3d_v2(np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1)), np.ascontiguousarray(w.transpose(2, 3, 4, 1, 0)),
                  b, strides=(1, 1, 2, 1, 1), pads=(0, 1, 1, 1, 0, 0), data_format="NDHWC", filter_format="DHWCN")
    _check(y.transpose(0, 4, 1, 2, 3), x, w, b, (1, 2, 1), (0, 1, 1, 1, 0, 0))


@pytest.mark.parametrize("overrides", [{"biasFullLoadFlag": 0}, {"iterateMNOrder": 1}, {"pBufferFlag": 4 | 1},
                                       {"pBufferFlag": 4 | 2}, {"pBufferFlag": 4 | 3}, {"pBufferFlag": 0}],
                         ids=["bias per block", "N first", "L0A ping-pong", "L0B ping-pong", "L0A and L0B ping-pong",
                              "no L0C double buffer"])
def test_tiling_variants_give_the_same_result(overrides):
    x, w, b = _operands((1, 5, 4, 6, 7), (40, 5, 2, 3, 3), np.float16)
    kwargs = dict(strides=(1,) * 5, pads=(1, 0, 1, 2, 0, 1))
    base = conv3d_v2_run(x, w, b, **kwargs)
    # one core along N: each core walks three nL0 = 16 blocks of Cout (the generated tiling splits N over 3 cores)
    run = conv3d_v2_run(x, w, b, tiling_overrides={"nDim": 1, "singleCoreCo": 40, **overrides}, **kwargs)
    assert (base.tiling.convApiTiling.nL0, base.tiling.convRunInfo.nDim, run.tiling.block_dim) == (16, 3, 8)
    assert base.tiling.tiling_key == 4  # ALL_CLOSE with BL1 bypass; the pBufferFlag overrides give keys 5, 6, 7
    assert run.tiling.tiling_key == 4 + (overrides.get("pBufferFlag", 0) & 3)
    assert run.result.tobytes() == base.result.tobytes()
    _check(run.result, x, w, b, (1, 1, 1), (1, 0, 1, 2, 0, 1))


PRELOAD = {"kAL1": 288, "kAL1Tail": 288, "cin1InAL1": 2, "kL0": 144}  # two AL1 blocks of K, two L0 steps each
PRELOAD_CASES = {  # the tiling overrides on top of PRELOAD, and the ReduceK variant they select
    "AL1 double-buffered": ({"pBufferFlag": 4 | 8}, "ReduceKPreloadDbInput"),
    "AL1 and BL1 double-buffered": ({"pBufferFlag": 4 | 8 | 16, "bl1BypassFlag": 0, "kBL1": 288, "kBL1Tail": 288,
                                     "nBL1": 32, "nL0": 32, "nBL1DivnL0": 1, "nL0xk0": 512, "nDim": 1,
                                     "singleCoreCo": 32}, "ReduceKPreloadDbAll"),
}


@pytest.mark.parametrize("case", list(PRELOAD_CASES))
def test_l1_preload_gives_the_same_result(case, monkeypatch):
    from kernels.conv3d_v2.kernel.api import Conv3D

    overrides, variant = PRELOAD_CASES[case]
    calls = []
    original = getattr(Conv3D, variant)
    monkeypatch.setattr(Conv3D, variant, lambda self: calls.append(1) or original(self))
    x, w, b = _operands((1, 32, 3, 6, 10), (32, 32, 3, 3, 3), np.float16)
    kwargs = dict(strides=(1,) * 5, pads=(0, 0, 1, 1, 1, 1))
    run = conv3d_v2_run(x, w, b, tiling_overrides={**PRELOAD, **overrides}, **kwargs)
    preloads = len(calls)
    assert preloads  # the preloading K loop ran (races between the queues' buffers are checked on the way)
    # the same K steps without L1 double buffers take the plain ReduceK: the same bytes
    plain = conv3d_v2_run(x, w, b, tiling_overrides={**PRELOAD, **overrides,
                                                     "pBufferFlag": overrides["pBufferFlag"] & ~0x18}, **kwargs)
    assert len(calls) == preloads
    assert run.result.tobytes() == plain.result.tobytes()
    _check(run.result, x, w, b, (1, 1, 1), (0, 0, 1, 1, 1, 1))


def test_timing_only_mode_has_the_same_cycles():
    x, w, b = _operands((1, 5, 4, 6, 7), (7, 5, 2, 3, 3), np.float16)
    full = conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(1,) * 6)
    timing = conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(1,) * 6, execute=False)
    assert timing.result is None
    assert timing.cycles == full.cycles > 0
    assert any("TransData" in note for note in full.notes)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 2), cin=st.integers(1, 20), cout=st.integers(1, 20), d=st.integers(1, 4),
       h=st.integers(1, 7), w=st.integers(1, 7), k=st.tuples(*[st.integers(1, 3)] * 3),
       s=st.tuples(*[st.integers(1, 3)] * 3), dil=st.tuples(*[st.integers(1, 2)] * 3),
       p=st.tuples(*[st.integers(0, 2)] * 6), bias=st.booleans(), groups_on=st.booleans(),
       dtype=st.sampled_from([np.dtype(np.float16), BF16, np.dtype(np.float32)]))
def test_random_problems_match_torch(n, cin, cout, d, h, w, k, s, dil, p, bias, groups_on, dtype):
    for size, kk, dd, before, after in zip((d, h, w), k, dil, p[0::2], p[1::2]):
        if (kk - 1) * dd + 1 > size + before + after:
            return  # no output
    groups = math.gcd(cin, cout) if groups_on else 1
    x, wt, b = _operands((n, cin, d, h, w), (cout, cin // groups, *k), dtype, bias, seed=cin * 31 + cout)
    y = conv3d_v2(x, wt, b, strides=(1, 1, *s), pads=p, dilations=(1, 1, *dil), groups=groups)
    _check(y, x, wt, b, s, p, dil, groups)


# ------------------------------------------------------------------------------------------------ refusals
def _call(**changes):
    x, w, b = _operands((1, 4, 3, 5, 5), (8, 4, 2, 2, 2), np.float16)
    kwargs = dict(x=x, filter=w, bias=b, strides=(1,) * 5, pads=(0,) * 6)
    kwargs.update(changes)
    return conv3d_v2(kwargs.pop("x"), kwargs.pop("filter"), kwargs.pop("bias"), **kwargs)


@pytest.mark.parametrize("changes,match", [
    ({"strides": (2, 1, 1, 1, 1)}, r"strides=\(2, 1, 1, 1, 1\): the N and C entries"),
    ({"strides": (1, 1, 1, 64, 1)}, r"stride_h.*64.*63"),
    ({"pads": (0, 0, -1, 0, 0, 0)}, r"pads\[2\]"),
    ({"dilations": (1, 1, 1, 1, 256)}, r"dilation_w.*256"),
    ({"data_format": "NCHW"}, r"data_format='NCHW' is not supported"),
    ({"filter_format": "FRACTAL_Z_3D"}, r"filter_format='FRACTAL_Z_3D'"),
    ({"bias": np.zeros(3, np.float16)}, r"bias has 3 values"),
    ({"bias": np.zeros(8, np.float32)}, r"bias.dtype=float32 must equal x.dtype=float16"),
    ({"filter": np.zeros((8, 3, 2, 2, 2), np.float16)}, r"Cin/groups"),
    ({"x": np.zeros((1, 4, 3, 5, 5), np.int8)}, r"x.dtype=int8 is not supported"),
    ({"enable_hf32": True}, r"enable_hf32"),
    ({"groups": 3}, r"groups=3"),
    ({"platform": "Ascend310P"}, r"platform"),
    ({"platform": "Ascend950PR_9599"}, r"npu_arch 3510: the Conv3DV2 port is the arch22 kernel"),
])
def test_bad_arguments_are_refused_with_their_name(changes, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _call(**changes)


def test_grouped_hw_mode_is_refused_as_not_ported():
    x, w, b = _operands((1, 8, 3, 5, 5), (8, 4, 2, 2, 2), np.float16)
    with pytest.raises(ValueError, match="KernelConv3DV2WithGroups with OutputOrder HW_Mode, which is not ported"):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0,) * 6, groups=2,
                      tiling_overrides={"outputOrder": 1, "singleCoreM": 1, "mAL1": 16})


HW_CASES = {  # x, filter, strides, pads, dilations, dtype, L1 bytes of the platform (small: M mode does not fit)
    "bf16, strides, dilation, depth pads": ((2, 3, 4, 16, 64), (20, 3, 2, 5, 5), (2, 1, 2), (1, 1, 3, 1, 2, 2),
                                            (1, 2, 1), BF16, 12288),
    "fp32, W stride 3": ((1, 5, 3, 10, 60), (30, 5, 1, 7, 7), (1, 2, 3), (0, 0, 1, 1, 2, 2), (1, 1, 1), np.float32,
                         16384),
}


@pytest.mark.parametrize("case", list(HW_CASES))
def test_hw_mode_matches_torch(case):
    from ascend_sim.machine.platform import get_platform

    x_shape, w_shape, strides, pads, dilations, dtype, l1 = HW_CASES[case]
    x, w, b = _operands(x_shape, w_shape, dtype)
    small = get_platform("Ascend910B2").with_overrides(L1=l1)
    run = conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dilations), platform=small)
    assert run.tiling.convApiTiling.outputOrder == 1  # KernelConv3DV2HwMode ran
    _check(run.result, x, w, b, strides, pads, dilations)


@pytest.mark.parametrize("overrides,match", [({"mL0": 8}, r"mL0=8: must be a multiple of 16"),
                                             ({"kL0": 4096}, r"kL0=4096"),
                                             ({"mAL1DivmL0": 3}, r"mAL1DivmL0=3"),
                                             ({"doDim": 30}, r"more than the 24 cube cores"),
                                             ({"outputOrder": 1}, r"outputOrder=1: HW mode needs"),
                                             ({"bl1BypassFlag": 0, "nBL1": 16, "kBL1": 288, "nBL1DivnL0": 1, "nDim": 2},
                                              r"nBL1=16: a BL1 block of every cout"),
                                             # a random-override fuzz's finds: accepted, they faulted after launch
                                             ({"groupDim": 2}, r"groupDim=2: must be 1 without groups"),
                                             ({"nDim": 2}, r"nDim=2: each core's share of the 16 couts")])
def test_illegal_tiling_overrides_are_refused_before_launch(overrides, match):
    x, w, b = _operands((1, 5, 4, 6, 7), (7, 5, 2, 3, 3), np.float16)
    with pytest.raises(TilingValidationError, match=match):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0,) * 6, tiling_overrides=overrides)


@pytest.mark.parametrize("order", [2, 16, 255])
def test_an_iterate_order_other_than_m_or_n_first_is_refused(order):
    """The fuzzer's find: iterateMNOrder=16 passed the validator and the launch never ended (IterateImpl returns false
    only from its M-first and N-first branches, in asc-devkit as here). Planned only: before the rule a run hung."""
    x, w, b = _operands((2, 12, 4, 2, 3), (4, 12, 2, 2, 3), np.float16)
    with pytest.raises(TilingValidationError, match=rf"iterateMNOrder={order}: must be 0 \(M first\) or 1"):
        plan_conv3d_v2_run(x, w, b, strides=(1, 1, 2, 2, 1), pads=(1, 0, 0, 1, 0, 1),
                           tiling_overrides={"iterateMNOrder": order})


def test_an_al1_sized_below_a_cores_block_is_refused():
    """The fuzz's find: singleCoreM=1 (4 generated) passed the validator; InitBuffer sized AL1 for 1 pixel's rows
    while the core loaded its 4, over the bias buffer (a race fault after launch)."""
    x, w, b = _operands((2, 20, 4, 4, 1), (20, 20, 3, 1, 1), np.float32)
    with pytest.raises(TilingValidationError, match=r"singleCoreM=1: must be a core's share of the output pixels, "
                                                    r"ceil\(Ho\*Wo / mDim=1\) = 4"):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0, 1, 0, 0, 0, 0), tiling_overrides={"singleCoreM": 1})


def test_an_al1_block_that_l0_blocks_do_not_tile_is_refused():
    """The fuzz's find: mAL1=8 with mL0=16 passed the validator; each 8-pixel AL1 block computed and wrote a 16-pixel
    L0 block, over the next block's pixels (core 1's, a cross-core race after launch)."""
    x, w, b = _operands((1, 21, 2, 2, 5), (19, 21, 2, 1, 1), np.float16)
    with pytest.raises(TilingValidationError, match=r"mAL1=8: must be a multiple of mL0=16 when a core's"):
        conv3d_v2_run(x, w, b, strides=(1, 1, 2, 1, 1), pads=(1, 1, 0, 0, 0, 0), tiling_overrides={"mAL1": 8})


def test_an_m_share_other_than_single_core_m_is_refused():
    """The fuzz's find: mDim=4 (2 generated) kept singleCoreM for two cores' shares; core 0 computed past its share
    into core 1's pixels (a cross-core race after launch)."""
    x, w, b = _operands((1, 22, 3, 7, 9), (18, 22, 2, 3, 2), np.float16)
    with pytest.raises(TilingValidationError, match=r"singleCoreM=\d+: must be a core's share of the output pixels, "
                                                    r"ceil\(Ho\*Wo / mDim=4\)"):
        conv3d_v2_run(x, w, b, strides=(1, 1, 2, 1, 2), pads=(0, 1, 0, 0, 1, 0), tiling_overrides={"mDim": 4})


def test_a_depth_share_other_than_single_core_do_is_refused():
    """The fuzz's find: singleCoreDo=4 (1 generated, 3 cores along Do) made core 0 compute all depths, over the other
    cores' (a cross-core race after launch)."""
    x, w, b = _operands((2, 7, 3, 7, 3), (20, 7, 2, 3, 3), ml_dtypes.bfloat16)
    with pytest.raises(TilingValidationError, match=r"singleCoreDo=4: must be a core's share of the output depths"):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0, 1, 0, 2, 2, 0), tiling_overrides={"singleCoreDo": 4})


@pytest.mark.parametrize("couts", [32, 8])
def test_a_cout_share_other_than_the_core_split_is_refused(couts):
    """The fuzz's finds: singleCoreCo=32 (16 generated: 23 couts on 2 cores) read the bias past its 23 values;
    singleCoreCo=8 left outputs unwritten."""
    x, w, b = _operands((1, 11, 4, 4, 10), (23, 11, 3, 3, 3), np.float32)
    with pytest.raises(TilingValidationError, match=rf"singleCoreCo={couts}: must be a core's share of the couts"):
        conv3d_v2_run(x, w, b, strides=(1, 1, 2, 1, 1), pads=(0, 1, 0, 2, 2, 2),
                      tiling_overrides={"singleCoreCo": couts})


def test_the_bias_buffers_count_without_a_bias():
    """The API allocates the L1 bias queue (nL0 floats: DTYPE_BIAS defaults to float) with or without a bias; on a
    16 KiB L1 the generated tiling fills L1 to the byte without it, so the kernel would overflow: refused."""
    from ascend_sim.machine.platform import get_platform

    small = get_platform("Ascend910B2").with_overrides(L1=16384)
    x, w, _ = _operands((1, 40, 5, 8, 5), (16, 10, 1, 3, 3), np.float16, bias=False)
    with pytest.raises(TilingValidationError, match="the kernel needs 16448 bytes of L1, which has 16384"):
        conv3d_v2_run(x, w, None, strides=(1,) * 5, pads=(1, 2, 1, 1, 0, 0), dilations=(1, 1, 1, 2, 2), groups=4,
                      platform=small)


WEIGHT_L1 = {**PRELOAD, "bl1BypassFlag": 0, "kBL1": 288, "kBL1Tail": 288, "nBL1": 32, "nL0": 32, "nBL1DivnL0": 1,
             "nL0xk0": 512, "nDim": 1, "singleCoreCo": 32}


@pytest.mark.parametrize("l0_bits", [2, 3], ids=["key 2: L0B ping-pong", "key 3: L0A and L0B ping-pong"])
def test_l0_ping_pong_with_the_weight_through_l1_gives_the_same_bytes(l0_bits):
    weight_l1 = WEIGHT_L1
    x, w, b = _operands((1, 32, 3, 6, 10), (32, 32, 3, 3, 3), np.float16)
    kwargs = dict(strides=(1,) * 5, pads=(0, 0, 1, 1, 1, 1))
    plain = conv3d_v2_run(x, w, b, tiling_overrides={**weight_l1, "pBufferFlag": 4}, **kwargs)
    run = conv3d_v2_run(x, w, b, tiling_overrides={**weight_l1, "pBufferFlag": 4 | l0_bits}, **kwargs)
    assert (plain.tiling.tiling_key, run.tiling.tiling_key) == (0, l0_bits)
    assert run.result.tobytes() == plain.result.tobytes()
    _check(run.result, x, w, b, (1, 1, 1), (0, 0, 1, 1, 1, 1))


def test_l0a_ping_pong_alone_with_the_weight_through_l1_is_refused():
    """Key 1: the API's L0A_OPEN protocol waits on the alternating L0A events only ("BL1ByPass is always ON", its
    comment says): with the weight through L1 the single L0B is reloaded while the previous Mmad may read it. The
    race checker finds that race when the kernel runs (tried by hand); the validator refuses the tiling first."""
    x, w, b = _operands((1, 32, 3, 6, 10), (32, 32, 3, 3, 3), np.float16)
    with pytest.raises(TilingValidationError, match="L0A ping-pong alone with several K steps needs BL1 bypass"):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0, 0, 1, 1, 1, 1),
                      tiling_overrides={**WEIGHT_L1, "pBufferFlag": 4 | 1})


def test_l0b_ping_pong_alone_with_bypass_and_one_depth_per_core_is_refused():
    """Key 6: the API sets M -> MTE2 event 1 only when the core has more than one output depth, yet its second K step
    waits on it; run by hand, the simulator reports the deadlock. The validator refuses the tiling first."""
    x, w, b = _operands((1, 32, 3, 6, 10), (32, 32, 3, 3, 3), np.float16)
    with pytest.raises(TilingValidationError, match="L0B ping-pong alone with BL1 bypass.*deadlock"):
        conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0, 0, 1, 1, 1, 1),
                      tiling_overrides={**PRELOAD, "pBufferFlag": 4 | 2})
