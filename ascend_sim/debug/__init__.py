"""The replay debugger: stepping through a finished run (replay), what each record wrote and read (dataflow), who
wrote a byte (writers) and the chain of records behind an element (provenance)."""
from ascend_sim.debug.replay import ApiCall, Capture, Debugger, break_on
from ascend_sim.debug.writers import Writer

__all__ = ["ApiCall", "Capture", "Debugger", "Writer", "break_on"]
