"""HardEvent and TPosition hash by identity (in C; Enum's own __hash__ is Python code, called per queue flag and per
replay key): members stay singletons, so a member from a pickle, a copy or a lookup by value finds the same dict
entry, and two members never share one."""
import copy
import pickle

import pytest

from ascend_sim.machine.pipes import HardEvent
from ascend_sim.machine.tensor import TPosition


@pytest.mark.parametrize("enum", [HardEvent, TPosition])
def test_members_key_dicts_by_identity(enum):
    table = {member: member.value for member in enum}
    assert len(table) == len(enum)
    for member in enum:
        for same in (pickle.loads(pickle.dumps(member)), copy.deepcopy(member), enum(member.value), enum[member.name]):
            assert same is member and table[same] == member.value
    assert enum.__hash__ is object.__hash__  # not Enum.__hash__ (a Python call per hash)
