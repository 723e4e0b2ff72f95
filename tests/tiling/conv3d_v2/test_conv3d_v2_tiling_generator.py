"""conv3d_v2_tiling, the operator-level port: argument refusals, the assembled tiling (run info, per-core API tiling,
tiling key, blob), and the UT's single-core shapes run through the whole engine."""
import json
import random

import pytest
from paths import DATA_DIR

from ascend_sim.machine.platform import get_platform
from tiling.conv3d_v2 import Conv3DV2TilingData, conv3d_v2_tiling

DATA = json.loads((DATA_DIR / "conv3d_v2_tiling_vectors_a2.json").read_text())


@pytest.mark.parametrize("kwargs,message", [
    ({"x_shape": (1, 16, 8, 16)}, r"x_shape=.* must have 5 values"),
    ({"x_shape": (1, 0, 8, 16, 16)}, r"x_shape\[1\] \(Cin\)=0 is outside the allowed range \[1, 2147483647\]"),
    ({"strides": (1, 64, 1)}, r"stride_h=64 \(strides\[1\]\) is outside the allowed range \[1, 63\]"),
    ({"dilations": (1, 1, 256)}, r"dilation_w=256 \(dilations\[2\]\) is outside the allowed range \[1, 255\]"),
    ({"pads": (0, 0, 256, 0, 0, 0)}, r"pad_top=256 \(pads\[2\]\) is outside the allowed range \[0, 255\]"),
    ({"pads": (0, 0, 0, 0, -1, 0)}, r"pad_left=-1 \(pads\[4\]\) is outside the allowed range \[0, 255\]"),
    ({"groups": 3}, r"groups=3 must divide both Cin=16 and Cout=16"),
    ({"filter_shape": (16, 8, 1, 1, 1)}, r"filter_shape\[1\] \(Cin/groups\)=8 must equal Cin/groups = 16/1"),
    ({"filter_shape": (16, 16, 1, 17, 1)}, r"dilated kernel H \(17\) is larger than the padded input H \(16\)"),
    ({"filter_shape": (16, 16, 1, 512, 1), "x_shape": (1, 16, 8, 600, 16)}, r"kH\)=512 is outside .*\[1, 511\]"),
    ({"dtype": "int8"}, r"dtype='int8' is not supported"),
    ({"enable_hf32": True}, r"HF32 applies to float32 only"),
    ({"pointwise": True, "filter_shape": (16, 16, 3, 3, 3), "pads": (1,) * 6}, r"pointwise=True needs a 1x1x1"),
    ({"platform": "Ascend999"}, r"platform='Ascend999' is not a known preset"),
])
def test_bad_arguments_are_refused_by_name(kwargs, message):
    args = {"x_shape": (1, 16, 8, 16, 16), "filter_shape": (16, 16, 1, 1, 1)} | kwargs
    with pytest.raises(ValueError, match=message):
        conv3d_v2_tiling(**args)


def test_wrong_types():
    with pytest.raises(TypeError, match="bias=1 must be a bool"):
        conv3d_v2_tiling((1, 16, 8, 16, 16), (16, 16, 1, 1, 1), bias=1)
    with pytest.raises(TypeError, match=r"groups=1.5 must be an integer"):
        conv3d_v2_tiling((1, 16, 8, 16, 16), (16, 16, 1, 1, 1), groups=1.5)


