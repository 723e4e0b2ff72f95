"""The compiled fp16 operand conversion of the replay data pass (ascend_sim/passes/fast_fractals.py): every one of
the 65,536 float16 patterns against numpy's own float16 -> float32 cast (its bits, NaN payloads included), on both
of its loops (unit innermost step, and converted then gathered), and an Mmad's product against machine/mmad.py's
(the exact engine's: the same bits) and a float64 product of the operands read back by plain numpy from the
fractal layouts written out here."""
import numpy as np
import pytest

from ascend_sim.isa.cube import MmadOperands
from ascend_sim.machine import dtypes, mmad
from ascend_sim.machine.dtypes import HF32_NEAREST_EVEN, bfloat16
from ascend_sim.machine.memory import Buffer
from ascend_sim.passes import fast_fractals
from ascend_sim.passes.fast_fractals import f16_walk

ALL_BITS = np.arange(65536, dtype=np.uint32).astype(np.uint16)
NUMPY_F32 = ALL_BITS.view(np.float16).astype(np.float32).view(np.uint32)  # the reference: numpy's cast


def test_every_float16_pattern_in_place_order():
    out = f16_walk(ALL_BITS, 0, np.array([1, 1, 1, 65536, 0, 0, 0, 1, 1, 65536]))
    assert out.dtype == np.float32 and out.shape == (1, 65536)
    assert (out.view(np.uint32) == NUMPY_F32).all()


def test_every_float16_pattern_gathered():
    """Innermost step 256: the elements are converted in place order, then gathered as a 256 x 256 transpose."""
    out = f16_walk(ALL_BITS, 0, np.array([1, 1, 256, 256, 0, 0, 1, 256, 256, 256]))
    assert (out.view(np.uint32) == NUMPY_F32.reshape(256, 256).T).all()


def test_a_walk_from_an_offset_reads_only_its_elements():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 65536, 4096).astype(np.uint16)
    out = f16_walk(bits, 100, np.array([2, 3, 4, 5, 7, 300, 1, 20, 6, 20])).view(np.uint32)
    i0, i1, i2, i3 = np.meshgrid(*map(np.arange, (2, 3, 4, 5)), indexing="ij")
    expected = bits[100 + 7 * i0 + 300 * i1 + i2 + 20 * i3].view(np.float16).astype(np.float32).view(np.uint32)
    assert (out == expected.reshape(6, 20)).all()


