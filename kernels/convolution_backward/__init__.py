"""aclnnConvolutionBackward on A2: dx, dw and db of 1D / 2D / 3D convolutions, transposed or not, on the simulator.

Modules, one job each:
- arguments.py  every argument check (the A2 ranges of the API page, shapes, lengths) before anything runs
- cube_math.py  cubeMathType's A2 meaning: the dtype the cube computes in, HF32
- routing.py    which kernel computes each gradient, following aclnn's routing on A2; the 3D view of 1D / 2D
- v2_or_tbe.py  where real A2 would run the TBE dx / dw kernel instead of V2 (for the run's notes)
- bias_grad.py  grad_bias: our AIV reduction kernel (the ReduceSum aclnn calls)
- reference.py  numpy references of the three gradients (the CLI's check)
- operator.py   the host operator: plan, launch each kernel, views and casts back
"""
from kernels.convolution_backward.arguments import ConvBackwardArgs, check_arguments
from kernels.convolution_backward.bias_grad import BiasGradTiling, bias_grad_kernel, run_bias_grad
from kernels.convolution_backward.operator import (ConvBackwardPlan, ConvBackwardRun, convolution_backward,
                                                   convolution_backward_run, plan_convolution_backward, run_plan)

__all__ = ["BiasGradTiling", "ConvBackwardArgs", "ConvBackwardPlan", "ConvBackwardRun",
           "bias_grad_kernel", "check_arguments", "convolution_backward", "convolution_backward_run",
           "plan_convolution_backward", "run_bias_grad", "run_plan"]
