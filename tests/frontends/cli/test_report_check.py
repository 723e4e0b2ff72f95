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
