"""The dx operator's routes, in a module of their own: the `--route` flag checks a value against them without
importing the planner (and with it the kernel and the simulator), which a run imports after its operands' draw has
started (frontends/cli/early_operands.py)."""

ROUTES = ("aclnn", "v2")  # aclnn: aclnn's matmul shortcuts where it takes them; v2: always the conv kernel
