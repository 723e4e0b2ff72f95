"""Direct access to one simulated core's buffers, for the instruction tests: a launch of a test body, a LocalTensor
over a buffer, and the buffer's bytes written or read as an array (outside any instruction, so nothing is recorded
or timed); and every core's buffers kept after the replay engine's data pass, for the tests of that pass."""
import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import LocalTensor, current_core
from ascend_sim.engine import replay_passes
from ascend_sim.machine.tensor import GmAddr


def launch_body(body, gm_arrays=(), block_dim=1, check_races=False, kernel_type="AIC_ONLY"):
    """Run body(core, gm_addrs) on each core of an Ascend910B2 launch, gm_arrays uploaded first (gm_addrs are
    their addresses). Returns the chip and the GM buffers."""
    chip = Chip("Ascend910B2", check_races=check_races)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]
    chip.launch(lambda: body(current_core(), [GmAddr(b) for b in bufs]), block_dim, kernel_type=kernel_type)
    return chip, bufs


def local(core, where, dtype, offset_bytes=0):
    """A LocalTensor of dtype from offset_bytes to the end of buffer `where` (L1, L0A, ...)."""
    buf = core.buffers[where]
    return LocalTensor(buf, offset_bytes, dtype, (buf.capacity - offset_bytes) // np.dtype(dtype).itemsize, where)


def fill(core, where, values):
    """Write values' bytes at the start of buffer `where`, as an earlier instruction would have (they count as
    written: machine/written.py)."""
    raw = np.ascontiguousarray(values).view(np.uint8)
    buf = core.buffers[where]
    buf.data[:raw.size] = raw
    if buf.written is not None:
        buf.written.add(0, raw.size)


def elems(core, where, dtype, n):
    """The first n elements of buffer `where` as dtype (a copy)."""
    return core.buffers[where].data[:n * np.dtype(dtype).itemsize].view(dtype).copy()


def keep_buffers_after_passes(m, buffers: list) -> None:
    """Append every core's local buffer bytes to `buffers` after each launch's replay passes (data pass done);
    m: a pytest MonkeyPatch (or its context)."""
    real_run = replay_passes.run

    def passes(chip, cores, s):
        done = real_run(chip, cores, s)
        buffers.append([(c, name, buf.data.tobytes()) for c, core in enumerate(cores)
                        for name, buf in sorted(core.buffers.items()) if buf.data is not None])
        return done

    m.setattr(replay_passes, "run", passes)
