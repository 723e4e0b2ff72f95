"""What every operator shares on the host side: the operand checks (and, as issue 18 proceeds, the problem type,
the run object and the launch helper)."""
