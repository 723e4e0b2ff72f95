"""`python -m frontends.cli ...` runs the `ascend-sim` command line."""
from frontends.cli.app import main

raise SystemExit(main())
