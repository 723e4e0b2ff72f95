"""`tensor[offset]` (Ascend C's element offset): the window starting `offset` elements further on, for a Python
int, a numpy integer or a bool, on the plain classes and on a subclass."""
import numpy as np
import pytest

from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor


class _Tagged(LocalTensor):
    """A subclass: made through its constructor, not by copying the fields."""


@pytest.mark.parametrize("cls", [LocalTensor, GlobalTensor, _Tagged])
@pytest.mark.parametrize("offset", [0, 7, np.int64(7), np.int32(3), True])
def test_an_offset_moves_the_address_by_whole_elements(cls, offset):
    buf = Buffer("L1", 1 << 16, 32, allocate=False)
    tensor = cls(buf, 64, np.float32, 100, "A1")
    view = tensor[offset]
    assert view.__class__ is cls
    assert view.address.__class__ is int and view.size.__class__ is int
    assert (view.buffer, view.address, view.dtype, view.size) == (buf, 64 + 4 * int(offset), np.dtype(np.float32),
                                                                  100 - int(offset))
    assert view.position_name == tensor.position_name
