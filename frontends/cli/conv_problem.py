"""The flags that describe a 3D convolution problem, shared by every command about one (conv3d-dx, tiling).

One set of names and defaults: --batch --cin --cout --dhw --kernel --stride --pad --dilation --groups --dtype
--platform --hf32. Each value is checked when it is parsed (count, range: the A2 host code's limits from
tiling.conv3d_backprop_input.arch22.checks); `conv_problem(args)` then checks what needs several flags (groups dividing the channels, the
kernel fitting the padded input, HF32 only for float32) and derives the NCDHW shapes of dx, dy and the filter;
`CliProblem.plan` plans the operator's run of it from those shapes (no data). (The operators check the shapes
it derives into the one checked problem type, tiling.common.problem.ConvProblem.)

Setting the flags up imports nothing heavy (`--help` stays fast): the limits, the dtypes and the tiling fields are
read from tiling/ascend_sim when a value is parsed.
"""
from __future__ import annotations

import argparse
import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frontends.cli.flags import FlagError, dtype_value, int_in_range, int_list, platform_value, read_integer

if TYPE_CHECKING:
    from ascend_sim.machine.platform import Platform
    from kernels.conv3d_backprop_input.plan import Conv3dDxPlan

DHW = ("D", "H", "W")
PADS = ("front", "back", "top", "bottom", "left", "right")


def _limits():
    """The A2 host code's limits (tiling.conv3d_backprop_input.arch22.checks), read when a value is parsed."""
    from tiling.conv3d_backprop_input.arch22 import checks
    return checks


def tiling_field_ranges() -> dict:
    """The kernel-visible dx tiling fields with the range of their C type: the A2 tiling's (params and
    conv3DDxTiling) and the Ascend 950's arch35 struct's; the operator refuses a name its platform's tiling lacks."""
    from tiling.conv3d_backprop_input.arch22.model import Conv3DBackpropInputV2TilingData
    from tiling.conv3d_backprop_input.arch35.model import Conv3DBackpropInputArch35TilingData
    return {**Conv3DBackpropInputArch35TilingData.field_ranges(), **Conv3DBackpropInputV2TilingData.field_ranges()}


