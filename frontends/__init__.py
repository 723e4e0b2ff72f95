"""The front ends, above everything and imported by nothing: the `ascend-sim` command line (cli/), the debugger
prompt (debugger/) and the tiling lab (lab/)."""
