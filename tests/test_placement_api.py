"""The public pieces issue 23's placement work reads: the shipped training recipe, windows from recording
paths, each window's activity (kept when unlabelled), and the leave-one-set-out protocol.

Each is checked against something it does not compute itself: the command's parsed defaults and the
README's figures, the loaders and stages called one by one, labels counted sample by sample, and
folds built by hand.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from stairsense import PipelineConfig, recording_windows, window_dataset
from stairsense.cli import build_parser, main
from stairsense.features import AMBIGUOUS, MIXED_ACTIVITY, NO_STAIR, WindowDataset, window_activity
from stairsense.models import (TRAIN_DEFAULTS, TrainRecipe, evaluate_protocol, make_classifier,
                               make_stairstep_pipeline, stair_rates)
from stairsense.stream import Activity, load_mobifall, load_weda, run_front_end, simulate, write_log

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CONFIG = PipelineConfig(rate_hz=30)


def _scalar_params(pipeline) -> dict:
    return {k: v for k, v in pipeline.get_params(deep=True).items() if "__" in k and not hasattr(v, "fit")}


# ------------------------------------------------------------------ the recipe


def test_the_recipe_is_what_a_bare_train_command_parses():
    args = build_parser().parse_args(["train", "DATA", "--out", "m.model"])
    # cmd_train's k when neither --k nor a --config file sets it is the recipe's; the README states 49
    assert args.k is None and TRAIN_DEFAULTS.k == 49
    oracle = make_stairstep_pipeline(k=49, lam=args.lam, gamma=args.gamma, n_landmarks=args.landmarks or None,
                                     support_quantile=args.support_quantile, support_scale=args.support_scale,
                                     random_state=0)
    assert _scalar_params(TRAIN_DEFAULTS.pipeline()) == _scalar_params(oracle)
    # the README's shipped model: KOMD under a 300-vector budget, Λ and γ of the Table 12.2 rebuild
    assert (args.lam, args.gamma, args.landmarks, args.invariant_features, args.support_quantile,
            args.support_scale) == (0.01, 2.0**-5, 300, False, 0.0, 0.9)
    assert TRAIN_DEFAULTS.config == PipelineConfig() and TrainRecipe() == TRAIN_DEFAULTS


def test_train_support_quantile_takes_none_and_refuses_out_of_range(capsys):
    parse = build_parser().parse_args
    assert parse(["train", "D", "--out", "m", "--support-quantile", "none"]).support_quantile is None
    assert parse(["train", "D", "--out", "m", "--support-quantile", "0.01"]).support_quantile == 0.01
    for bad in ("0.9", "-0.1", "nan", "all"):
        with pytest.raises(SystemExit):
            parse(["train", "D", "--out", "m", "--support-quantile", bad])
        assert "--support-quantile" in capsys.readouterr().err
    assert parse(["train", "D", "--out", "m", "--support-scale", "1"]).support_scale == 1.0
    for bad in ("0", "1.1", "nan"):
        with pytest.raises(SystemExit):
            parse(["train", "D", "--out", "m", "--support-scale", bad])
        assert "--support-scale" in capsys.readouterr().err
    # the recipe refuses a gate without landmarks; train drops it with --landmarks 0 (exact KOMD has no landmarks)
    with pytest.raises(ValueError, match="n_landmarks"):
        make_stairstep_pipeline(support_quantile=0.0)
    assert TRAIN_DEFAULTS.replace(n_landmarks=None).pipeline().named_steps["komd"].__class__.__name__ == "KOMDClassifier"


def test_train_help_shows_the_recipe_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 0.01)" in text and "(default 0.03125)" in text and "default 300" in text
    assert "else 49)" in text


def test_the_optimiser_prices_the_recipe():
    from stairsense.export.energy import Protocol

    protocol = Protocol().to_dict()
    assert (protocol["lam"], protocol["gamma"], protocol["landmarks"]) == (TRAIN_DEFAULTS.lam, TRAIN_DEFAULTS.gamma,
                                                                          TRAIN_DEFAULTS.n_landmarks)


def test_invariant_recipe_needs_the_feature_names():
    with pytest.raises(ValueError, match="pass feature_names"):
        TRAIN_DEFAULTS.replace(invariant=True).pipeline()
    names = [f"z_f{i}" for i in range(3)] + [f"x_f{i}" for i in range(3)]
    select = TRAIN_DEFAULTS.replace(invariant=True, k=2).pipeline(names).named_steps["select"]
    assert select.allowed.tolist() == [True] * 3 + [False] * 3


@pytest.fixture(scope="module")
def sim_paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sets")
    return [write_log(dataclasses.replace(log, meta={"subject": f"p{seed}"}), folder / f"p{seed}.csv.gz")
            for seed in range(3) for log in [simulate(minutes=2, rate_hz=30, seed=seed)]]


def test_train_fits_the_recipe(sim_paths, tmp_path, capsys):
    out = tmp_path / "m.model"
    assert main(["train", *map(str, sim_paths[:2]), "--out", str(out), "--landmarks", "40", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # the selector's and KOMD's numbers (the model file writes the scaler's range as text)
    expected = {k: v for k, v in _scalar_params(TRAIN_DEFAULTS.replace(n_landmarks=40).pipeline()).items()
                if k.startswith(("select__", "komd__"))}
    assert {k: summary["params"][k] for k in expected} == expected and expected["komd__n_landmarks"] == 40


# ------------------------------------------------------------------ windows from paths

MOBIFALL_WALK = DATA / "mobifall-pocket" / "sub2" / "ADL" / "WAL" / "WAL_acc_2_1.txt.gz"
MOBIFALL_UP = DATA / "mobifall-pocket" / "sub2" / "ADL" / "STU" / "STU_acc_2_1.txt.gz"
WEDA_STAIRS = DATA / "weda-wrist" / "D03" / "U01_R01_accel.csv.gz"


@pytest.mark.skipif(not MOBIFALL_UP.is_file(), reason="needs ../shared/data")
def test_recording_windows_are_the_loaders_then_window_dataset_on_real_recordings():
    """What ``train`` used before (its private ``_dataset``, compared once on these three files: identical)
    is the loaders' logs through ``window_dataset``; here that composition is the oracle."""
    paths = [MOBIFALL_WALK, MOBIFALL_UP, WEDA_STAIRS]
    found = recording_windows(paths)
    logs = [load_mobifall(MOBIFALL_WALK), load_mobifall(MOBIFALL_UP), load_weda(WEDA_STAIRS)]
    oracle = window_dataset(logs, PipelineConfig())
    ds = found.dataset
    for column in ("X", "y", "groups", "direction", "activity", "log_index", "t_start_ns", "t_end_ns"):
        np.testing.assert_array_equal(getattr(ds, column), getattr(oracle, column), err_msg=column)
    assert found.window_source.tolist() == [str(paths[i]) for i in ds.log_index]
    assert set(found.log_meta("placement")) == {"pocket", "wrist"} and found.orientation_methods == ["vertical"]
    # per-file labels: the walking trial is level walking throughout, the WEDA file stairs of no direction
    walk, weda = ds.log_index == 0, ds.log_index == 2
    assert (ds.activity[walk] == Activity.WALKING).all() and (ds.y[walk] == NO_STAIR).all()
    assert (ds.activity[weda] == Activity.STAIRS).all()