@dataclass(frozen=True)
class CliProblem:
    """The convolution the command-line flags describe: its input x (NCDHW), the kernel and the attributes; dx has
    x's shape."""

    batch: int
    cin: int
    cout: int
    dhw: tuple[int, int, int]
    kernel: tuple[int, int, int]
    stride: tuple[int, int, int]
    pad: tuple[int, int, int, int, int, int]
    dilation: tuple[int, int, int]
    groups: int
    dtype: str
    platform: str | Platform
    hf32: bool
    data_format: str = "NCDHW"  # of the data the operator is given (--format); the shapes here are NCDHW

    @property
    def dx_shape(self) -> tuple[int, int, int, int, int]:
        return (self.batch, self.cin, *self.dhw)

    @property
    def filter_shape(self) -> tuple[int, int, int, int, int]:
        return (self.cout, self.cin // self.groups, *self.kernel)

    @property
    def dy_shape(self) -> tuple[int, int, int, int, int]:
        out = tuple((self.padded(i) - self.span(i)) // self.stride[i] + 1 for i in range(3))
        return (self.batch, self.cout, *out)

    def span(self, axis: int) -> int:
        """Input entries one output entry reads along an axis: (k - 1) * dilation + 1."""
        return (self.kernel[axis] - 1) * self.dilation[axis] + 1

    def padded(self, axis: int) -> int:
        return self.dhw[axis] + self.pad[2 * axis] + self.pad[2 * axis + 1]

    def operator_arguments(self) -> dict:
        """The operator's keyword arguments for this problem: data in data_format, the filter NCDHW."""
        def five(values):  # a D,H,W attribute as the operator's 5 values in data_format order
            return (1, 1, *values) if self.data_format == "NCDHW" else (1, *values, 1)
        return dict(strides=five(self.stride), pads=self.pad, dilations=five(self.dilation), groups=self.groups,
                    data_format=self.data_format, filter_format="NCDHW", platform=self.platform,
                    enable_hf32=self.hf32)

    @property
    def layout(self) -> str:
        """How a headline names the layout: the shapes it prints are NCDHW."""
        return "NCDHW" if self.data_format == "NCDHW" else f"shapes NCDHW, data {self.data_format}"

    def in_format(self, shape: tuple) -> tuple:
        """An NCDHW shape of data in data_format."""
        return shape if self.data_format == "NCDHW" else (shape[0], *shape[2:], shape[1])

    def to_format(self, array):
        """NCDHW data in data_format (a timing-only stand-in, all strides 0, stays a view: it holds no bytes)."""
        if self.data_format == "NCDHW":
            return array
        moved = array.transpose(0, 2, 3, 4, 1)
        return moved if not any(array.strides) else moved.copy()

    def from_format(self, array):
        """Data in data_format as NCDHW."""
        return array if self.data_format == "NCDHW" else array.transpose(0, 4, 1, 2, 3)

    def plan(self, route: str, overrides: dict[str, int] | None = None, *,
             validate_overrides: bool = True) -> Conv3dDxPlan:
        """The operator's plan of a run with this route and tiling overrides (see plan_conv3d_dx)."""
        from kernels.conv3d_backprop_input.plan import plan_conv3d_dx
        return plan_conv3d_dx(self.in_format(self.dx_shape), self.filter_shape, self.in_format(self.dy_shape),
                              self.dtype, route=route,
                              tiling_overrides=overrides, validate_overrides=validate_overrides,
                              **self.operator_arguments())


    @property
    def arch35(self) -> bool:
        """On an Ascend 950 (npu_arch 3510) the dx operator runs the arch35 tiling and kernel."""
        from ascend_sim.machine.platform import get_platform
        return get_platform(self.platform).npu_arch == 3510

    def tiling_arch35(self, overrides: dict[str, int] | None = None, *, validate_overrides: bool = True,
                      refuse_unported: bool = True):
        """The dx operator's arch35 tiling of this problem on an Ascend 950 (operator_arch35.plan_arch35)."""
        from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
        return plan_arch35(self.in_format(self.dx_shape), self.filter_shape, self.in_format(self.dy_shape),
                           self.dtype, tiling_overrides=overrides, validate_overrides=validate_overrides,
                           refuse_unported=refuse_unported, **self.operator_arguments())


    def matmul_mode_arch35(self) -> str | None:
        """The matmul shortcut aclnn takes for this problem on an Ascend 950 (None: the arch35 conv kernel)."""
        from kernels.conv3d_backprop_input.operator_arch35 import matmul_route_950
        return matmul_route_950(self.in_format(self.dx_shape), self.filter_shape, self.in_format(self.dy_shape),
                                self.dtype, **self.operator_arguments())[1]


def add_conv_problem_arguments(parser: argparse.ArgumentParser) -> None:
    shape = parser.add_argument_group("problem (x and dx are NCDHW, the filter (Cout, Cin/groups, kD, kH, kW))")
    shape.add_argument("--batch", type=int_in_range(1), default=1, help="N (default 1)")
    shape.add_argument("--cin", type=int_in_range(1), default=64, help="channels of x and dx (default 64)")
    shape.add_argument("--cout", type=int_in_range(1), default=64, help="channels of y and dy (default 64)")
    shape.add_argument("--dhw", type=int_list(DHW, 1), default=(8, 56, 56), metavar="D,H,W",
                       help="D,H,W of x and dx (default 8,56,56)")
    shape.add_argument("--kernel", type=int_list(DHW, 1, lambda: (_limits().KERNEL_D_MAX, _limits().KERNEL_HW_MAX,
                                                                   _limits().KERNEL_HW_MAX)),
                       default=(3, 3, 3), metavar="kD,kH,kW", help="default 3,3,3")
    shape.add_argument("--stride", type=int_list(DHW, 1, lambda: (_limits().STRIDE_D_MAX, _limits().STRIDE_HW_MAX,
                                                                   _limits().STRIDE_HW_MAX)),
                       default=(1, 1, 1), metavar="D,H,W", help="default 1,1,1")
    shape.add_argument("--pad", type=int_list(PADS, 0, lambda: _limits().PAD_MAX, per_axis=2),
                       default=(1, 1, 1, 1, 1, 1), metavar="F,B,T,B,L,R",
                       help="front,back,top,bottom,left,right, or D,H,W (each on both sides), or one for all "
                            "(default 1)")
    shape.add_argument("--dilation", type=int_list(DHW, 1, lambda: _limits().DILATION_MAX), default=(1, 1, 1),
                       metavar="D,H,W",
                       help="default 1,1,1")
    shape.add_argument("--groups", type=int_in_range(1, lambda: _limits().GROUPS_MAX), default=1,
                       help="must divide --cin and --cout (default 1)")
    shape.add_argument("--dtype", default="float16", type=dtype_value, help=dtype_value.help)
    shape.add_argument("--hf32", action="store_true", help="round float32 operands to HF32 (--dtype float32 only)")
    shape.add_argument("--platform", type=platform_value, default="Ascend910B2",
                       help="a preset name or a platform JSON file (default Ascend910B2)")
    tiling = parser.add_argument_group("tiling")
    tiling.add_argument("--set", type=tiling_override, action="append", default=[], metavar="FIELD=VALUE",
                       help="override a field of the conv kernel's tiling, repeatable (e.g. --set baseM=128)")


def field_override(field_ranges, what: str, docs: str):
    """type= for --set FIELD=VALUE: a field of `field_ranges()` (name -> (low, high), its C type's range) and an
    integer in that range; `what` names the kind of field and `docs` where the fields are listed, in the errors."""
    def parse(text: str) -> tuple[str, int]:
        ranges = field_ranges()
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"{text!r} must look like FIELD=VALUE, e.g. baseM=128")
        if name not in ranges:
            close = difflib.get_close_matches(name, list(ranges), n=3)
            hint = f"did you mean {' or '.join(close)}?" if close else f"see {docs} for the fields"
            raise argparse.ArgumentTypeError(f"{text!r}: {name} is not a {what}; {hint}")
        number = read_integer(value, text, name)
        low, high = ranges[name]
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{name}={number} in {text!r} is outside its C type's range "
                                             f"[{low}, {high}]")
        return name, number
    return parse


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """--format: the layout of the data the command hands the operator (the shapes are given NCDHW either way)."""
    parser.add_argument("--format", default="NCDHW", choices=("NCDHW", "NDHWC"),
                        help="data_format of x, dy and dx given to the operator (default NCDHW; the filter is NCDHW)")


