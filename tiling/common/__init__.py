"""What every tiling family shares: the C-struct layout and ranges (cstruct), the tiling-data base (tiling_data),
the argument checks (checks), the validation protocol (validation), the integer helpers (integers) and the own
rule for the closed TBE core split (tbe_rule)."""
