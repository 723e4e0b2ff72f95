import json

import numpy as np

from kernels.matmul import MatmulTiling, run_matmul


def test_chrome_trace_has_cores_pipes_spans_and_flag_flows(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((256, 64)).astype(np.float16), rng.standard_normal((64, 128)).astype(np.float16)
    report = run_matmul(a, b, block_dim=2, tiling=MatmulTiling(256, 128, 64)).report
    path = tmp_path / "t.json"
    report.write_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(0, "MTE2"), (0, "MTE1"), (0, "M"), (0, "FIX"), (1, "M")} <= names
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == report.instructions
    mmad = next(e for e in spans if e["name"] == "Mmad")
    assert mmad["args"]["params"]["m"] == 128 and mmad["args"]["source"].startswith("matmul_kernel.py:")
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = [e for e in events if e["ph"] == "f"]
    assert ends and all(e["id"] in starts for e in ends)
    for end in ends:  # a flow goes forward in time, from the source pipe to the waiting pipe
        assert end["ts"] >= starts[end["id"]]["ts"]


def test_hooks_see_every_instruction_and_can_inspect_buffers():
    """The stepping point: a hook runs after each instruction, with that core's buffers as they are then."""
    from ascend_sim import Chip
    from ascend_sim.machine.tensor import GmAddr
    from kernels.matmul import MatmulTiling, matmul_kernel

    seen, l0a_after_first_load = [], []

    def hook(core, instr):
        seen.append((core.index, instr.seq, instr.name))
        if instr.name == "LoadData2D" and not l0a_after_first_load:
            l0a_after_first_load.append(core.buffers["L0A"].data[:512].view(np.float16).reshape(16, 16).copy())

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    chip = Chip("Ascend910B2", hooks=[hook])
    args = [GmAddr(chip.gm.upload("a", a)), GmAddr(chip.gm.upload("b", b)), GmAddr(chip.gm.alloc("c", 512))]
    report = chip.launch(matmul_kernel, 1, *args, MatmulTiling(16, 16, 16, 16, 16, 16, 1))
    assert len(seen) == report.instructions and [s[1] for s in seen] == list(range(len(seen)))
    assert np.array_equal(l0a_after_first_load[0], a)  # A's only fractal, as the first LoadData left it
