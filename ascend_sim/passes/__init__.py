"""Passes over the record stream: the schedulers (exact and numba-compiled), the race checkers, the trace and the
run report."""
