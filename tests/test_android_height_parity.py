"""The Java HeightFilter (android_stub/core) against the Python push form, row for row.

The reference is ``stairsense.stream.HeightFilter.push`` (the streaming form is the reference
semantics, DESIGN.md). Streams go to Java as raw little-endian binary (no decimal round trip) and
are run by ``HeightDriver --serve``, one JVM per module. Required: the same rows without an
estimate (NaN), heights and speeds within 1e-9 relative (the same double operations in the same
order, but ``pow`` is not correctly rounded: OpenJDK 17's ``Math.pow`` differs from glibc's in the
last bit on about 0.1 % of pressures, so real logs differ by ~1e-13 m while the simulated ones
here come out bit-identical), refusals at the same row with the same message, and the same
defaults.

Skipped only when no JDK is on PATH (the defaults check needs none).
"""
from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_height_filter import held, pressure_at, rows, streams

from stairsense.stream import PRESSURE_RANGE_HPA, HeightFilter, PipelineConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "android_stub" / "tools"))
import javacore  # noqa: E402

ROW = np.dtype([("t", "<i8"), ("vertical", "<f8"), ("pressure", "<f8")])
_JAVA_SOURCE = (Path(__file__).resolve().parents[1]
                / "android_stub/core/src/main/java/org/stairsense/core/HeightFilter.java")


