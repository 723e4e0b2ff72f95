"""Property tests of the dw tiling generator over the legal envelope: it always answers, and the answer validates,
describes the problem it was asked for and round-trips through its blob."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import tiling
from ascend_sim.machine.platform import get_platform
from tiling.conv3d_backprop_filter import Conv3DBackpropFilterV2TilingData

A2 = ["Ascend910B2", "Ascend910B3", "Ascend910B4"]
HYPOTHETICAL = [  # other buffer sizes: the real basic-block template assumes A2's, the fallback does not
    get_platform("Ascend910B2").with_overrides(name="hypo_small", aic_cores=8, L1=256 * 1024, L0A=32 * 1024,
                                               L0B=32 * 1024, L0C=64 * 1024),
    get_platform("Ascend910B3").with_overrides(name="hypo_big", aic_cores=40, L1=1024 * 1024, L0C=256 * 1024),
]
PROPERTY = settings(max_examples=int(os.environ.get("TILING_EXAMPLES", 40)), deadline=None,
                    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


def _out(size: int, k: int, dil: int, stride: int, before: int, after: int) -> int:
    return (size + before + after - dil * (k - 1) - 1) // stride + 1


@st.composite
def problems(draw):
    """dtypes, groups, batch > 1, stride above the kernel, dilation, asymmetric pads, deterministic mode."""
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32"]))
    groups = draw(st.sampled_from([1, 1, 2, 3, 4]))
    cin_g, cout_g = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    n = draw(st.integers(1, 3))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    dilations = tuple(draw(st.integers(1, 2)) for _ in range(3))
    pads = tuple(draw(st.integers(0, 3)) for _ in range(6))
    spatial = (draw(st.integers(1, 8)), draw(st.integers(1, 24)), draw(st.integers(1, 40)))
    out = tuple(_out(spatial[i], kernel[i], dilations[i], strides[i], pads[2 * i], pads[2 * i + 1])
                for i in range(3))
    if min(out) < 1:
        reject()
    deterministic = draw(st.booleans())
    # deterministic runs have only the real basic-block template, which assumes A2's buffer sizes
    platform = draw(st.sampled_from(A2 if deterministic else A2 + HYPOTHETICAL))
    return dict(x_shape=(n, cin_g * groups, *spatial), filter_shape=(cout_g * groups, cin_g, *kernel),
                dy_shape=(n, cout_g * groups, *out), strides=strides, pads=pads, dilations=dilations, groups=groups,
                dtype=dtype, platform=platform, enable_hf32=dtype == "float32" and draw(st.booleans()),
                deterministic=deterministic)


@PROPERTY
@given(problems())
def test_generated_tiling_validates_and_describes_the_problem(problem):
    result = tiling.conv3d_backprop_filter_tiling(**problem)
    assert tiling.validate_dw(result).ok, str(tiling.validate_dw(result))
    f = result.fields()
    n, cin, di, hi, wi = problem["x_shape"]
    _, cout, dout, ho, wo = problem["dy_shape"]
    assert (f["batch"], f["cin"], f["cout"], f["di"], f["hi"], f["wi"], f["dout"], f["ho"], f["wo"]) == (
        n, cin, cout, di, hi, wi, dout, ho, wo)
    assert (f["dk"], f["hk"], f["wk"]) == problem["filter_shape"][2:]
    assert (f["strideD"], f["strideH"], f["strideW"]) == problem["strides"]
    assert (f["padFront"], f["padBack"], f["padUp"], f["padDown"], f["padLeft"], f["padRight"]) == problem["pads"]
    assert f["hf32Flag"] == int(problem["enable_hf32"])
    plat = get_platform(problem["platform"])
    assert 1 <= result.block_dim <= plat.aic_cores
    if problem["deterministic"]:
        assert result.tiling_key == 4  # deterministic runs bind M and N with stream-K
    again = Conv3DBackpropFilterV2TilingData.from_bytes(result.to_bytes(), tiling_key=result.tiling_key)
    assert again.fields() == f


@st.composite
def wide_problems(draw):
    """Large channels, kernels, strides and feature maps up to 6000 wide; not deterministic."""
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32"]))
    groups = draw(st.sampled_from([1, 2, 3, 4, 8]))
    cin_g, cout_g = draw(st.integers(1, 1000)), draw(st.integers(1, 1400))
    kernel = (draw(st.integers(1, 20)), draw(st.integers(1, 30)), draw(st.integers(1, 60)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 63)), draw(st.integers(1, 63)))
    dilations = tuple(draw(st.integers(1, 3)) for _ in range(3))
    pads = tuple(draw(st.integers(0, 3)) for _ in range(6))
    spatial = (draw(st.integers(1, 30)), draw(st.integers(1, 600)), draw(st.integers(1, 6000)))
    out = tuple(_out(spatial[i], kernel[i], dilations[i], strides[i], pads[2 * i], pads[2 * i + 1])
                for i in range(3))
    if min(out) < 1:
        reject()
    n = draw(st.integers(1, 3))
    return dict(x_shape=(n, cin_g * groups, *spatial), filter_shape=(cout_g * groups, cin_g, *kernel),
                dy_shape=(n, cout_g * groups, *out), strides=strides, pads=pads, dilations=dilations, groups=groups,
                dtype=dtype, platform=draw(st.sampled_from(A2)))


@PROPERTY
@given(wide_problems())
def test_wide_problems_tile_or_are_refused_for_their_width(problem):
    try:
        result = tiling.conv3d_backprop_filter_tiling(**problem)
    except ValueError as err:
        assert "x_shape[4] (W)" in str(err) and "too wide for L1" in str(err), str(err)
        return
    assert tiling.validate_dw(result).ok, str(tiling.validate_dw(result))
