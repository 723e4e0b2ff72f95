"""`python -m kernels.cli ...` runs the `ascend-sim` command line."""
from .app import main

raise SystemExit(main())