def test_recording_windows_refuses_no_input():
    with pytest.raises(ValueError, match="no input given"):
        recording_windows([])


# ------------------------------------------------------------------ activity per window


def _hand_activity(labels):
    """The one code a window's labels share, else MIXED_ACTIVITY: counted sample by sample."""
    codes = {int(v) for v in labels}
    return codes.pop() if len(codes) == 1 else MIXED_ACTIVITY


def test_window_activity_counted_by_hand():
    labels = np.array([1, 1, 1, 0, 0, 2, 2, 3, 5, 5])
    offsets = np.array([0, 3, 5, 7, 8, 10])  # walking, unlabelled, up, down, standing
    index = np.arange(10)
    assert window_activity(labels, index, offsets).tolist() == [1, 0, 2, 3, 5]
    assert window_activity(labels, index, np.array([0, 4, 8, 10])).tolist() == [MIXED_ACTIVITY, MIXED_ACTIVITY, 5]
    assert window_activity(labels.astype(np.int8), index[2:], np.array([0, 2])).tolist() == [MIXED_ACTIVITY]


@pytest.fixture(scope="module")
def half_labelled():
    """A simulated walk whose labels are WALKING for the first minute and unlabelled after it."""
    log = simulate(minutes=2, rate_hz=30, seed=4)
    label = np.where(log.t_ns < log.t_ns[0] + 60 * 10**9, int(Activity.WALKING), int(Activity.UNLABELLED))
    return dataclasses.replace(log, label=label)


def test_dataset_activity_matches_labels_counted_by_hand(half_labelled):
    result = run_front_end(half_labelled, CONFIG)
    first = result.standardized.first
    kept = result.windows.kept
    labels = result.log.label
    expected = [_hand_activity(labels[first + a:first + b])
                for a, b in zip(result.windows.start[kept], result.windows.stop[kept])]
    assert {Activity.WALKING, Activity.UNLABELLED, MIXED_ACTIVITY} <= set(expected)

    every = WindowDataset.of_log(result, CONFIG, keep_unlabelled=True)
    assert every.activity.tolist() == expected
    assert (every.y[np.array(expected) != Activity.WALKING] == AMBIGUOUS).all()

    # the default drops what it cannot label, and the labelled rows are the same either way
    usual = WindowDataset.of_log(result, CONFIG)
    labelled = every.y != AMBIGUOUS
    assert usual.n_ambiguous == every.n_ambiguous == int((~labelled).sum())
    np.testing.assert_array_equal(usual.X, every.X[labelled])
    assert usual.activity.tolist() == [int(Activity.WALKING)] * len(usual)


