"""The dw tiling generator against the real A2 host-tiling vectors in tests/data, field by field.

Three levels: (1) every field the open real code writes, and the tiling key, equal the vector's; (2) where the
real code took values from the closed TBE tiling, giving the generator the TBE answer read back from the vector
reproduces the whole blob byte for byte (the open conversion code is exact); (3) the expected rejections are
refused, naming the parameter.
"""
from __future__ import annotations

import json
import math
import struct

import pytest
from paths import DATA_DIR

import tiling
from ascend_sim.machine.platform import get_platform
from tiling.conv3d_backprop_filter import TbeTiling, check_conv3d_dw_args, tiling_for_args

_DOC = json.loads((DATA_DIR / "conv3d_dw_tiling_vectors_a2.json").read_text())
VECTORS = _DOC["vectors"]
REJECTIONS = _DOC["rejections"]

# SetShapeTiling / SetAttrTiling: the problem itself, written the same way by every template.
PROBLEM_FIELDS = (
    "totalL1Size batch cin cout cin1G cout1G dout ho wo di hi wi dk hk wk group strideD strideH strideW padFront "
    "padBack padUp padDown padLeft padRight dilationD dilationH dilationW channelSize m0 k0 n0 hf32Flag"
).split()
# Constants of InitCalTilingValue (base template, TBE branch) and of an all-zero basicBlockTiling.
BASE_TBE_CONSTANTS = {"al0Pbuffer": 2, "bl0Pbuffer": 2, "iterateOrder": 1, "coreBindOrder": 0, "usedCoreNum": 0,
                      "singleCoreM": 0, "singleCoreN": 0, "singleCoreK": 0, "streamKType": 0, "coreStreamK": 0}


def _platform(vector: dict):
    hw = vector["hardware_info"]
    plat = get_platform(vector["soc"])
    changes = {field: hw[key] for field, key in (("aic_cores", "CORE_NUM"), ("L1", "L1_SIZE"), ("L0A", "L0A_SIZE"),
                                                 ("L0B", "L0B_SIZE"), ("L0C", "L0C_SIZE"), ("UB", "UB_SIZE"))
               if getattr(plat, field) != hw[key]}
    return plat.with_overrides(**changes) if changes else plat


def _problem(vector: dict) -> dict:
    f = vector["filter_shape"]["normalized"]
    return dict(x_shape=tuple(vector["fmap_shape"]["ori"]),
                filter_shape=(f["Cout"], f["Cin_per_group"], f["kD"], f["kH"], f["kW"]),
                dy_shape=tuple(vector["dy_shape"]["ori"]), strides=tuple(vector["strides_DHW"]),
                pads=tuple(vector["pads"]), dilations=tuple(vector["dilations_DHW"]), groups=vector["groups"],
                dtype=vector["dtype"], platform=_platform(vector), enable_hf32=vector["enable_hf32"],
                deterministic=bool(vector["deterministic"]))


def _fully_open(vector: dict) -> bool:
    return vector["verification"].get("blob_reconstruction", {}).get("fully_open", False)