def _fractals(matrix: np.ndarray, layout: str) -> np.ndarray:
    """A (m, k) or (k, n) float16 matrix as the bytes of its L0 fractals, written out by hand: ZZ
    [m1][k1][16][c0], NZ [k1][m1][16][c0], ZN [k1][n1][16 n][c0 k]."""
    c0 = 16
    if layout == "ZN":
        k, n = matrix.shape
        blocks = matrix.reshape(k // c0, c0, n // 16, 16).transpose(0, 2, 3, 1)
    else:
        m, k = matrix.shape
        blocks = matrix.reshape(m // 16, 16, k // c0, c0)
        blocks = blocks.transpose(0, 2, 1, 3) if layout == "ZZ" else blocks.transpose(2, 0, 1, 3)
    return np.ascontiguousarray(blocks).reshape(-1).view(np.uint8)


def _operands(rng, m1, k1, n1, k, a_nz, hf32=None, a0=512, b0=1024, specials=False):
    a = rng.standard_normal((m1 * 16, k1 * 16)).astype(np.float16)
    b = rng.standard_normal((k1 * 16, n1 * 16)).astype(np.float16)
    if specials:  # subnormals, signed zeros, a large value; no inf / NaN: the float64 reference compares values
        a.reshape(-1)[:6] = np.array([6e-8, -6e-8, 3e-5, -0.0, 0.0, 6.0e4], np.float16)
        b.reshape(-1)[:3] = np.array([1e-7, -0.0, 2.0 ** -14], np.float16)
    abuf, bbuf = Buffer("L0A", 65536, 512), Buffer("L0B", 65536, 512)
    a_bytes, b_bytes = _fractals(a, "NZ" if a_nz else "ZZ"), _fractals(b, "ZN")
    abuf.data[a0:a0 + a_bytes.size] = a_bytes
    bbuf.data[b0:b0 + b_bytes.size] = b_bytes
    ops = MmadOperands(abuf, a0, a_bytes.size, bbuf, b0, b_bytes.size, None, 0, m1 * n1 * 1024, np.dtype(np.float16),
                       m1 * 16, k, m1, n1, k1, 16, True, False, "float16", hf32, None, a_nz)
    return ops, a, b


@pytest.mark.parametrize("m1, k1, n1, k, a_nz, hf32", [
    (16, 3, 8, 48, False, None),  # C3D conv3a's Mmad
    (4, 2, 1, 32, False, None),  # X3D's n 16
    (2, 3, 4, 40, False, None),  # K masked inside the last fractal
    (3, 2, 2, 32, True, None),  # NZ A (the 950)
    (2, 2, 3, 25, False, (11, HF32_NEAREST_EVEN)),
])
@pytest.mark.parametrize("specials", [False, True])
def test_the_product_is_machine_mmad_s(m1, k1, n1, k, a_nz, hf32, specials):
    ops, a, b = _operands(np.random.default_rng(m1 * 100 + k), m1, k1, n1, k, a_nz, hf32, specials=specials)
    got = fast_fractals.product(ops)
    assert got.dtype == np.float32 and got.shape == (m1 * 16, n1 * 16)
    assert got.tobytes() == mmad.product(ops).tobytes()
    exact = a[:, :k].astype(np.float64) @ b[:k].astype(np.float64)
    assert np.allclose(got, exact, rtol=1e-2 if hf32 else 1e-5, atol=1e-2 if hf32 else 1e-3)


def test_inf_and_nan_operands_give_machine_mmad_s_bits():
    ops, _, _ = _operands(np.random.default_rng(5), 2, 2, 2, 32, False)
    a_elements = ops.abuf.data[ops.a0:ops.a0 + ops.a_bytes].view(np.uint16)
    a_elements[[0, 17, 300]] = [0x7C00, 0xFC00, 0x7E01]  # +inf, -inf, a NaN with a payload
    with np.errstate(invalid="ignore"):
        got, expected = fast_fractals.product(ops), mmad.product(ops)
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("change", ["odd A address", "GEMV", "bfloat16"])
def test_what_it_does_not_walk_goes_to_machine_mmad(monkeypatch, change):
    ops, _, _ = _operands(np.random.default_rng(7), 2, 1, 1, 16, False, a0=513 if change == "odd A address" else 512)
    if change == "GEMV":
        ops = ops._replace(gemv=True)
    if change == "bfloat16":
        ops = ops._replace(dtype=bfloat16, operand="bfloat16")

    def refused(*args):
        raise AssertionError("the compiled walk ran")

    monkeypatch.setattr(fast_fractals, "f16_operands", refused)
    assert fast_fractals.product(ops).tobytes() == mmad.product(ops).tobytes()


@pytest.mark.parametrize("shape", [(65536,), (4096, 16), (256, 16, 16)])
@pytest.mark.parametrize("into", [False, True])
def test_to_float32_is_machine_s(shape, into):
    """Every pattern, in shapes and into an `out` that is the front of a larger array (RunPlan.run's window
    image before its pad block)."""
    elements = np.random.default_rng(2).permutation(ALL_BITS).reshape(shape)
    out = np.full(65536 + 16, -1.0, np.float32)[:65536].reshape(shape) if into else None
    got = fast_fractals.to_float32(elements, np.dtype(np.float16), out)
    assert got.shape == shape and got.dtype == np.float32
    assert (got.view(np.uint32) == elements.view(np.float16).astype(np.float32).view(np.uint32)).all()
    if into:
        assert got is out


@pytest.mark.parametrize("case", ["strided elements", "bfloat16"])
def test_to_float32_leaves_the_rest_to_machine_s(monkeypatch, case):
    rng = np.random.default_rng(4)
    if case == "bfloat16":
        elements, dtype = rng.standard_normal(64).astype(bfloat16), bfloat16
    else:
        elements, dtype = rng.integers(0, 65536, (16, 8)).astype(np.uint16)[:, ::2], np.dtype(np.float16)

    def refused(*args):
        raise AssertionError("the compiled loop ran")

    monkeypatch.setattr(fast_fractals, "_f16_into", refused)
    got = fast_fractals.to_float32(elements, dtype)
    assert got.tobytes() == dtypes.to_float32(elements, dtype).tobytes()


@pytest.mark.parametrize("dims, steps", [([8, 16, 1, 16], [256, 16, 256, 1]), ([1, 16, 8, 16], [2048, 1, 256, 16]),
                                         ([16, 16, 3, 16], [768, 16, 256, 1]), ([3, 16, 8, 16], [2048, 1, 256, 16]),
                                         ([2, 1, 4, 16], [64, 999, 16, 1]), ([4, 2, 2, 1], [-8, 4, 2, 7])])
def test_merged_walks_read_the_same_elements_in_the_same_order(dims, steps):
    """_walks' merged axes (fewer, longer inner loops) against the walk as written, element by element."""
    def elements(walk):
        grids = np.meshgrid(*[np.arange(n) for n in walk[:4]], indexing="ij")
        return sum(g * s for g, s in zip(grids, walk[4:])).reshape(-1)

    merged = fast_fractals._merged(list(dims), list(steps))
    assert np.array_equal(elements(merged), elements(dims + steps))
    assert sum(n > 1 for n in merged[:4]) <= sum(n > 1 for n in dims)
