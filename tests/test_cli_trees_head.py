"""``stairsense train --head trees`` end to end: train, export at the default 32 KB int8, inspect,
and replay the model file and the exported file on a held-out walk.

Oracles: the simulator's planned stairs (the walk climbs two floors by stairs), and the trained
model's own counts for its exported file (held to the export's decision agreement).
"""
from __future__ import annotations

import json

import numpy as np

from stairsense.cli import main
from stairsense.features import HEIGHT_NAMES
from stairsense.stream import Barometer, Person, building_walk, simulate, write_log


def _walk(seed: int, legs=None):
    rng = np.random.default_rng(seed)
    schedule, person = building_walk(Person.draw(rng), rng, legs)
    return simulate(schedule=schedule, seed=seed, person=person, barometer=Barometer(), rate_hz=50)


def test_train_export_and_replay_a_trees_head(tmp_path, capsys):
    logs = []
    for seed in range(10):
        logs.append(tmp_path / f"train{seed}.csv.gz")
        write_log(_walk(seed), logs[-1])
    model, onnx_file, held_out = tmp_path / "trees.model", tmp_path / "trees.onnx", tmp_path / "held_out.csv.gz"
    write_log(_walk(77, [("stairs", 2), ("lift", -2)]), held_out)
    assert main(["train", *map(str, logs), "--barometer", "--rate", "30", "--head", "trees", "--out", str(model),
                 "--json"]) == 0
    capsys.readouterr()
    assert main(["export", str(model), "--out", str(onnx_file), "--json"]) == 0  # int8 within 32 KB by default
    report = json.loads(capsys.readouterr().out)
    assert onnx_file.stat().st_size <= 32 * 1024 and report["parity"]["decision_agreement"] >= 0.995
    assert main(["export", "--inspect", str(onnx_file), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["metadata"]["head"] == "trees" and info["model"] == "with barometer"
    # the selector's required columns (the height features, last) recorded in a line, not entry by entry
    n_inputs = len(info["metadata"]["input_feature_names"])
    assert info["metadata"]["training"]["params"]["select__required"] == (
        f"mask of {n_inputs}, True at {list(range(n_inputs - len(HEIGHT_NAMES), n_inputs))}")
    counts = []
    for path in (model, onnx_file):
        assert main(["replay", str(held_out), "--model", str(path), "--json"]) == 0
        counts.append(json.loads(capsys.readouterr().out))
    assert counts[0]["model"] == counts[1]["model"] == "with barometer"
    assert counts[0]["stair_steps_up"] > 5 * counts[0]["stair_steps_down"]  # up by stairs, down by lift
    assert abs(counts[1]["stair_steps"] - counts[0]["stair_steps"]) <= 1
