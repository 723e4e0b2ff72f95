"""The searches and backends a sweep takes, apart from the lab's code: the CLI builds its parser from them without
loading the lab (`ascend-sim sweep --help` stays fast)."""

SEARCHES = ("local", "grid", "random", "optuna")
BACKENDS = ("local", "dask", "ray")
