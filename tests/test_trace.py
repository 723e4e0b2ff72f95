import json

import numpy as np

from kernels.matmul import MatmulTiling, run_matmul


def test_chrome_trace_has_cores_pipes_spans_and_flag_flows(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((256, 64)).astype(np.float16), rng.standard_normal((64, 128)).astype(np.float16)
    _, report = run_matmul(a, b, block_dim=2, tiling=MatmulTiling(256, 128, 64))
    path = tmp_path / "t.json"
    report.write_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(0, "MTE2"), (0, "MTE1"), (0, "M"), (0, "FIX"), (1, "M")} <= names
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == report.instructions
    mmad = next(e for e in spans if e["name"] == "Mmad")
    assert mmad["args"]["params"]["m"] == 128 and mmad["args"]["source"].startswith("matmul.py:")
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = [e for e in events if e["ph"] == "f"]
    assert ends and all(e["id"] in starts for e in ends)
    for end in ends:  # a flow goes forward in time, from the source pipe to the waiting pipe
        assert end["ts"] >= starts[end["id"]]["ts"]
