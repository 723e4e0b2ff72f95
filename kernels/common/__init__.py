"""What every operator shares on the host side: the operand checks, the run type and the steps around a launch
(and, as issue 18 proceeds, the problem type)."""