def test_a_log_without_labels_keeps_its_windows_only_when_asked(half_labelled):
    bare = dataclasses.replace(half_labelled, label=None)
    with pytest.raises(ValueError, match="no per-sample labels"):
        window_dataset([bare], CONFIG)
    kept = window_dataset([bare], CONFIG, keep_unlabelled=True)
    labelled = window_dataset([half_labelled], CONFIG, keep_unlabelled=True)
    np.testing.assert_array_equal(kept.X, labelled.X)  # features never read labels
    assert (kept.y == AMBIGUOUS).all() and (kept.activity == Activity.UNLABELLED).all()


# ------------------------------------------------------------------ stair_rates and leave-one-set-out


def test_stair_rates_counted_by_hand():
    decided = np.array([1, 1, 0, 1, 0, 0, 1, -1])
    y = np.array([1, 1, 1, 0, 0, AMBIGUOUS, AMBIGUOUS, 1])
    activity = np.array([2, 3, 2, 1, 5, 1, 1, 2])
    rates = stair_rates(decided, y, activity)
    # recall 2 of 3 tested stair windows; walking: windows 3, 5, 6 (ambiguous ones count), 2 called stairs;
    # F1 over labelled windows: tp 2, fp 1, fn 1
    assert rates == {"stair_windows": 3, "stair_recall": 2 / 3, "walking_windows": 3,
                     "walking_called_stairs": 2 / 3, "f1": 2 * 2 / (2 * 2 + 1 + 1)}
    assert stair_rates([0, 1], [0, 0], [1, 1])["f1"] is None  # one class: F1 undefined


class _Spy(ClassifierMixin, BaseEstimator):
    """Nearest class mean on the columns after the first; column 0 carries the subject, recorded per fit
    (``shrink`` does nothing: a two-point grid makes the protocol run its inner selection)."""

    calls: list = []

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == c, 1:].mean(0) for c in self.classes_])
        self.trained_on_ = set(X[:, 0].tolist())
        return self

    def predict(self, X):
        _Spy.calls.append((self.trained_on_, set(X[:, 0].tolist())))
        d = ((X[:, None, 1:] - self.means_[None]) ** 2).sum(-1)
        return self.classes_[d.argmin(1)]


def _three_sets(rng):
    """3 sets × 2 subjects × 12 windows; the subject's number is column 0."""
    subject = np.repeat(np.arange(6), 12)
    sets = np.array(["a", "b", "c"])[subject // 2]
    y = np.tile([0, 1], 36)
    X = np.column_stack([subject, y[:, None] + rng.normal(0, 0.6, (72, 2))]).astype(float)
    return X, y, subject, sets


def test_leave_one_set_out_holds_each_set_out_whole():
    X, y, subject, sets = _three_sets(np.random.default_rng(0))
    _Spy.calls = []
    result = evaluate_protocol(_Spy(), X, y, groups=subject, sets=sets, protocol="leave-one-set-out",
                               param_grid={"shrink": [0.0, 1.0]}, n_inner=5)
    assert result.test_groups == [["a"], ["b"], ["c"]] and len(result.counts) == 3
    # by construction: the model of set s is fitted on the other two sets and tests every window of s
    for s in "abc":
        other = sets != s
        oracle = clone(_Spy()).fit(X[other], y[other]).predict(X[~other])
        np.testing.assert_array_equal(result.held_out_stair[~other], oracle)
    # every fit, inner selection included, tested on subjects it never trained on
    assert _Spy.calls and all(not (train & test) for train, test in _Spy.calls)
    outer = _Spy.calls[-3:]
    assert [sorted(test) for _, test in outer] == [[0, 1], [2, 3], [4, 5]]


def test_leave_one_set_out_needs_two_sets():
    X, y, subject, sets = _three_sets(np.random.default_rng(1))
    with pytest.raises(ValueError, match="needs sets"):
        evaluate_protocol(make_classifier("knn"), X, y, groups=subject, protocol="leave-one-set-out")
    with pytest.raises(ValueError, match="at least 2 sets"):
        evaluate_protocol(make_classifier("knn"), X, y, groups=subject, sets=np.full(y.size, "a"),
                          protocol="leave-one-set-out")


def test_evaluate_command_leave_one_set_out(sim_paths, capsys):
    paths = [str(p) for p in sim_paths]
    assert main(["evaluate", *paths, "--rate", "30", "--protocol", "leave-one-set-out", "--classifier", "knn",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["protocol"] == "leave-one-set-out" and report["test_groups"] == [[p] for p in sorted(paths)]
    found = recording_windows(paths, CONFIG)
    ds = found.dataset
    by_set = {f["set"]: f for f in report["per_set"]}
    assert sorted(by_set) == sorted(paths) and {f["placement"] for f in report["per_set"]} == {"unknown"}
    for p in paths:
        rows = found.window_source == p
        assert by_set[p]["stair_windows"] == int(ds.y[rows].sum())
        assert by_set[p]["walking_windows"] == int(np.sum(ds.activity[rows] == Activity.WALKING))

    assert main(["evaluate", *paths, "--rate", "30", "--protocol", "leave-one-set-out", "--classifier", "knn"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(paths) and all("level walking called stairs" in line for line in lines[1:])