tiling_override = field_override(tiling_field_ranges, "tiling field", "docs/tiling.md")  # kernel-visible fields


def conv_problem(args: argparse.Namespace) -> CliProblem:
    """The problem the flags describe; FlagError names the flags whose values do not go together."""
    problem = CliProblem(args.batch, args.cin, args.cout, args.dhw, args.kernel, args.stride, args.pad,
                          args.dilation, args.groups, args.dtype, args.platform, args.hf32,
                          getattr(args, "format", "NCDHW"))
    if args.hf32 and args.dtype != "float32":
        raise FlagError(f"argument --hf32: rounds float32 operands, and --dtype is {args.dtype}; "
                        f"use --dtype float32 or drop --hf32")
    if args.cin % args.groups or args.cout % args.groups:
        raise FlagError(f"argument --groups: {args.groups} must divide both --cin {args.cin} and --cout {args.cout}")
    for axis, name in enumerate(DHW):
        if problem.span(axis) > problem.padded(axis):
            before, after = PADS[2 * axis], PADS[2 * axis + 1]
            raise FlagError(
                f"argument --kernel: {name}={args.kernel[axis]} with --dilation {name}={args.dilation[axis]} spans "
                f"{problem.span(axis)}, more than --dhw {name}={args.dhw[axis]} plus --pad {before} "
                f"{args.pad[2 * axis]} and {after} {args.pad[2 * axis + 1]} = {problem.padded(axis)}")
    return problem
