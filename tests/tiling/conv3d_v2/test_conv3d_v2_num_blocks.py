"""ComputeNumBlocks (Conv3dTilingEngine's multi-core split) against the 6 ComputeNumBlocksViaEngine cases of
test_conv3d_v2_tiling.cpp (tests/data/conv3d_v2_tiling_vectors_a2.json): the engine is set up as BuildEngineFromBase
does (BF16, the UT's aicoreNum and l2Rate, groups 1) and must pick the asserted batchDim, mDim, nDim, doDim, groupDim."""
import json

import pytest
from paths import DATA_DIR

from tiling.conv3d_v2.engine import Conv3dTilingEngine

DATA = json.loads((DATA_DIR / "conv3d_v2_tiling_vectors_a2.json").read_text())
CASES = [v for v in DATA["vectors"] if v["kind"] == "num_blocks"]


def test_case_count():
    assert len(CASES) == 6


@pytest.mark.parametrize("v", CASES, ids=[v["test"] for v in CASES])
def test_num_blocks(v):
    engine = Conv3dTilingEngine({"aicoreNum": v["aicoreNum"], "l2Rate": int(v["other_settings"]["l2Rate"])})
    s = engine.shapeInfo_
    for key, value in v["shape"].items():
        setattr(s, key, value)
    s.cinOpt, s.coutOpt = s.cIn, s.cOut
    engine.attrInfo_.groups = engine.attrInfo_.groupOpt = v["groups"]
    engine.outputOrder_ = int(v["other_settings"].get("outputOrder_", 0))
    engine.ComputeNumBlocks()
    got = engine.numBlocksResOpt_
    assert {k: got[k] for k in v["expect"]} == v["expect"]
