"""The CLI as real users meet it (issue 10, "What must be true").

* Every subcommand over a table of bad inputs: one stderr line naming the problem and the fix, exit
  status 2, no traceback, and no file created or changed. Each line's advice is checked against the
  parser: every ``--flag`` it names exists on that subcommand and every ``--repair NAME`` is a
  choice there, so the fix exists where the user is.
* The repairs real phone logs need work from the command line and are reported.
* Model and configuration follow the model: ``replay --model`` needs no repeated flags, and a log
  that cannot give the orientation method the model was trained with is refused.
"""
import argparse
import gzip
import hashlib
import json
import os
import re
from dataclasses import replace

import numpy as np
import pytest

from stairsense.cli import build_parser, main
from stairsense import PipelineConfig
from stairsense.stream import steps_path, write_log

# --- the inputs ----------------------------------------------------------------------------------

HEADER = "t_ns,ax,ay,az"


def rows(n=400, rate=50.0, g=9.8, seed=0):
    """Lines of a plain accelerometer log: a 1.8 Hz vertical bounce (walking-like) at ``rate``."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * int(1e9 / rate)
    z = g + 2.0 * np.sin(2 * np.pi * 1.8 * t / 1e9) + rng.normal(0, 0.05, n)
    return [f"{ti},{rng.normal(0, 0.05):.4f},{rng.normal(0, 0.05):.4f},{zi:.4f}" for ti, zi in zip(t, z)]


def text(lines, header=HEADER):
    return "\n".join([header, *lines]) + "\n"


GOOD = rows()
SIM_STEPS = steps_path("sim.csv.gz").name  # the truth sidecar of the shared simulated log


def edited(i, new):
    lines = list(GOOD)
    lines[i] = new
    return text(lines)


def t_of(i):
    return int(GOOD[i].split(",")[0])


def with_gap(i, gap_ns):
    """The good log with every time from line ``i`` on shifted by ``gap_ns``."""
    lines = [ln if k < i else f"{int(ln.split(',')[0]) + gap_ns},{ln.split(',', 1)[1]}" for k, ln in enumerate(GOOD)]
    return text(lines)


def irregular():
    """Intervals alternating 5 and 150 ms: timing that never settles at one rate."""
    t = np.cumsum(np.tile([5, 150], 200)) * 1_000_000
    return text([f"{ti},{ln.split(',', 1)[1]}" for ti, ln in zip(t, GOOD)])


BAD_FILES = {  # name: (file name, content as str or bytes)
    "empty": ("x.csv", ""),
    "header_only": ("x.csv", HEADER + "\n"),
    "unknown_column": ("x.csv", text(GOOD, "t_ns,ax,ay,az,speed")),
    "missing_column": ("x.csv", text([ln.rsplit(",", 1)[0] for ln in GOOD], "t_ns,ax,ay")),
    "repeated_column": ("x.csv", text(GOOD, "t_ns,ax,ax,az")),
    "meta_not_json": ("x.csv", "# meta: {oops\n" + text(GOOD)),
    "meta_not_object": ("x.csv", "# meta: [1, 2]\n" + text(GOOD)),
    "not_a_number": ("x.csv", edited(10, f"{t_of(10)},0.1,abc,9.8")),
    "short_line": ("x.csv", edited(10, f"{t_of(10)},0.1")),
    "blank_line": ("x.csv", edited(10, "")),
    "nan": ("x.csv", edited(10, f"{t_of(10)},nan,0,9.8")),
    "impossible_value": ("x.csv", edited(10, f"{t_of(10)},0.1,0,1e17")),  # beyond any phone accelerometer
    "huge_values": ("x.csv", text([f"{ln.split(',')[0]},1e308,-1e308,1e308" if 100 <= k < 200 else ln
                                   for k, ln in enumerate(GOOD)])),
    "repeated_timestamp": ("x.csv", edited(10, f"{t_of(9)},0,0,9.8")),
    "time_goes_back": ("x.csv", edited(10, f"{t_of(3)},0,0,9.8")),
    "gap": ("x.csv", with_gap(200, 1_000_000_000)),
    "bad_label": ("x.csv", text([ln + ",99" for ln in GOOD], HEADER + ",label")),
    "values_in_g": ("x.csv", text(rows(g=1.0))),
    "gz_name_plain_content": ("x.csv.gz", text(GOOD)),
    "truncated_gzip": ("x.csv.gz", gzip.compress(text(GOOD).encode())[:300]),
    "binary": ("x.csv", bytes(range(256)) * 4),
    "txt_name": ("x.txt", text(GOOD)),
}


# Another app's export, in g with ms timestamps, for `stairsense import`.
FOREIGN = ["timestamp,accX,accY,accZ"] + [f"{i * 20},0.01,0.02,{1 + 0.2 * np.sin(i / 5):.4f}" for i in range(300)]
FOREIGN_MAP = "t=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A simulated log with every stream, a model trained on it, its accelerometer-only twin, and
    an exported model's broken copy."""
    d = tmp_path_factory.mktemp("shared")
    sim = d / "sim.csv.gz"
    assert main(["simulate", "--minutes", "2", "--seed", "3", "--out", str(sim)]) == 0
    model = d / "m.model"
    # Trained at 25 Hz: replaying it must not need --rate repeated.
    assert main(["train", str(sim), "--out", str(model), "--k", "10", "--rate", "25"]) == 0
    from stairsense.stream import read_log

    log = read_log(sim)
    write_log(replace(log, gyro=None, rotvec=None, linacc=None), d / "acc_only.csv.gz")
    write_log(replace(log, label=None, steps=None), d / "unlabelled.csv.gz")
    (d / "broken.onnx").write_bytes(b"\x08\x07" + b"\x00" * 200)
    (d / "truncated.model").write_bytes(model.read_bytes()[:2000])
    return d


