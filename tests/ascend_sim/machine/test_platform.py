import json

import pytest
from pydantic import ValidationError

from ascend_sim import PRESETS, Platform, get_platform


@pytest.mark.parametrize("name,cores,mhz,l0c", [("Ascend910B1", 24, 1850, 128), ("Ascend910B2", 24, 1800, 128),
                                               ("Ascend910B3", 20, 1800, 128), ("Ascend910B4", 20, 1500, 128),
                                               ("Ascend910_9391", 24, 1850, 128),
                                               ("Ascend950PR_9599", 36, 1800, 256)])
def test_presets_follow_the_ini_tables(name, cores, mhz, l0c):
    p = get_platform(name)
    assert (p.aic_cores, p.aiv_cores, p.clock_mhz, p.L0C) == (cores, 2 * cores, mhz, l0c * 1024)
    assert p.L0A == p.L0B == 64 * 1024 and p.L1 == 512 * 1024


def test_a2_and_950_differ_where_the_reference_says():
    a2, pr = get_platform("Ascend910B2"), get_platform("Ascend950PR_9599")
    assert (a2.cube.float32, a2.cube.hf32, a2.hf32_mantissa_bits, a2.l0a_layout) == (4, 8, 11, "ZZ")
    assert (pr.cube.float32, pr.hf32_mantissa_bits, pr.l0a_layout, pr.rates.l1_to_l0b) == (1, 10, "NZ", 256)
    assert a2.usable_L1 == 512 * 1024 - 128 and a2.capacity("L1") == 512 * 1024
    assert "AtlasA3" in PRESETS


def test_overrides_make_a_hypothetical_platform():
    p = get_platform("Ascend910B2").with_overrides(L1=256 * 1024, rates={"l1_to_l0a": 512})
    assert p.L1 == 256 * 1024 and p.rates.l1_to_l0a == 512 and p.rates.l1_to_l0b == 128
    assert get_platform("Ascend910B2").L1 == 512 * 1024  # presets are untouched


def test_json_round_trip(tmp_path):
    p = get_platform("Ascend910B4").with_overrides(name="mine", aic_cores=8)
    path = tmp_path / "mine.json"
    p.to_json(path)
    assert Platform.from_json(path) == p
    assert Platform.from_json(p.to_json()) == p
    assert json.loads(p.to_json())["aic_cores"] == 8


@pytest.mark.parametrize("changes,word", [({"L1": 1000}, "L1"), ({"aic_cores": 0}, "aic_cores"),
                                           ({"clock_mhz": -1}, "clock_mhz"), ({"bogus": 1}, "bogus")])
def test_bad_platform_fields_are_named(changes, word):
    with pytest.raises((ValueError, ValidationError), match=word):
        get_platform("Ascend910B2").with_overrides(**changes)


def test_unknown_preset_lists_the_choices():
    with pytest.raises(ValueError, match="Ascend910B2"):
        get_platform("Ascend999")


def test_overrides_without_a_name_are_not_reported_as_the_preset():
    b2 = get_platform("Ascend910B2")
    changed = b2.with_overrides(aic_cores=8)
    assert changed.name == "Ascend910B2+overrides"
    assert changed.with_overrides(L1=256 * 1024).name == "Ascend910B2+overrides"  # one suffix, not two
    assert b2.with_overrides(aic_cores=24).name == "Ascend910B2"  # nothing changed
    assert b2.with_overrides(name="lab_chip", aic_cores=8).name == "lab_chip"


def test_from_json_keeps_the_json_name_unless_it_claims_a_preset_it_is_not(tmp_path):
    b2 = get_platform("Ascend910B2")
    edited = json.loads(b2.to_json())
    edited["aic_cores"] = 8  # a dumped preset, edited by hand, still named Ascend910B2
    assert Platform.from_json(json.dumps(edited)).name == "Ascend910B2+overrides"
    assert Platform.from_json(b2.to_json()) == b2
    edited["name"] = "lab_chip"
    path = tmp_path / "lab_chip.json"
    path.write_text(json.dumps(edited))
    assert Platform.from_json(path).name == "lab_chip"


def test_reports_and_tilings_carry_the_platform_name(tmp_path):
    import numpy as np

    from kernels import conv3d_backprop_input_v2_run
    edited = json.loads(get_platform("Ascend910B2").to_json())
    edited.update(name="lab_chip", aic_cores=4)
    path = tmp_path / "lab_chip.json"
    path.write_text(json.dumps(edited))
    weight, dy = np.zeros((16, 16, 1, 1, 1), np.float16), np.zeros((1, 16, 2, 8, 8), np.float16)
    for platform, name in ((Platform.from_json(path), "lab_chip"),
                           (get_platform("Ascend910B3").with_overrides(aic_cores=4), "Ascend910B3+overrides")):
        run = conv3d_backprop_input_v2_run((1, 16, 2, 8, 8), weight, dy, strides=(1,) * 5, pads=(0,) * 6,
                                           data_format="NCDHW", platform=platform, route="v2", execute=False)
        assert run.report.summary().startswith(f"{name}: ")
        assert run.report.to_dict()["platform"] == name
        assert run.tiling.platform.name == name and f"fits {name}" in str(run.tiling.check())
