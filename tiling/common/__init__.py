"""What every tiling family shares: the one problem type and the argument checks every family uses by name
(problem: ConvProblem), the C-struct layout and ranges (cstruct), the tiling-data base (tiling_data), the validation
protocol (validation), the integer helpers (integers) and the own
rule for the closed TBE core split (tbe_rule)."""