# Each case: argv, with {d} the case's folder (holding the case's file as {f}) and {s} the shared one.
CASES = {
    # replay: files
    **{f"replay_{name}": (["replay", "{f}"], name) for name in BAD_FILES},
    "replay_missing_file": (["replay", "{d}/nope.csv"], None),
    "replay_folder": (["replay", "{d}"], None),
    "replay_gap_beyond_smoothing": (["replay", "{f}", "--config", "{d}/smooth200.json"], "gap_220ms"),
    "replay_trim_startup_irregular": (["replay", "{f}", "--repair", "trim-startup"], "irregular"),
    "replay_units_g_on_ms2": (["replay", "{s}/sim.csv.gz", "--units", "g"], None),
    # replay: flags and configurations
    "replay_unknown_repair": (["replay", "{s}/sim.csv.gz", "--repair", "bogus"], None),
    "replay_negative_rate": (["replay", "{s}/sim.csv.gz", "--rate", "-5"], None),
    "replay_rate_not_number": (["replay", "{s}/sim.csv.gz", "--rate", "fast"], None),
    "replay_zero_max_gap": (["replay", "{s}/sim.csv.gz", "--max-gap", "0"], None),
    "replay_unknown_flag": (["replay", "{s}/sim.csv.gz", "--frobnicate"], None),
    "replay_orientation_missing_stream": (["replay", "{s}/acc_only.csv.gz", "--orientation", "rotvec"], None),
    "replay_plot_seconds_zero": (["replay", "{s}/sim.csv.gz", "--plot-seconds", "0"], None),
    "replay_plot_missing_folder": (["replay", "{s}/sim.csv.gz", "--plot", "{d}/no/p.png"], None),
    "replay_config_missing": (["replay", "{s}/sim.csv.gz", "--config", "{d}/none.json"], None),
    "replay_config_not_json": (["replay", "{s}/sim.csv.gz", "--config", "{d}/bad.json"], None),
    "replay_config_unknown_key": (["replay", "{s}/sim.csv.gz", "--config", "{d}/unknown.json"], None),
    "replay_config_invalid_value": (["replay", "{s}/sim.csv.gz", "--config", "{d}/steps.json"], None),
    # replay: models
    "replay_model_missing": (["replay", "{s}/sim.csv.gz", "--model", "{d}/none.model"], None),
    "replay_model_not_a_model": (["replay", "{s}/sim.csv.gz", "--model", "{s}/sim.csv.gz"], None),
    "replay_model_truncated": (["replay", "{s}/sim.csv.gz", "--model", "{s}/truncated.model"], None),
    "replay_model_other_rate": (["replay", "{s}/sim.csv.gz", "--model", "{s}/m.model", "--rate", "30"], None),
    "replay_model_orientation_unavailable": (["replay", "{s}/acc_only.csv.gz", "--model", "{s}/m.model"], None),
    "replay_model_broken_onnx": (["replay", "{s}/sim.csv.gz", "--model", "{s}/broken.onnx"], None),
    # simulate
    "simulate_negative_minutes": (["simulate", "--minutes", "-1", "--out", "{d}/x.csv"], None),
    "simulate_zero_rate": (["simulate", "--rate", "0", "--out", "{d}/x.csv"], None),
    "simulate_low_rate": (["simulate", "--rate", "2", "--minutes", "0.1", "--out", "{d}/x.csv"], None),
    "simulate_missing_folder": (["simulate", "--minutes", "0.1", "--out", "{d}/no/x.csv"], None),
    "simulate_bad_suffix": (["simulate", "--minutes", "0.1", "--out", "{d}/x.txt"], None),
    "simulate_no_out": (["simulate", "--minutes", "0.1"], None),
    # train
    "train_unlabelled": (["train", "{s}/unlabelled.csv.gz", "--out", "{d}/m.model"], None),
    "train_zero_k": (["train", "{s}/sim.csv.gz", "--out", "{d}/m.model", "--k", "0"], None),
    "train_lam_above_one": (["train", "{s}/sim.csv.gz", "--out", "{d}/m.model", "--lam", "2"], None),
    "train_negative_gamma": (["train", "{s}/sim.csv.gz", "--out", "{d}/m.model", "--gamma", "-1"], None),
    "train_missing_file": (["train", "{d}/nope.csv", "--out", "{d}/m.model"], None),
    "train_out_missing_folder": (["train", "{s}/sim.csv.gz", "--out", "{d}/no/m.model"], None),
    "train_folder_not_uci": (["train", "{d}", "--out", "{d}/m.model"], None),
    "train_bad_log": (["train", "{f}", "--out", "{d}/m.model"], "nan"),
    # evaluate
    "evaluate_one_fold": (["evaluate", "{s}/sim.csv.gz", "--folds", "1"], None),
    "evaluate_unknown_classifier": (["evaluate", "{s}/sim.csv.gz", "--classifier", "svm"], None),
    "evaluate_unlabelled": (["evaluate", "{s}/unlabelled.csv.gz"], None),
    # export
    "export_negative_budget": (["export", "{s}/m.model", "--out", "{d}/m.onnx", "--max-kb", "-1"], None),
    "export_missing_model": (["export", "{d}/none.model", "--out", "{d}/m.onnx"], None),
    "export_log_as_model": (["export", "{s}/sim.csv.gz", "--out", "{d}/m.onnx"], None),
    "export_no_out": (["export", "{s}/m.model"], None),
    "export_out_missing_folder": (["export", "{s}/m.model", "--out", "{d}/no/m.onnx"], None),
    "export_zero_support_vectors": (["export", "{s}/m.model", "--out", "{d}/m.onnx", "--max-support-vectors", "0"],
                                    None),
    "export_inspect_not_onnx": (["export", "--inspect", "{s}/m.model"], None),
    "export_bad_validation_log": (["export", "{s}/m.model", "--out", "{d}/m.onnx", "--validation", "{f}"],
                                  "repeated_timestamp"),
    # import
    "import_no_mapping": (["import", "{f}", "--out", "{d}/o.csv.gz"], "foreign"),
    "import_map_and_map_file": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP, "--map-file",
                                 "{d}/map.toml"], "foreign"),
    "import_unknown_column": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", "t=time:ms,ax=X:g,ay=Y:g,az=Z:g"],
                              "foreign"),
    "import_bad_unit": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP.replace(":g", ":gee")],
                        "foreign"),
    "import_map_file_missing": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map-file", "{d}/none.toml"], "foreign"),
    "import_map_file_not_toml": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map-file", "{d}/bad.json"], "foreign"),
    "import_out_is_the_source": (["import", "{f}", "--out", "{f}", "--map", FOREIGN_MAP], "foreign_csv"),
    "import_out_bad_suffix": (["import", "{f}", "--out", "{d}/o.json", "--map", FOREIGN_MAP], "foreign"),
    "import_source_missing": (["import", "{d}/none.csv", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP], None),
    "import_repeated_time": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP], "foreign_repeat"),
    "import_g_as_m_s2": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP.replace(":g", "")],
                         "foreign"),
    "import_reader_only_repair": (["import", "{f}", "--out", "{d}/o.csv.gz", "--map", FOREIGN_MAP, "--repair",
                                   "split-gaps"], "foreign"),
    # no command writes over a file it reads (the steps sidecar of a log it reads included)
    "train_out_is_the_data": (["train", "{s}/sim.csv.gz", "--out", "{s}/sim.csv.gz"], None),
    "train_out_is_the_data_sidecar": (["train", "{s}/sim.csv.gz", "--out", "{s}/" + SIM_STEPS], None),
    "export_out_is_the_model": (["export", "{s}/m.model", "--out", "{s}/m.model"], None),
    "export_out_is_a_validation_log": (["export", "{s}/m.model", "--out", "{s}/unlabelled.csv.gz", "--validation",
                                        "{s}/unlabelled.csv.gz"], None),
    "replay_plot_is_the_log": (["replay", "{s}/sim.csv.gz", "--plot", "{s}/sim.csv.gz"], None),
    "replay_plot_is_the_model": (["replay", "{s}/sim.csv.gz", "--model", "{s}/m.model", "--plot", "{s}/m.model"], None),
    "energy_plot_is_the_log": (["energy", "--log", "{s}/sim.csv.gz", "--plot", "{s}/sim.csv.gz"], None),
    "energy_optimise_out_is_the_data": (["energy", "optimise", "--budget", "1%/day", "--data", "{s}/sim.csv.gz",
                                         "--out", "{s}/sim.csv.gz"], None),
    "upgrade_model_out_is_the_model": (["upgrade-model", "{s}/m.model", "--out", "{s}/m.model"], None),
    "convert_out_is_the_log": (["convert", "{s}/sim.csv.gz", "{s}/sim.csv.gz"], None),
    "convert_out_is_the_log_sidecar": (["convert", "{f}", "{d}/" + steps_path("x.csv").name], "good_log"),
    "import_out_sidecar_is_the_source": (["import", "{f}", "--out", "{d}/o.csv", "--map", FOREIGN_MAP],
                                         "foreign_as_sidecar"),
    "serve_token_file_is_the_store": (["serve", "--store", "{d}/s.db", "--admin-token-file", "{d}/s.db"], None),
    # every rate, duration and count is bounded before anything is allocated, and a log must end
    "simulate_a_billion_minutes": (["simulate", "--minutes", "1e9", "--out", "{d}/x.csv"], None),
    "simulate_seed_beyond_generators": (["simulate", "--seed", str(2**32), "--out", "{d}/x.csv"], None),
    "replay_rate_a_billion_hz": (["replay", "{s}/sim.csv.gz", "--rate", "1e9"], None),
    "replay_config_rate_a_billion_hz": (["replay", "{s}/sim.csv.gz", "--config", "{d}/fast.json"], None),
    "replay_plot_seconds_a_trillion": (["replay", "{s}/sim.csv.gz", "--plot", "{d}/p.png", "--plot-seconds", "1e12"],
                                       None),
    "replay_dev_zero": (["replay", "/dev/zero"], None),
    "replay_config_dev_zero": (["replay", "{s}/sim.csv.gz", "--config", "/dev/zero"], None),
    "train_negative_landmarks": (["train", "{s}/sim.csv.gz", "--out", "{d}/m.model", "--landmarks", "-5"], None),
    "train_one_landmark": (["train", "{s}/sim.csv.gz", "--out", "{d}/m.model", "--landmarks", "1"], None),
    "evaluate_a_billion_folds": (["evaluate", "{s}/sim.csv.gz", "--protocol", "nested-cv", "--folds", "1e9"], None),
    "evaluate_negative_seed": (["evaluate", "{s}/sim.csv.gz", "--protocol", "nested-cv", "--seed", "-1"], None),
    "export_budget_beyond_floats": (["export", "{s}/m.model", "--out", "{d}/m.onnx", "--max-kb", "1e308"], None),
    "demo_a_billion_people": (["demo", "--people", "1000000000", "--out", "{d}/demo"], None),
    "energy_rate_a_billion_hz": (["energy", "--rate", "1e9"], None),
    "energy_speed_ratio_negative": (["energy", "--speed-ratio", "-1"], None),
    "energy_optimise_no_jobs": (["energy", "optimise", "--budget", "1%/day", "--data", "{s}/sim.csv.gz", "--n-jobs",
                                 "0"], None),
    "serve_a_hundred_thousand_workers": (["serve", "--store", "{d}/s.db", "--workers", "100000"], None),
    "serve_port_beyond_tcp": (["serve", "--store", "{d}/s.db", "--port", "70000"], None),
    # messages name the path and the fix, never a temporary file or an errno alone
    "convert_out_missing_folder": (["convert", "{s}/sim.csv.gz", "{d}/no/x.parquet"], None),
    "simulate_sidecar_is_a_folder": (["simulate", "--minutes", "0.1", "--out", "{d}/side.csv"], None),
    "convert_out_sidecar_is_a_folder": (["convert", "{s}/sim.csv.gz", "{d}/side.csv"], None),
    "replay_sidecar_is_a_folder": (["replay", "{f}"], "side_log"),
    # demo and the command itself
    "demo_no_people": (["demo", "--people", "0", "--out", "{d}/demo"], None),
    "demo_out_is_a_file": (["demo", "--people", "1", "--minutes", "0.5", "--out", "{d}/file"], None),
    "no_command": ([], None),
    "unknown_command": (["fly"], None),
}

