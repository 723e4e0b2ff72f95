"""The one problem type: every family's check returns a ConvProblem with the convolution's input as x and its
output as y (dx and dw name theirs), the 950 parse reads it by axis letter, and the TBE answer is built by name."""
import pytest

from tiling import check_conv3d_dw_args, check_conv3d_dx_args
from tiling.common.problem import ConvProblem, check_output_size
from tiling.common.tbe_rule import TbeTiling
from tiling.conv3d_backprop_input.arch35.context_utils import parse_problem
from tiling.conv3d_v2 import check_conv3d_v2_args

X, W, Y = (2, 32, 6, 10, 12), (16, 16, 3, 3, 3), (2, 16, 4, 8, 5)  # stride (1, 1, 2), no pads


def test_dx_dw_and_forward_checks_return_one_problem_type_named_alike():
    dx = check_conv3d_dx_args(Y, W, X, strides=(1, 1, 2), groups=2, dtype="float16")
    dw = check_conv3d_dw_args(X, W, Y, strides=(1, 1, 2), dtype="float16")
    fwd = check_conv3d_v2_args(X, W, strides=(1, 1, 2), groups=2, dtype="float16")
    for p in (dx, dw, fwd):
        assert type(p) is ConvProblem
        assert (p.x_shape, p.filter_shape, p.y_shape, p.strides) == (X, W, Y, (1, 1, 2))
        assert (p.dx_shape, p.dy_shape) == (p.x_shape, p.y_shape)
    assert dw.groups == 2  # the real host infers groups from Cin / the filter's Cin


def test_a_kernel_of_one_drops_its_dilation_but_keeps_the_given_one():
    p = check_conv3d_dx_args((1, 16, 4, 8, 8), (16, 16, 1, 3, 1), (1, 16, 4, 8, 8), pads=(0, 0, 1, 1, 0, 0),
                             dilations=(5, 1, 7))
    assert p.dilations == (1, 1, 1) and p.dilations_given == (5, 1, 7)


def test_the_950_parse_is_a_by_axis_view_of_the_one_problem():
    ndhwc = lambda s: (s[0], *s[2:], s[1])  # noqa: E731
    p = parse_problem(ndhwc(Y), W, ndhwc(X), (1, 1, 2), (0,) * 6, (1, 1, 1), 2, "float16", "Ascend950PR_9589",
                      data_format="NDHWC")
    assert isinstance(p.problem, ConvProblem) and p.problem.x_shape == X and p.problem.y_shape == Y
    assert p.dy == dict(zip("NCDHW", Y)) and p.dx["W"] == 12 and p.filt["N"] == 16
    assert p.data_format == "NDHWC" and p.strides == (1, 1, 2)  # the other fields are the problem's


def test_output_size_errors_name_the_shape_and_the_axis():
    with pytest.raises(ValueError, match=r"dy_shape\[4\] \(W\)=6 does not fit the convolution: expected .* = 5"):
        check_output_size("x", X, (2, 16, 4, 8, 6), W[2:], (1, 1, 2), (1, 1, 1), (0,) * 6, "k{AXIS}")
    with pytest.raises(ValueError, match=r"filter_shape\[3\] \(kernel_h\)=3 with dilation_h=9 spans 19"):
        check_output_size("dx", X, Y, W[2:], (1, 1, 2), (1, 9, 1), (0,) * 6, "kernel_{axis}")


def test_the_tbe_answer_is_built_by_name():
    with pytest.raises(TypeError):
        TbeTiling(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
    tbe = TbeTiling(batch_dim=2, d_dim=1, group_dim=1, m_dim=3, n_dim=4, k_dim=1, m_l0=8, k_l0=9, n_l0=8, k_al1=9,
                    k_bl1=9, db_l0c=1, db_al1=2, db_bl1=2)
    assert (tbe.m_al1, tbe.n_bl1, tbe.reason) == (1, 1, "")
