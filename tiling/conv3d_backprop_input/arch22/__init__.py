"""The A2/A3 Conv3DBackpropInputV2 tiling (op_host/op_tiling/): the argument checks (checks.py), base and
basic-block templates, the TBE core-split rule, the 312-byte tiling data, the validator. See docs/tiling.md."""
