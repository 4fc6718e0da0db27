"""Energy model: the barometer in every device profile, priced from a cited source or refused on a
phone without one. Oracles are the profiles' own numbers written out by hand."""
import json
from importlib import resources

import pytest

from stairsense.cli import main
from stairsense.export.energy import load_profile, profile_names


def _raw(name):
    return json.loads(resources.files("stairsense.export.energy").joinpath("profiles", f"{name}.json").read_text())


def _write(tmp_path, data, name="phone.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# --- the barometer in the profiles ------------------------------------------------------------------
def test_every_shipped_profile_prices_or_refuses_the_barometer_with_a_source():
    for name in profile_names():
        profile = load_profile(name)
        assert ("barometer" in profile.sensors) != ("barometer" in profile.absent), name
        why = profile.sensors["barometer"].source if "barometer" in profile.sensors else profile.absent["barometer"]
        assert why.strip(), name
    assert "barometer" in load_profile("nexus-2012").sensors and "barometer" in load_profile("pixel2-2017").sensors
    assert load_profile("nexus-one-2010").absent.keys() == {"barometer"}


def test_cli_profiles_show_the_barometer_or_its_absence(capsys):
    assert main(["energy", "profiles", "--json"]) == 0
    for profile in json.loads(capsys.readouterr().out):
        barometer = profile["sensors"].get("barometer")
        assert (barometer is None) == ("barometer" in profile["absent_sensors"]), profile["name"]
        assert (barometer["source"] if barometer else profile["absent_sensors"]["barometer"]).strip()
    assert main(["energy", "profiles"]) == 0
    listing = capsys.readouterr().out
    assert "barometer 0.247 mA@10Hz" in listing and "no barometer" in listing


@pytest.mark.parametrize("name, per_hz_ma", [("nexus-2012", 0.005), ("pixel2-2017", 0.0247)])
def test_barometer_current_scales_with_its_rate(name, per_hz_ma):
    """The datasheets give an average current proportional to the sample rate (5 µA per sample/s
    for the BMP180 in standard mode; 24.7 µA per Hz for the BMP280 at ultra high resolution)."""
    barometer = load_profile(name).sensors["barometer"]
    for hz in (1.0, 2.5, 10.0, 25.0):
        assert barometer.at(hz) == pytest.approx(per_hz_ma * hz, rel=2e-3), hz


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["sensors"].update(barometer={"absent": " "}), "'sensors.barometer.absent' must say where"),
    (lambda d: d["sensors"]["barometer"].update(absent="none"), "must hold exactly 'current_ma' (or 'absent'"),
    (lambda d: d["sensors"].pop("barometer"), "missing key 'sensors.barometer'; a sensor the phone does not have is"),
])
def test_bad_barometer_entry_gets_one_line(tmp_path, mutate, message):
    data = _raw("nexus-2012")
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ValueError) as err:
        load_profile(path)
    assert message in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_virtual_sensor_that_needs_an_absent_sensor_is_refused(tmp_path):
    data = _raw("nexus-2012")
    data["sensors"]["gyroscope"] = {"absent": "a phone without a gyroscope"}
    profile = load_profile(_write(tmp_path, data))
    assert profile.hardware_for(["accelerometer"]) == {"accelerometer"}
    with pytest.raises(ValueError, match="has no gyroscope"):
        profile.hardware_for(["accelerometer", "rotation_vector"])


def test_a_profile_without_a_barometer_says_so_in_one_line():
    nexus_one = load_profile("nexus-one-2010")
    assert nexus_one.hardware_for(["accelerometer"]) == {"accelerometer"}
    with pytest.raises(ValueError) as err:
        nexus_one.hardware_for(["accelerometer", "barometer"])
    text = str(err.value)
    assert "nexus-one-2010" in text and "has no barometer" in text and "\n" not in text
