"""What every tiling family shares: the C-struct layout of tiling data and its ranges (cstruct), the argument
checks every operator uses (checks)."""
