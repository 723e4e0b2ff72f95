"""small_pages: numpy's huge-page advice off inside, the process's own setting back after (also on an error)."""
import numpy as np
import pytest

from ascend_sim.passes import small_pages as module
from ascend_sim.passes.small_pages import small_pages

switch = module._set_madvise_hugepage
pytestmark = pytest.mark.skipif(switch is None, reason="this numpy has no huge-page switch")


def _current() -> bool:
    was = switch(True)
    switch(was)
    return was


@pytest.mark.parametrize("setting", [True, False])
def test_advice_off_inside_and_restored_after(setting):
    was = switch(setting)
    try:
        with small_pages():
            assert _current() is False
            np.zeros(1 << 20)  # an array numpy would advise (8 MiB)
        assert _current() is setting
        with pytest.raises(RuntimeError):
            with small_pages():
                raise RuntimeError("inside")
        assert _current() is setting
    finally:
        switch(was)