class HeightJava:
    """One long-lived ``HeightDriver --serve`` JVM."""

    def __init__(self, classes: Path):
        self._process = subprocess.Popen(["java", "-cp", str(classes), "org.stairsense.tools.HeightDriver", "--serve"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, folder: Path, t, vertical, pressure, params: dict):
        """``(outputs (rows pushed, 2), refusal)``; refusal is ``(row, message)`` or None."""
        data = np.zeros(len(t), dtype=ROW)
        data["t"], data["vertical"], data["pressure"] = t, vertical, pressure
        data.tofile(folder / "in.bin")
        numbers = [repr(float(params[name])) for name in
                   ("acceleration_noise", "pressure_noise_hpa", "pressure_rate_hz", "max_gap_s")]
        self._process.stdin.write("\t".join([str(folder / "in.bin"), str(folder / "out.bin"), *numbers]) + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline().strip()
        kind, _, rest = answer.partition(" ")
        if kind not in ("done", "refused"):
            raise RuntimeError(f"HeightDriver failed: {answer!r}")
        out = np.fromfile(folder / "out.bin", dtype="<f8").reshape(-1, 2)
        if kind == "refused":
            row, _, message = rest.partition(" ")
            return out, (int(row), message)
        return out, None

    def close(self):
        self._process.stdin.close()
        self._process.wait(timeout=30)
        self._process.stdout.close()  # else its collection warns inside whichever test runs last


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    reason = javacore.java_missing()
    if reason:
        pytest.skip(reason)
    core = HeightJava(javacore.compile_core(tmp_path_factory.mktemp("javacore")))
    yield core
    core.close()


def defaults() -> dict:
    return {name: p.default for name, p in inspect.signature(HeightFilter).parameters.items()}


def python_push(t, vertical, pressure, params):
    """The reference: ``push`` on every row, as a phone's rows arrive; stops at a refusal."""
    f = HeightFilter(**params)
    out = []
    for i, row in enumerate(zip(t.tolist(), vertical.tolist(), pressure.tolist())):
        try:
            out.append(f.push(*row))
        except ValueError as exc:
            return np.array(out, dtype=float).reshape(-1, 2), (i, str(exc))
    return np.array(out, dtype=float).reshape(-1, 2), None


def assert_parity(got, want):
    (out_java, refused_java), (out_python, refused_python) = got, want
    assert refused_java == refused_python
    assert out_java.shape == out_python.shape
    np.testing.assert_array_equal(np.isnan(out_java), np.isnan(out_python))
    np.testing.assert_allclose(out_java, out_python, rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(case=streams())
def test_generated_streams(java, tmp_path, case):
    """Irregular rows, gaps on both sides of max_gap_s, held or interpolated pressure, dropouts."""
    t, vertical, pressure, params, _ = case
    assert_parity(java.run(tmp_path, t, vertical, pressure, params), python_push(t, vertical, pressure, params))


def test_an_hour_of_stairs(java, tmp_path):
    """One hour at 50 Hz: a floor every minute up and down, a quantised 10 Hz barometer, the
    defaults. Prints how many values are bit-identical (all but ``pow``'s last bits)."""
    rng = np.random.default_rng(11)
    t = rows(3600, 50)
    s = t / 1e9
    speed = 0.3 * np.sign(np.sin(2 * np.pi * s / 120)) * (s % 60 < 10)
    truth = np.cumsum(speed) / 50
    vertical = np.gradient(speed, 1 / 50) + rng.normal(0, 1.0, t.size)
    reading_t = rows(3600, 10)
    readings = np.round((pressure_at(np.interp(reading_t, t, truth)) + rng.normal(0, 0.03, reading_t.size)) / 0.01)
    pressure = held(t, reading_t, readings * 0.01)
    got = java.run(tmp_path, t, vertical, pressure, defaults())
    want = python_push(t, vertical, pressure, defaults())
    assert_parity(got, want)
    same = np.mean(got[0] == want[0])
    print(f"bit-identical: {same:.6f} of {got[0].size} values")
    assert np.ptp(want[0][:, 0]) > 2.5  # the stream does climb


@pytest.mark.realdata
def test_a_real_barometer_through_the_front_end(java, tmp_path, data_dir):
    """An IPIN 2023 hand-held walk (real barometer, interpolated onto the accelerometer): the front
    end's vertical and the log's pressure, through both filters."""
    from stairsense.stream import ipin_recordings, load_ipin, run_front_end

    log = load_ipin(ipin_recordings(data_dir / "ipin-hand-baro")[0])
    std = run_front_end(log, PipelineConfig(orientation="vertical")).standardized
    pressure = log.pressure[std.first:]
    params = {**defaults(), "pressure_rate_hz": 10.0}
    assert_parity(java.run(tmp_path, std.t_ns, std.vertical, pressure, params),
                  python_push(std.t_ns, std.vertical, pressure, params))


@pytest.mark.parametrize(("index", "change"), [
    (30, {"t": -1}),                  # a time that does not increase
    (40, {"pressure": 101325.0}),     # pascals, not hPa
    (50, {"vertical": np.nan}),       # no acceleration
])
def test_both_refuse_the_same_row(java, tmp_path, index, change):
    t = rows(2, 50)
    vertical = np.zeros(t.size)
    pressure = np.full(t.size, 1000.0)
    if "t" in change:
        t[index] = t[index - 1]
    if "pressure" in change:
        pressure[index] = change["pressure"]
    if "vertical" in change:
        vertical[index] = change["vertical"]
    got = java.run(tmp_path, t, vertical, pressure, defaults())
    want = python_push(t, vertical, pressure, defaults())
    assert got[1][0] == want[1][0] == index
    if "vertical" in change:  # Java spells NaN "NaN", Python "nan": the rest of the message is the same
        got = (got[0], (index, got[1][1].replace("NaN", "nan")))
    assert_parity(got, want)


def _java_constant(name: str) -> float:
    match = re.search(rf"\b{name}\s*=\s*([0-9.eE+-]+);", _JAVA_SOURCE.read_text())
    assert match, f"{name} not found in {_JAVA_SOURCE}"
    return float(match.group(1))


def test_java_defaults_and_constants_match_python():
    """The Java copies of the defaults, the pressure range and the atmosphere (a drift would make
    the phone run another filter than the one trained and tested in Python)."""
    from stairsense.stream import _height

    python = defaults()
    assert python["max_gap_s"] == PipelineConfig.max_gap_s
    for name in python:
        assert _java_constant(f"DEFAULT_{name.upper()}") == python[name], name
    assert (_java_constant("MIN_PRESSURE_HPA"), _java_constant("MAX_PRESSURE_HPA")) == PRESSURE_RANGE_HPA
    for java_name, python_value in (("SCALE_M", _height._SCALE_M), ("EXPONENT", _height._EXPONENT),
                                    ("SEA_LEVEL_HPA", _height._SEA_LEVEL_HPA),
                                    ("INITIAL_SPEED_SD", _height._INITIAL_SPEED_SD)):
        assert _java_constant(java_name) == python_value, java_name