EXTRA_FILES = {
    "good_log": ("x.csv", text(GOOD)),
    "side_log": ("side.csv", text(GOOD)),  # its sidecar's name is a folder in every case folder
    "foreign_as_sidecar": (steps_path("o.csv").name, "\n".join(FOREIGN) + "\n"),
    "foreign": ("export.txt", "\n".join(FOREIGN) + "\n"),
    "foreign_csv": ("export.csv", "\n".join(FOREIGN) + "\n"),
    "foreign_repeat": ("export.txt", "\n".join(FOREIGN[:50] + [FOREIGN[49]] + FOREIGN[50:]) + "\n"),
    "irregular": ("x.csv", irregular()),
    "gap_220ms": ("x.csv", with_gap(200, 200_000_000)),  # a 0.22 s step: within max_gap_s, beyond 200 ms smoothing
    **BAD_FILES,
}


# What the line must say, for cases where a generic line would not do ({d}: the case's folder).
MESSAGES = {
    "convert_out_missing_folder": "OUT {d}/no/x.parquet: folder {d}/no does not exist; create it first",
    "simulate_sidecar_is_a_folder": "side.csv.steps.csv of --out {d}/side.csv: is a folder",
    "convert_out_sidecar_is_a_folder": "side.csv.steps.csv of OUT {d}/side.csv: is a folder",
    "replay_sidecar_is_a_folder": "side.csv.steps.csv: is a folder, not the steps sidecar of side.csv; rename or remove it",
    "train_out_is_the_data": "--out {s}/sim.csv.gz would overwrite DATA {s}/sim.csv.gz",
    "export_out_is_the_model": "--out {s}/m.model would overwrite MODEL {s}/m.model",
    "energy_plot_is_the_log": "--plot {s}/sim.csv.gz would overwrite --log {s}/sim.csv.gz",
    "replay_impossible_value": "x.csv:12: az = 1e+17 m/s² is beyond any phone sensor",
    "replay_huge_values": "x.csv:102: ax = 1e+308 m/s² is beyond any phone sensor",
    "replay_dev_zero": "/dev/zero: is not a regular file",
    "train_negative_landmarks": "argument --landmarks: expected 0 (exact KOMD, every support vector) or a budget",
    "replay_rate_a_billion_hz": "argument --rate: expected a number > 0 and <= 1000 Hz",
    "simulate_a_billion_minutes": "argument --minutes: expected a number > 0 and <= 1440",
}