def _expected_blob(vector: dict) -> bytes:
    return struct.pack(f"<{len(vector['tiling_words_int32'])}i", *vector["tiling_words_int32"])


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_open_fields_and_key(vector):
    result = tiling.conv3d_backprop_filter_tiling(**_problem(vector))
    expected = vector["tiling"]
    got = result.fields()
    assert result.tiling_key == vector["tiling_key"]
    if _fully_open(vector):
        compare = list(expected)
    elif vector["template"] == "open":  # basic block: all but what InitTilingValue took from TBE
        compare = [name for name in expected if name not in vector["tbe_dependent_fields"]]
    else:  # base template on TBE values: the problem and the conversion's constants
        compare = PROBLEM_FIELDS + list(BASE_TBE_CONSTANTS)
        assert {k: got[k] for k in BASE_TBE_CONSTANTS} == BASE_TBE_CONSTANTS
    assert {k: got[k] for k in compare} == {k: expected[k] for k in compare}
    if _fully_open(vector):
        assert result.to_bytes() == _expected_blob(vector)
    assert tiling.validate_dw(result).ok


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _tbe_from_vector(vector: dict) -> TbeTiling:
    """A TBE answer consistent with the vector: blocks read back directly, core dims found by search."""
    t, run = vector["tiling"], vector["run_info"]
    batch, dout, ho, kd = t["batch"], t["dout"], t["ho"], t["dk"]
    c0 = t["channelSize"]
    cout1_g, cin1_g = run["cout1_g"], run["cin1_g"]
    separate = run["real_g"] > 1 or run["dilation_d"] > 1
    bd_dd = next((bd, dd) for bd in range(1, batch + 1) for dd in range(1, dout + 1)
                 if _ceil(batch, bd) * _ceil(dout, dd) == t["singleCoreBatch"]
                 and dout // dd and _ceil(batch * dout, _ceil(batch, bd) * (dout // dd)) == t["batchDim"])
    m_dim = next(m for m in range(1, cout1_g + 1)
                 if _ceil(cout1_g * c0, _ceil(_ceil(cout1_g, m) * c0, 16) * 16) == t["mDim"])
    k_dim = next(k for k in range(1, ho + 1) if _ceil(ho, _ceil(ho, k)) == t["kDim"])

    def n_fields(n: int) -> tuple[int, int]:
        if separate:
            dk = math.gcd(n, kd)
            return dk, _ceil(cin1_g * c0, _ceil(cin1_g, n // dk) * c0)
        return 1, _ceil(cin1_g * c0 * kd, _ceil(cin1_g * kd, n) * c0)
    n_dim = next(n for n in range(1, cin1_g * kd * kd + 1) if n_fields(n) == (t["dkDim"], t["nDim"]))
    k_l0 = t["baseK"] // c0
    return TbeTiling(batch_dim=bd_dd[0], d_dim=bd_dd[1], group_dim=t["groupDim"], m_dim=m_dim, n_dim=n_dim,
                     k_dim=k_dim, m_l0=t["baseM"] // 16, k_l0=k_l0, n_l0=t["baseN"] // 16, m_al1=t["stepM"],
                     n_bl1=t["stepN"], k_al1=t["stepKa"] * k_l0, k_bl1=t["stepKb"] * k_l0, db_l0c=t["cl0Pbuffer"],
                     db_al1=t["al1Pbuffer"], db_bl1=t["bl1Pbuffer"])


TBE_VECTORS = [v for v in VECTORS if not _fully_open(v)]


@pytest.mark.parametrize("vector", TBE_VECTORS, ids=[v["name"] for v in TBE_VECTORS])
def test_real_tbe_answer_reproduces_the_blob(vector):
    """Given the TBE answer the real run used, the rest of the real code's arithmetic is ours exactly."""
    args = check_conv3d_dw_args(**_problem(vector))
    result = tiling_for_args(args, tbe=_tbe_from_vector(vector))
    assert result.fields() == vector["tiling"]
    assert result.to_bytes() == _expected_blob(vector)
    assert result.tiling_key == vector["tiling_key"]


def test_the_vectors_cover_every_template():
    keys = {v["tiling_key"] for v in VECTORS}
    assert keys == {0, 1, 2, 3, 4}
    assert any(_fully_open(v) and v["tiling_key"] == 0 for v in VECTORS)  # the open CalBaseBlockTiling
    assert any(_fully_open(v) and v["tiling_key"] != 0 for v in VECTORS)  # the open CalCoreDimTiling


@pytest.mark.parametrize("vector", REJECTIONS, ids=[v["name"] for v in REJECTIONS])
def test_expected_rejections(vector):
    f = vector["filter_shape"]["normalized"]
    plat = get_platform(vector["soc"]).with_overrides(aic_cores=vector["core_num"])
    with pytest.raises(ValueError) as err:
        tiling.conv3d_backprop_filter_tiling(
            tuple(vector["fmap_shape"]["ori"]), (f["Cout"], f["Cin_per_group"], f["kD"], f["kH"], f["kW"]),
            tuple(vector["dy_shape"]["ori"]), tuple(vector["strides"][2:]), tuple(vector["pads"]),
            tuple(vector["dilations"][2:]), vector["groups"], vector["dtype"], plat)
    expected = {"test_group_upper_bound": "groups=256", "conv3d_dw_v2_w0": "dy_shape[4] (W)=0"}[vector["name"]]
    assert expected in str(err.value)
