"""``train`` and ``evaluate`` refuse an exact KOMD fit whose l × l training kernel cannot fit in
memory, before allocating it, and say what to do instead."""
from __future__ import annotations

import dataclasses

import pytest

import stairsense._train as train_module
from stairsense import PipelineConfig
from stairsense._recordings import recording_windows
from stairsense._train import evaluate, train_from_recordings
from stairsense.cli import main
from stairsense.models import TrainRecipe
from stairsense.stream import write_log
from stairsense.stream._log import Activity
from stairsense.stream.simulate._simulate import simulate

CONFIG = PipelineConfig(rate_hz=30, orientation="rotvec")
SCHEDULE = [(int(Activity.WALKING), 20.0), (int(Activity.WALKING_UPSTAIRS), 15.0), (int(Activity.WALKING), 10.0),
            (int(Activity.WALKING_DOWNSTAIRS), 15.0)]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    return [str(write_log(dataclasses.replace(log, meta={"subject": seed}), folder / f"s{seed}.csv.gz"))
            for seed in range(2) for log in [simulate(schedule=SCHEDULE, rate_hz=50, seed=seed)]]


@pytest.fixture(scope="module")
def n_windows(paths):
    return len(recording_windows(paths, CONFIG).dataset)


def test_exact_komd_is_refused_one_byte_short_of_its_kernel_and_fitted_at_it(paths, n_windows, monkeypatch):
    """The bound is the kernel's own size, 8 l² bytes: one byte less is refused before any fit, the
    exact size is enough."""
    recipe = TrainRecipe(CONFIG, k=10, n_landmarks=None, head="komd")
    monkeypatch.setattr(train_module, "_available_bytes", lambda: 8 * n_windows ** 2 - 1)
    monkeypatch.setattr(TrainRecipe, "fit", lambda *a, **k: pytest.fail("fitted past the memory check"))
    with pytest.raises(ValueError) as refused:
        train_from_recordings(paths, recipe)
    message = str(refused.value)
    assert message.startswith(f"{paths[0]}, {paths[1]}: exact KOMD on {n_windows:,} training windows holds a "
                              f"{n_windows:,} × {n_windows:,} kernel matrix")
    assert "use fewer recordings, or n_landmarks=300 or head='trees'" in message
    monkeypatch.undo()
    monkeypatch.setattr(train_module, "_available_bytes", lambda: 8 * n_windows ** 2)
    assert train_from_recordings(paths, recipe).summary["head"] == "komd"


def test_heads_without_a_kernel_matrix_are_not_refused(paths, monkeypatch):
    monkeypatch.setattr(train_module, "_available_bytes", lambda: 1)
    assert train_from_recordings(paths, TrainRecipe(CONFIG, k=10, head="trees")).summary["head"] == "trees"
    assert train_from_recordings(paths, TrainRecipe(CONFIG, k=10, n_landmarks=20, head="komd"))
    assert evaluate(paths, CONFIG, classifier="dt", grid={"clf__min_samples_leaf": [5]})["n_folds"] == 2


def test_evaluate_and_the_cli_refuse_it_with_the_flag_to_use(paths, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(train_module, "_available_bytes", lambda: 1)
    with pytest.raises(ValueError, match=r"kernel matrix .* use fewer recordings, or classifier='knn' or classifier='dt'"):
        evaluate(paths, CONFIG, classifier="komd")
    assert main(["train", *paths, "--head", "komd", "--landmarks", "0", "--out", str(tmp_path / "never.model")]) == 2
    err = capsys.readouterr().err
    assert "kernel matrix" in err and "use fewer recordings, or --landmarks 300 or --head trees (" in err
    assert not (tmp_path / "never.model").exists()
    assert main(["evaluate", *paths, "--classifier", "komd"]) == 2
    assert "use fewer recordings, or --classifier knn or --classifier dt (" in capsys.readouterr().err
