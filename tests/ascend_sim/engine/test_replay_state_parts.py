"""The replayer's state helpers (engine/replay.py) against plain references written for the test: the diff of an
object's frozen attributes, a parameter struct's short-key value, and the maker of a dict of sets."""

from ascend_sim.engine import replay
from ascend_sim.isa.mte1 import LoadData3DParamsV2
from ascend_sim.machine.pipes import HardEvent

_MISSING = object()


def _reference_changed(old, new):
    """The diff by name: None when an attribute of `old` is gone, else new's pairs whose value differs."""
    old_d, new_d = dict(old), dict(new)
    if old_d.keys() - new_d.keys():
        return None
    return tuple((name, v) for name, v in new if old_d.get(name, _MISSING) != v)


def test_changed_equals_the_diff_by_name():
    old = (("a", 1), ("b", (list, (1, 2))), ("c", "x"), ("d", None))
    cases = [
        (("a", 1), ("b", (list, (1, 2))), ("c", "x"), ("d", None)),  # nothing changed
        (("a", 2), ("b", (list, (1, 2))), ("c", "y"), ("d", None)),  # values changed, names lined up
        (("a", 1), ("b", (list, (1, 3))), ("c", "x"), ("d", None), ("e", 5)),  # an attribute added
        (("b", (list, (1, 2))), ("a", 1), ("c", "x"), ("d", None)),  # the same attributes in another order
        (("a", 1), ("b", (list, (1, 2))), ("c", "x"), ("f", None)),  # one gone, one added: same length
        (("a", 1), ("c", "x"), ("d", None)),  # one gone
    ]
    for new in cases:
        assert replay._changed(old, new) == _reference_changed(old, new), new
    assert replay._changed(old, cases[4]) is None and replay._changed(old, cases[5]) is None
    assert replay._changed(old, cases[3]) == ()


def test_a_struct_with_a_pad_list_keys_as_its_values_with_the_list_as_a_tuple():
    p = LoadData3DParamsV2(padList=[1, 1, 0, 255], l1H=13, l1W=28, channelSize=48, kExtension=48, mExtension=256)
    names = [name for name in LoadData3DParamsV2.__slots__]
    expected = (LoadData3DParamsV2, tuple(tuple(v) if isinstance(v, list) else v
                                          for v in (getattr(p, name) for name in names)))
    assert replay._key_value(p) == expected
    p.padList[2] = 1  # changed in place: another key
    assert replay._key_value(p) != expected
    p.padList = [1, 1, 1, HardEvent.M_MTE1]  # a list of values that are not plain: keyed item by item
    assert replay._key_value(p)[1][0] == (1, 1, 1, HardEvent.M_MTE1)


def test_the_maker_of_a_dict_of_sets_makes_new_sets_equal_to_the_thawed_ones():
    event_ids = {HardEvent.M_MTE1: {0, 1, 2}, HardEvent.MTE2_MTE1: set(), HardEvent.MTE1_M: {1}}
    frozen = replay._NO_WALK.freeze(event_ids, True)
    make = replay._maker(frozen)
    first, second = make([], None, {}), make([], None, {})
    assert first == event_ids == replay._thaw(frozen, [], None, {}) and first is not second
    assert all(type(v) is set for v in first.values())
    assert not any(a is b for a, b in zip(first.values(), second.values()))  # a hit's sets are its own