def _case_folder(d, file_case):
    (d / "bad.json").write_text("{rate_hz: 30")
    (d / "unknown.json").write_text(json.dumps({"rate": 30}))
    (d / "steps.json").write_text(json.dumps({"min_step_s": 3.0}))
    (d / "smooth200.json").write_text(json.dumps({"smooth_ms": 200}))
    (d / "fast.json").write_text(json.dumps({"rate_hz": 1e9}))
    (d / steps_path("side.csv").name).mkdir()
    (d / "file").write_text("not a folder")
    if file_case is None:
        return None
    name, content = EXTRA_FILES[file_case]
    path = d / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _snapshot(*folders):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for folder in folders for p in sorted(folder.rglob("*"))}


def _flags_of(parser: argparse.ArgumentParser, command: str | None, action: str | None = None):
    """Option strings and ``--repair`` choices of ``command``'s parser (the top parser for None), or of its
    ``action``'s when ``action`` is one (``stairsense energy optimise``)."""
    for name in (command, action):
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if name is None or sub is None or name not in sub.choices:
            break
        parser = sub.choices[name]
    repair = parser._option_string_actions.get("--repair")
    return set(parser._option_string_actions), set(repair.choices) if repair else set()


def test_table_has_at_least_40_cases():
    assert len(CASES) >= 40
    commands = {argv[0] for argv, _ in CASES.values() if argv}
    assert commands >= {"simulate", "replay", "train", "evaluate", "export", "demo", "import"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, shared, tmp_path, monkeypatch, capsys):
    argv, file_case = CASES[case]
    d = tmp_path / "case"
    d.mkdir()
    f = _case_folder(d, file_case)
    argv = [a.format(d=d, s=shared, f=f) for a in argv]
    monkeypatch.chdir(d)
    before = _snapshot(d, shared)
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's errors exit from parse_args
        status = exc.code
    out, err = capsys.readouterr()
    assert status == 2, (case, err)
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and err.startswith("stairsense")
    assert _snapshot(d, shared) == before, "a failed command created or changed a file"
    if f is not None:  # the line names the bad file, or the flag that is the problem
        assert f.name in err or re.search(r"--[a-z]", err), err
    if case in MESSAGES:
        assert MESSAGES[case].format(d=d, s=shared) in err, err
    # The advice names only flags and repairs this subcommand has.
    command = argv[0] if argv and argv[0] in _flags_of(build_parser(), None)[0] | set(
        next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices) else None
    flags, repairs = _flags_of(build_parser(), command, argv[1] if len(argv) > 1 else None)
    message = err.split(": error: ", 1)[-1]
    advice = message.split("(see ")[0].split("unrecognized arguments:")[0]
    for other, rest in re.findall(r"`stairsense ([a-z]+)([^`]*)`", advice):  # advice to run another command
        assert set(re.findall(r"--[a-z][a-z-]*", rest)) <= _flags_of(build_parser(), other)[0], err
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", re.sub(r"`[^`]*`", "", advice)))
    assert named <= flags, f"{case}: advice names {named - flags}, not flags of {command}: {err}"
    assert set(re.findall(r"--repair ([a-z-]+)", message)) <= repairs, err
    assert "read_segments" not in message and "repair=(" not in message, err


@pytest.mark.parametrize("link", ["hard", "symbolic"])
@pytest.mark.parametrize("argv", [
    ["train", "{d}/data.csv.gz", "--k", "5", "--out", "{d}/link"],
    ["export", "{d}/m.model", "--out", "{d}/link"],
    ["export", "{d}/m.model", "--out", "{d}/link.onnx", "--ort"],  # the .ort twin is written beside --out
    ["replay", "{d}/data.csv.gz", "--plot", "{d}/link"],
], ids=["train", "export", "export-ort-twin", "replay-plot"])
def test_an_output_that_is_an_input_by_another_name_is_refused(argv, link, shared, tmp_path, capsys):
    """Names differ, the file is one: a hard link or a symbolic link to an input is that input."""
    d = tmp_path
    (d / "data.csv.gz").write_bytes((shared / "sim.csv.gz").read_bytes())
    (d / "m.model").write_bytes((shared / "m.model").read_bytes())
    target = d / ("data.csv.gz" if argv[0] in ("train", "replay") else "m.model")
    name = "link.ort" if "--ort" in argv else "link"
    (os.link if link == "hard" else os.symlink)(target, d / name)
    before = _snapshot(d)
    capsys.readouterr()
    assert main([a.format(d=d) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err and target.name in err and "would overwrite" in err, err
    assert _snapshot(d) == before


# --- what works: repairs from the command line, and the model's own configuration ----------------------


def run_json(capsys, argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_replay_with_a_model_needs_no_repeated_flags(shared, capsys):
    from stairsense.models import load_model

    model = load_model(shared / "m.model")
    assert model.config.rate_hz == 25 and model.summary["orientation_methods"] == ["rotvec"]
    plain = run_json(capsys, ["replay", str(shared / "sim.csv.gz"), "--model", str(shared / "m.model")])
    # The same value again, and a read-only setting, are accepted and change nothing the model sees.
    same = run_json(capsys, ["replay", str(shared / "sim.csv.gz"), "--model", str(shared / "m.model"),
                             "--rate", "25", "--max-gap", "0.5"])
    assert plain["stair_steps"] is not None and plain == same
    # 25 Hz over the two minutes: the model's rate was used, not the log's 50 Hz.
    assert abs(plain["samples"] - 25 * plain["duration_s"]) < 25


def test_trained_orientations_of_models_and_exported_models():
    from stairsense.pipeline import trained_orientations

    class Exported:  # what OnnxStairModel exposes: metadata with the training summary, and config
        metadata = {"training": {"orientation_methods": ["ahrs"]}}
        config = PipelineConfig()

    assert trained_orientations(Exported()) == ["ahrs"]

    class Old:  # a model from before orientation_methods was stored
        summary = {}
        config = PipelineConfig(orientation="vertical")

    assert trained_orientations(Old()) == ["vertical"]
    Old.config = PipelineConfig()
    assert trained_orientations(Old()) is None


def test_repairs_from_the_command_line_are_reported(tmp_path, capsys):
    t = [int(ln.split(",")[0]) for ln in GOOD]
    lines = list(GOOD)
    lines.insert(11, lines[10])  # an exact duplicate
    lines.insert(30, f"{t[28]},0.5,0.5,9.0")  # a repeat with other values
    path = tmp_path / "phone.csv"
    path.write_text(text(lines))
    report = run_json(capsys, ["replay", str(path), "--repair", "dedupe"])
    assert [(a["repair"], a["count"], a["first_lines"]) for a in report["read"]["actions"]] == [
        ("dedupe", 1, [13]), ("dedupe", 1, [32])]  # file lines: header is line 1
    assert main(["replay", str(path), "--repair", "dedupe"]) == 0
    out = capsys.readouterr().out
    assert "repaired" in out and "dropped exact duplicates" in out and "other values" in out


def test_a_tuned_configuration_splits_where_it_would_stop(tmp_path, capsys):
    """Issue 10 item 2: a 0.22 s gap the reader accepted stopped a 200 ms-smoothing front end."""
    name, content = EXTRA_FILES["gap_220ms"]
    path = tmp_path / name
    path.write_text(content)
    config = tmp_path / "smooth200.json"
    config.write_text(json.dumps({"smooth_ms": 200}))
    capsys.readouterr()
    assert main(["replay", str(path), "--config", str(config)]) == 2
    assert "--repair split-gaps" in capsys.readouterr().err
    report = run_json(capsys, ["replay", str(path), "--config", str(config), "--repair", "split-gaps"])
    assert report["segments"] == 2 and report["read"]["segments"] == [[2, 201], [202, 401]]


def test_a_model_runs_the_orientation_it_was_trained_with(shared):
    """``auto`` is resolved once, at training: a model trained on gyroscope logs (ahrs) runs ahrs on a
    log that also records a rotation vector, where ``auto`` alone would pick rotvec."""
    from stairsense.pipeline import replay

    class TrainedOnGyroLogs:  # the parts of a model replay uses
        config = PipelineConfig()
        summary = {"orientation_methods": ["ahrs"]}

        def decide_windows(self, samples, offsets, step_context=None):
            return np.zeros(len(offsets) - 1, dtype=int), np.zeros(len(offsets) - 1, dtype=bool)

    sim = shared / "sim.csv.gz"
    assert replay(sim, PipelineConfig()).method == "rotvec"
    assert replay(sim, PipelineConfig(), model=TrainedOnGyroLogs()).method == "ahrs"
    with pytest.raises(ValueError, match=r"trained with orientation \['ahrs'\].*records acc\)"):
        replay(shared / "acc_only.csv.gz", PipelineConfig(), model=TrainedOnGyroLogs())


# --- failed checks and bugs ------------------------------------------------------------------------


def _run_raising(monkeypatch, capsys, exc):
    import stairsense._cli_simulate as sim

    def boom(args):
        raise exc

    monkeypatch.setattr(sim, "cmd_simulate", boom)
    capsys.readouterr()
    try:
        return main(["simulate", "--out", "x.csv"]), capsys.readouterr().err
    finally:
        monkeypatch.undo()


def test_a_failed_export_check_is_one_line_and_exit_2_whatever_its_base_class(monkeypatch, capsys):
    class ExportParityError(RuntimeError):  # issue 10 item 1: the class was a RuntimeError
        pass

    status, err = _run_raising(monkeypatch, capsys, ExportParityError("decisions agree on 99.34% < 99.50%;\nretry"))
    assert status == 2 and err == "stairsense simulate: error: decisions agree on 99.34% < 99.50%; retry\n"


def test_a_bug_is_one_line_exit_1_and_a_traceback_only_when_asked(monkeypatch, capsys):
    status, err = _run_raising(monkeypatch, capsys, KeyError("oops"))
    assert status == 1 and err.count("\n") == 1 and "internal error (KeyError" in err and "STAIRSENSE_DEBUG" in err
    monkeypatch.setenv("STAIRSENSE_DEBUG", "1")
    with pytest.raises(KeyError):
        _run_raising(monkeypatch, capsys, KeyError("oops"))
