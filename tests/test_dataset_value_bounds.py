"""Dataset loaders refuse nan and values no phone sensor gives, naming the file and line (issue 25).

Each case copies a real recording from the shared data into ``tmp_path``, damages one value of one
line, and loads the copy: the error names the copy and that line, as the log readers do, with the
readers' own limits (1000 m/s², 100 rad/s, 300–1100 hPa).
"""
from __future__ import annotations

import gzip
import shutil

import pytest

from stairsense.stream import load_geotec, load_ipin, load_mobifall, load_oxford, load_uci_hapt, load_weda

pytestmark = pytest.mark.realdata


def _damage(src, dst, line: int, field: int, value: str, sep=","):
    """Copy ``src`` to ``dst`` (gzip or not, like ``dst``) with field ``field`` of file line ``line`` set to ``value``."""
    opener = gzip.open if str(src).endswith(".gz") else open
    with opener(src, "rt") as fh:
        lines = fh.read().split("\n")
    cells = lines[line - 1].split(sep)
    cells[field] = value
    lines[line - 1] = sep.join(cells)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with (gzip.open if str(dst).endswith(".gz") else open)(dst, "wt") as fh:
        fh.write("\n".join(lines))
    return dst


def _uci(data, tmp, value):
    raw = data / "uci-hapt" / "RawData"
    out = tmp / "RawData"
    out.mkdir()
    shutil.copy(raw / "labels.txt", out / "labels.txt")
    shutil.copy(raw / "gyro_exp01_user01.txt", out / "gyro_exp01_user01.txt")
    path = _damage(raw / "acc_exp01_user01.txt", out / "acc_exp01_user01.txt", 100, 1, value, sep=" ")
    return lambda: load_uci_hapt(out), path, 100


def _uci_gyro(data, tmp, value):
    raw = data / "uci-hapt" / "RawData"
    out = tmp / "RawData"
    out.mkdir()
    shutil.copy(raw / "labels.txt", out / "labels.txt")
    shutil.copy(raw / "acc_exp01_user01.txt", out / "acc_exp01_user01.txt")
    path = _damage(raw / "gyro_exp01_user01.txt", out / "gyro_exp01_user01.txt", 7, 0, value, sep=" ")
    return lambda: load_uci_hapt(out), path, 7


def _oxford(data, tmp, value):
    src = data / "oxford-stepcounter" / "optimisation" / "data" / "Nexus_Jamie_Hard_InHand_1"
    out = tmp / "Nexus_Jamie_Hard_InHand_1"
    out.mkdir()
    shutil.copy(src / "stepcounter.csv", out / "stepcounter.csv")
    path = _damage(src / "accelerometer.csv", out / "accelerometer.csv", 50, 3, value)
    return lambda: load_oxford(out), path, 50


def _mobifall(data, tmp, value):
    src = data / "mobifall-pocket" / "sub2" / "ADL" / "STU" / "STU_acc_2_1.txt.gz"
    with gzip.open(src, "rt") as fh:
        line = fh.read().split("\n").index("@DATA") + 10
    path = _damage(src, tmp / "STU_acc_2_1.txt.gz", line, 2, " " + value)
    return lambda: load_mobifall(path), path, line


def _mobifall_gyro(data, tmp, value):
    folder = data / "mobifall-pocket" / "sub2" / "ADL" / "STU"
    shutil.copy(folder / "STU_acc_2_1.txt.gz", tmp / "STU_acc_2_1.txt.gz")
    with gzip.open(folder / "STU_gyro_2_1.txt.gz", "rt") as fh:
        line = fh.read().split("\n").index("@DATA") + 3
    path = _damage(folder / "STU_gyro_2_1.txt.gz", tmp / "STU_gyro_2_1.txt.gz", line, 1, " " + value)
    return lambda: load_mobifall(tmp / "STU_acc_2_1.txt.gz"), path, line


def _weda(data, tmp, value):
    src = data / "weda-wrist" / "D03"
    out = tmp / "D03"
    out.mkdir()
    shutil.copy(src / "U03_R01_gyro.csv.gz", out / "U03_R01_gyro.csv.gz")
    path = _damage(src / "U03_R01_accel.csv.gz", out / "U03_R01_accel.csv.gz", 30, 2, value)
    return lambda: load_weda(path), path, 30


def _geotec(data, tmp, value):
    path = _damage(data / "geotec-pocket-wrist" / "DATA" / "s01" / "s01_01_sw.csv.gz", tmp / "s01_01_sw.csv.gz",
                   40, 4, value)  # a gyroscope column
    return lambda: load_geotec(path), path, 40


def _ipin(data, tmp, value, kind="ACCE", field=4):
    name = "IPIN2023_T3_TrainingTrial02_repetition01.txt.gz"
    src = data / "ipin-hand-baro" / name
    with gzip.open(src, "rt") as fh:
        line = next(i for i, text in enumerate(fh.read().split("\n"), start=1) if text.startswith(kind))
    path = _damage(src, tmp / name, line, field, value, sep=";")
    return lambda: load_ipin(path), path, line


def _ipin_pressure(data, tmp, value):
    return _ipin(data, tmp, "101325" if value == "1e5" else value, "PRES", 3)


LOADERS = [_uci, _uci_gyro, _oxford, _mobifall, _mobifall_gyro, _weda, _geotec, _ipin, _ipin_pressure]


@pytest.mark.parametrize("case", LOADERS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("value, match", [("1e5", "is beyond any phone sensor"), ("nan", "non-finite|is empty")])
def test_a_damaged_value_is_refused_with_file_and_line(data_dir, tmp_path, case, value, match):
    load, path, line = case(data_dir, tmp_path, value)
    with pytest.raises(ValueError, match=match) as info:
        load()
    assert str(info.value).startswith(f"{path}:{line}: "), str(info.value)
    assert "re-download" in str(info.value)


def test_the_loaders_and_the_readers_share_one_definition_of_impossible():
    from stairsense.stream import _log
    from stairsense.stream.io import _csv_format, _csv_parse, _import

    assert _csv_parse.PHYSICAL_LIMITS is _import.PHYSICAL_LIMITS is _log.PHYSICAL_LIMITS
    assert _csv_format.PRESSURE_RANGE_HPA is _log.PRESSURE_RANGE_HPA
