"""The hardware as data: platform presets, pipes and events, core types, dtypes, memory, tensors, layouts
(formats), faults. Nothing here issues or schedules an instruction."""
