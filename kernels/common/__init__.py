"""What every operator shares on the host side (the one problem type they check their arguments into, with the
named checks, is tiling.common.problem.ConvProblem, one layer down): the operand checks (operands), the run type and the steps around
a launch (run), the size guard (size_guard), which tiling fields a launch read (tiling_reads) and the kernel-tap
windows of the references (taps)."""
