"""The run commands' comparison with the reference (frontends/cli/report.py, check_against), computed in place:
the same error as the plain expression max(|got - ref| / (|ref| + rms(ref))) to the bit, and the same verdict on
non-finite results."""
import numpy as np
import pytest

from frontends.cli.report import check_against


def _plain(got, expect):
    got = got.astype(np.float64)
    rms = float(np.sqrt(np.mean(np.square(expect, dtype=np.float64)))) or 1.0
    return float((np.abs(got - expect) / (np.abs(expect) + rms)).max())


@pytest.mark.parametrize("precision", [np.float32, np.float64])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_the_error_is_the_plain_expressions(precision, dtype):
    rng = np.random.default_rng(7)
    expect = rng.standard_normal((3, 40, 50)).astype(precision)
    got = (expect + 1e-3 * rng.standard_normal(expect.shape)).astype(dtype)
    check = check_against(got, expect, dtype, False)
    assert check.error == _plain(got, expect)
    assert check.passed is (check.error <= check.tolerance)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_non_finite_result_fails(bad):
    expect = np.ones((4, 4), np.float32)
    got = expect.astype(np.float16)
    got[1, 2] = bad
    assert not check_against(got, expect, "float16", False).passed
    assert check_against(expect.astype(np.float16), expect, "float16", False).passed


@pytest.mark.parametrize("transposed", [False, True])
def test_a_result_of_several_blocks_gives_the_plain_expressions_error(transposed):
    """More elements than CHECK_BLOCK (three blocks and a tail), the result a strided view as from_format gives."""
    from frontends.cli.report import CHECK_BLOCK
    rng = np.random.default_rng(11)
    expect = rng.standard_normal((3 * CHECK_BLOCK + 1234,)).astype(np.float32).reshape(-1, 2)
    got = (expect + 1e-3 * rng.standard_normal(expect.shape)).astype(np.float16)
    if transposed:
        expect, got = expect.T, got.T  # views: got is not C-contiguous
        assert not got.flags.c_contiguous
    check = check_against(got, expect, "float16", False)
    assert check.error == _plain(got, expect)


@pytest.mark.parametrize("where", ["got", "expect"])
def test_a_nan_in_a_late_block_is_the_error(where):
    """A NaN after the first block: the error is NaN as in one max over the whole array, and the check fails (a
    NaN in the reference too, although the result is finite)."""
    from frontends.cli.report import CHECK_BLOCK
    expect = np.ones(2 * CHECK_BLOCK + 10, np.float32)
    got = expect.astype(np.float16)
    (got if where == "got" else expect)[CHECK_BLOCK + 5] = np.nan
    check = check_against(got, expect, "float16", False)
    assert np.isnan(check.error) and np.isnan(_plain(got, expect))
    assert not check.passed