def test_a_whole_tiling():
    t = conv3d_v2_tiling((2, 64, 16, 56, 56), (128, 64, 3, 3, 3), pads=(1,) * 6, bias=True, platform="Ascend910B2")
    run, api = t.convRunInfo, t.convApiTiling
    assert (run.batch, run.cin, run.din, run.hin, run.win, run.cout, run.dout, run.hout, run.wout) == \
        (2, 64, 16, 56, 56, 128, 16, 56, 56)
    assert run.hasBias == 1 and api.hasBias == 0  # SetFinalTiling never writes the api struct's hasBias
    assert t.block_dim <= 24
    # The per-core share the engine handed to the API tiling.
    assert api.singleCoreDo == -(-16 // run.doDim) and api.singleCoreM == -(-56 * 56 // run.mDim)
    assert api.orgCi == 64 and api.orgCo == 128 and api.kernelD == api.kernelH == api.kernelW == 3
    assert api.kL0 % 16 == 0 and api.mL0 % 16 == 0 and api.nL0 % 16 == 0
    assert t.tiling_key == t.key_from_fields()
    assert Conv3DV2TilingData.from_bytes(t.to_bytes()).convApiTiling == api
    assert t.notes and "l2Rate" in t.notes[0]


def test_pointwise_path():
    t = conv3d_v2_tiling((1, 240, 32, 4, 32), (240, 240, 1, 1, 1), pointwise=True, bias=True)
    api = t.convApiTiling
    assert api.kernelD == api.kernelH == api.kernelW == 1 and api.bl1BypassFlag == 0
    assert api.kL0 % 16 == 0 and api.mL0 % 16 == 0 and api.nL0 % 16 == 0


def test_hw_mode_is_chosen_when_m_mode_does_not_fit():
    # InitOutputOrder: M mode's smallest fmap load, 15 input rows of 448 (a 14-row kernel), does not fit a 128 KiB
    # L1; one output row's (14 rows x 29 columns) does. The tiling key carries OutputOrder in bit 4.
    small = get_platform("Ascend910B2").with_overrides(L1=131072)
    t = conv3d_v2_tiling((1, 3, 1, 448, 448), (1664, 3, 1, 14, 14), platform=small)
    assert t.convApiTiling.outputOrder == 1 and t.tiling_key >> 4 == 1
    assert t.convApiTiling.singleCoreM == -(-435 // t.convRunInfo.mDim)  # HW mode: singleCoreM holds the rows
    big = conv3d_v2_tiling((1, 3, 1, 448, 448), (1664, 3, 1, 14, 14))
    assert big.convApiTiling.outputOrder == 0


M_OK = [v for v in DATA["vectors"] if v["kind"] == "api_single_core" and v["output_order"] == "M"
        and v["formats"]["fmap"] == "NDC1HWC0" and v["expect"]["ret"] == 0]


def test_ut_shapes_through_the_engine():
    """Each M-mode UT shape as a batch-1 operator problem (the UT's whole-problem single core, now split by
    ComputeNumBlocks): every one must tile, on 24 cores, with the per-core API tiling's TestTilingResult
    properties. The real tests do not run these through the engine, so this is a consistency check of the port."""
    assert len(M_OK) == 193
    for v in M_OK:
        ci, di, hi, wi = v["fmap_CiDiHiWi"]
        co, kd, kh, kw = v["weight_CoKdKhKw"]
        t = conv3d_v2_tiling((1, ci, di, hi, wi), (co, ci, kd, kh, kw), strides=v["strides_DHW"],
                             pads=v["pads"], dilations=v["dilations_DHW"], bias=v["has_bias"])
        api = t.convApiTiling
        assert api.kAL1 and api.mAL1 and api.mL0 % 16 == 0 and api.kL0 % 16 == 0 and api.nL0 % 16 == 0, v["test"]
        assert t.block_dim <= 24, v["test"]
        assert api.outputOrder == 0, v["test"]  # each stays in M mode at batch 1 on 512 KiB of L1


def _random_problems(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        ci, co = rng.choice([1, 3, 16, 17, 64, 96, 256, 512]), rng.choice([1, 8, 16, 33, 128, 640, 1024])
        groups = rng.choice([1, 1, 2, 4])
        if ci % groups or co % groups:
            groups = 1
        kd, kh, kw = rng.choice([1, 2, 3]), rng.choice([1, 3, 5, 7]), rng.choice([1, 3, 5, 11])
        yield {"x_shape": (rng.choice([1, 2, 16]), ci, rng.randint(kd, 24), rng.randint(kh, 300), rng.randint(kw, 300)),
               "filter_shape": (co, ci // groups, kd, kh, kw), "groups": groups,
               "strides": (rng.choice([1, 2]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4])),
               "pads": tuple(rng.choice([0, 1]) for _ in range(6)), "dilations": (1, rng.choice([1, 2]), 1),
               "dtype": rng.choice(["float16", "bfloat16", "float32"]), "bias": rng.random() < 0.5,
               "platform": rng.choice(["Ascend910B2", "Ascend910B3"])}


def test_random_problems_fit_their_buffers():
    """300 random problems: each tiles, uses at most the chip's cores, and its L0 blocks with the double buffers
    pBufferFlag declares (bits AL0, BL0, CL0) fit L0A, L0B and L0C (the kernel allocates exactly these)."""
    for problem in _random_problems(300, seed=7):
        t = conv3d_v2_tiling(**problem)
        api, plat, size = t.convApiTiling, t.platform, {"float16": 2, "bfloat16": 2, "float32": 4}[t.dtype]
        db = [1 + (api.pBufferFlag >> bit & 1) for bit in range(3)]
        assert t.block_dim <= plat.aic_cores, problem
        assert api.mL0 * api.kL0 * db[0] * size <= plat.L0A, problem
        assert api.nL0 * api.kL0 * db[1] * size <= plat.L0B, problem
        assert api.mL0 * api.nL0 * db[2] * 4 <= plat.L0C, problem


def test_the_docs_example():
    """The numbers docs/conv3d_v2_tiling.md quotes."""
    t = conv3d_v2_tiling(x_shape=(2, 64, 16, 56, 56), filter_shape=(128, 64, 3, 3, 3), strides=(1, 1, 1),
                         pads=(1, 1, 1, 1, 1, 1), dilations=(1, 1, 1), groups=1, dtype="bfloat16",
                         platform="Ascend910B2", bias=True)
    assert (t.convRunInfo.batchDim, t.convRunInfo.doDim) == (2, 12)
    assert (t.convApiTiling.mL0, t.convApiTiling.kL0, t.convApiTiling.nL0) == (256, 48, 128)
    assert t.tiling_key == 3 and len(t.to_bytes()) == 608


def test_l2_rate_is_the_ini_rate_not_the_calibrated_gm_rate():
    # GetCoreMemBw(L2) is host-side platform data (Platform.l2_read_rate); calibrating the simulator's GM read rate
    # must not change a tiling. The shape is one whose core split depends on l2Rate.
    shape = dict(x_shape=(2, 256, 1, 14, 14), filter_shape=(512, 256, 1, 3, 3))
    a2 = get_platform("Ascend910B2")
    default = conv3d_v2_tiling(**shape, platform=a2).to_bytes()
    assert conv3d_v2_tiling(**shape, platform=a2.with_overrides(rates={"gm_to_l1": 2})).to_bytes() == default
    assert conv3d_v2_tiling(**shape, platform=a2.with_overrides(l2_read_rate=2)).to_bytes() != default
