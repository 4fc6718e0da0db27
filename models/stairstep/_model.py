"""The stair-step classifier of "Climb the world" and its saved artifact (spec §3.6, §3.7, §3.9).

The classifier is a scikit-learn ``Pipeline``: the per-feature [-1, 1] scaler of spec §3.6, the
EasyMKL top-k feature selector of §3.9, and KOMD with an RBF kernel (§3.7). A fitted pipeline
travels with the :class:`~stairsense.PipelineConfig` that produced its training windows, the
feature names and a training summary in a :class:`StairstepModel`, saved by :func:`save_model`
as one self-checking file and read back by :func:`load_model`.

File layout (format 2): one line of UTF-8 JSON (the header), then an ``.npz`` of numeric arrays.
The header names the format, the versions that wrote it, the payload's length and its SHA-256, the
configuration, feature names and summary (so ``head -1 model.ssm`` shows what a file holds), and the
pipeline as type names, constructor parameters and fitted attributes (``_estimator_state``). Loading
runs no code from the file: it only builds the few estimator types a stair-step model is made of.

Format 1 held a pickle, and unpickling runs whatever the file names; its checksum
detects damage, not tampering. :func:`load_model` refuses it; :func:`upgrade_model_file` converts a
file its owner trusts, once, explicitly (``stairsense upgrade-model``).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import pickle
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import sklearn
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from stairsense.features import N_FEATURES, WindowRows, host_feature_columns, make_feature_scaler
from stairsense.stream import PipelineConfig, atomic_write

from ..mkl import EasyMKLSelector, KOMDClassifier, NystroemKOMDClassifier
from ._estimator_state import UnsafeStateError, estimator_from_state, estimator_to_state, pack_arrays, unpack_arrays
from ._invariant import RestrictedSelector

__all__ = [
    "make_stairstep_pipeline",
    "StairstepModel",
    "save_model",
    "load_model",
    "read_model_header",
    "upgrade_model_file",
    "ModelFileError",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "package_version",
]

#: Value of the header's ``format`` key; anything else is a foreign file.
MODEL_FORMAT = "stairsense-stairstep-model"
#: Bumped whenever the header or payload layout changes; older/newer files are refused.
#: Not bumped by the step context: the layout is the same, only the recorded configuration
#: gained fields (``step_context``, ``step_context_gap_s``). A file written before them still
#: loads and means ``step_context=0`` (:meth:`PipelineConfig.from_record`), which is what it was
#: trained on; bumping would refuse those files for no reason. An older reader refuses a newer
#: file by its unknown configuration keys, naming them.
MODEL_FORMAT_VERSION = 2
# Format 1 pickled the model; only upgrade_model_file reads it, on the caller's explicit trust.
_PICKLE_FORMAT_VERSION = 1
# A header is a few kB (79 feature names + config); a first line longer than this is not ours.
_MAX_HEADER_BYTES = 1 << 20
#: The largest array payload a model file may announce. Exact KOMD on 5,000 training windows of 115
#: features keeps at most 4.6 MB of support vectors; the cap leaves a wide margin and bounds what a
#: load reads and allocates whatever the header claims.
MAX_PAYLOAD_BYTES = 256 << 20

# Format-1 files pickled before a reorganisation name the modules the classes lived in then; unpickling maps them to
# the modules they moved to, so a model saved by the flat layout still loads.
_MOVED_MODULES = {
    "stairsense.config": "stairsense.stream._config",
    "stairsense.models._stairstep": "stairsense.models.stairstep._model",
    "stairsense.models._evaluation": "stairsense.models.stairstep._evaluation",
    "stairsense.models._komd": "stairsense.models.mkl._komd",
    "stairsense.models._easymkl": "stairsense.models.mkl._easymkl",
    "stairsense.models._simplex": "stairsense.models.mkl._simplex",
    "stairsense.models._kernel_access": "stairsense.models.kernel_machines._kernel_access",
    "stairsense.models._kernel_machines": "stairsense.models.kernel_machines._solver",
    "stairsense.models._kernel_machine_estimators": "stairsense.models.kernel_machines._estimators",
    "stairsense.models._losses": "stairsense.models.kernel_machines._losses",
    "stairsense.models._rls2": "stairsense.models.kernel_machines._rls2",
    "stairsense.models._simplex_pairwise": "stairsense.models.kernel_machines._simplex_pairwise",
    "stairsense.models._admm_mtl": "stairsense.models.multitask._admm_mtl",
    "stairsense.models._mtl_task_solvers": "stairsense.models.multitask._task_solvers",
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        return super().find_class(_MOVED_MODULES.get(module, module), name)


def package_version() -> str:
    """The installed stairsense version, written into model files and exported-model metadata."""
    try:
        return metadata.version("stairsense")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def make_stairstep_pipeline(k=49, lam=0.1, gamma="scale", *, selector_lam=0.1, tol=1e-8,
                            random_state=None, n_landmarks=None, support_quantile=None, support_scale=1.0,
                            allowed=None, required=None, head=None) -> Pipeline:
    """The stair-step classifier: [-1, 1] scaling, EasyMKL top-k selection, RBF KOMD.

    Spec §3.6 (scaling fitted on training windows only, clipped at inference), §3.9 (EasyMKL over
    the rank-one feature kernels, keep the k best, 49 in the thesis) and §3.7 (KOMD, RBF kernel).

    Parameters
    ----------
    k : int ≥ 1 or "all", default=49
        Features kept by the selector (``"all"`` keeps every feature but still fits the ranking).
    lam : float in [0, 1], default=0.1
        KOMD's Λ.
    gamma : "scale" or float > 0, default="scale"
        RBF width of KOMD, on the scaled and selected features.
    selector_lam : float in [0, 1], default=0.1
        Λ of the KOMD problem inside EasyMKL's selector.
    tol : float > 0, default=1e-8
        KOMD solver tolerance.
    random_state : None, int or RandomState
        Passed to KOMD (seeds the landmarks' k-means with ``n_landmarks``).
    n_landmarks : int, optional
        Train under a support-vector budget: KOMD on the Nyström kernel over this many k-means
        landmarks (:class:`~stairsense.models.mkl.NystroemKOMDClassifier`), so the decision is an
        expansion over at most ``n_landmarks`` points and the exported file is the trained model,
        not a truncation of it. ``None``: exact KOMD over every support vector.
    support_quantile : float in [0, 1), optional
        With ``n_landmarks``: decide NO_STAIR where a window is less similar to every landmark
        than this share of the training's stair windows are (the support gate of
        :class:`~stairsense.models.mkl.NystroemKOMDClassifier`). ``None``: no gate.
    support_scale : float in (0, 1], default=1.0
        The gate's threshold is this times that share's similarity: below 1, only windows farther
        out than the training stair windows' own edge are gated.
    allowed : array-like of bool, optional
        Columns the selector may choose from (:class:`RestrictedSelector`), e.g.
        :func:`heading_invariant_mask` of the feature names; ``None`` allows every column.
    required : array-like of bool, optional
        Columns kept beside the selector's ``k`` whatever their rank (:class:`RestrictedSelector`),
        e.g. the barometer's height features; ``None`` requires none.
    head : classifier, optional
        An unfitted classifier in place of KOMD on the selected columns (the step ``"head"``;
        the KOMD parameters above are then unused), such as
        :class:`~stairsense.models.GatedTreesClassifier` (``TrainRecipe(head="trees")``). EasyMKL
        still chooses the columns.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Steps ``"scale"``, ``"select"``, ``"komd"`` (or ``"head"``); tune them with the usual
        ``komd__lam`` names.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(300, 12, n_informative=4, random_state=0)
    >>> clf = make_stairstep_pipeline(k=6, lam=0.1, gamma=0.5).fit(X, y)
    >>> clf.named_steps["select"].get_support().sum(), float(clf.score(X, y)) > 0.85
    (np.int64(6), True)
    """
    if support_quantile is not None and n_landmarks is None and head is None:
        raise ValueError("support_quantile gates a Nyström KOMD: give n_landmarks too")
    if head is not None:
        last = ("head", head)
    elif n_landmarks is None:
        last = ("komd", KOMDClassifier(lam=lam, kernel="rbf", gamma=gamma, tol=tol, random_state=random_state))
    else:
        last = ("komd", NystroemKOMDClassifier(n_landmarks=n_landmarks, lam=lam, gamma=gamma, tol=tol,
                                               support_quantile=support_quantile, support_scale=support_scale,
                                               random_state=random_state))
    return Pipeline([
        ("scale", make_feature_scaler()),
        ("select", EasyMKLSelector(lam=selector_lam, k=k) if allowed is None and required is None else
         RestrictedSelector(EasyMKLSelector(lam=selector_lam, k=k), allowed, required)),
        last,
    ])


class ModelFileError(ValueError):
    """A model file that cannot be used: foreign, truncated, corrupt, or from another version."""


class StairstepModel:
    """A fitted stair-step classifier with the front-end configuration it was trained for.

    Replaying a log with a different configuration would feed the classifier windows and features
    unlike its training set, so :meth:`check_config` refuses that (spec §3.1: features depend on
    rate, smoothing, orientation and segmentation).

    Parameters
    ----------
    pipeline : fitted estimator
        Usually from :func:`make_stairstep_pipeline`; anything with ``predict``.
    config : PipelineConfig or dict
        The configuration that produced the training windows; a dict is a recorded configuration
        (a model file's header) and is read with :meth:`PipelineConfig.from_record`, so one
        recorded before a field existed means what it meant then (no ``step_context``: 0).
    feature_names : sequence of str
        Names of the input columns (``stairsense.pipeline.feature_names_for(config)``).
    summary : dict, optional
        Training provenance (see :meth:`train`); must be JSON-serialisable.

    Attributes
    ----------
    config : PipelineConfig
    feature_names : list of str
    summary : dict

    Examples
    --------
    >>> import numpy as np
    >>> from stairsense import PipelineConfig
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 5)); y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    >>> model = StairstepModel.train(make_stairstep_pipeline(k=3, gamma=0.5), X, y,
    ...                              config=PipelineConfig(rate_hz=30), feature_names=list("abcde"))
    >>> model.summary["n_windows"], model.summary["class_counts"]
    (120, {'0': 61, '1': 59})
    >>> model.check_config(PipelineConfig(rate_hz=30)).rate_hz
    30
    """

    def __init__(self, pipeline, config, feature_names: Sequence[str], summary: dict | None = None):
        self.pipeline = pipeline
        self.config = config if isinstance(config, PipelineConfig) else PipelineConfig.from_record(dict(config))
        self.feature_names = [str(n) for n in feature_names]
        self.summary = dict(summary or {})

    @classmethod
    def train(cls, pipeline, X, y, *, config: PipelineConfig, feature_names: Sequence[str], groups=None,
              sources: Sequence[str] = ()) -> "StairstepModel":
        """Fit ``pipeline`` on windows ``(X, y)`` and record how it was trained.

        Parameters
        ----------
        pipeline : unfitted estimator
        X : array-like of shape (m, len(feature_names))
        y : array-like of shape (m,)
            1 = STAIR, 0 = NO_STAIR.
        config : PipelineConfig
        feature_names : sequence of str
        groups : array-like of shape (m,), optional
            Subject of each window; the summary lists the distinct subjects.
        sources : sequence of str
            Data files or folders the windows came from.

        Returns
        -------
        StairstepModel
        """
        X = np.asarray(X)
        y = np.asarray(y)
        if X.ndim != 2 or X.shape[1] != len(feature_names):
            raise ValueError(
                f"X must have one column per feature name: expected shape (m, {len(feature_names)}), got "
                f"{X.shape}; build X and the names with the same PipelineConfig"
            )
        pipeline.fit(X, y)
        labels, counts = np.unique(y, return_counts=True)
        subjects = sorted({str(g) for g in np.asarray(groups).ravel()}) if groups is not None else []
        summary = {
            "n_windows": int(y.size),
            "class_counts": {str(int(c) if np.issubdtype(labels.dtype, np.integer) else c): int(n)
                             for c, n in zip(labels, counts)},
            "subjects": subjects,
            "sources": [str(s) for s in sources],
            "params": {k: _jsonable(v) for k, v in pipeline.get_params(deep=True).items() if "__" in k},
            "stairsense_version": package_version(),
            "trained_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        return cls(pipeline, config, feature_names, summary)

    def _check_width(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise ValueError(
                f"this model takes {len(self.feature_names)} window features per row (config orientation="
                f"{self.config.orientation!r}); got an array of shape {X.shape}"
            )
        return X

    def predict(self, X) -> np.ndarray:
        """Labels of windows (1 = STAIR), delegated to the fitted pipeline."""
        return self.pipeline.predict(self._check_width(X))

    def decision_function(self, X) -> np.ndarray:
        """KOMD scores f(x) − θ of windows (≥ 0 means STAIR), delegated to the fitted pipeline."""
        return self.pipeline.decision_function(self._check_width(X))

    @property
    def onset_threshold(self) -> float | None:
        """The head's flight-onset threshold (``GatedTreesClassifier.onset_threshold``; None when it
        has none): what :class:`~stairsense.models.StepVote` reads from :meth:`decide`."""
        return getattr(self.pipeline[-1], "onset_threshold", None) if hasattr(self.pipeline, "steps") else None

    def decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Labels of windows (1 = STAIR) and whether each reaches the head's onset threshold (all
        False without one), for :class:`~stairsense.models.StepVote`; one pass of the pipeline."""
        X = self._check_width(X)
        if self.onset_threshold is None:
            return self.pipeline.predict(X), np.zeros(X.shape[0], dtype=bool)
        return self.pipeline[-1].decisions(self.pipeline[:-1].transform(X))

    def window_rows(self, samples, offsets, step_context=None, height=None) -> np.ndarray:
        """The feature rows of windows given as standardized samples, as the exported graph computes
        them: the Table 12.1 features of each 3-column block, then the step-context rows, then the
        height rows.

        Parameters
        ----------
        samples, offsets : array-like of shape (N, 3) or (N, 6) (Mizell), and of int, shape (W + 1,)
            The standardized samples of all windows, window w being ``samples[offsets[w]:offsets[w + 1]]``.
        step_context : array-like of shape (W, 36), optional
            Row w holds window w's :data:`~stairsense.features.STEP_CONTEXT_NAMES` features;
            required when the model's feature names end with them (before any height features),
            refused otherwise.
        height : array-like of shape (W, 7), optional
            Row w holds window w's :data:`~stairsense.features.HEIGHT_NAMES` features;
            required when the model reads the barometer (its feature names end with them), refused
            otherwise.

        Returns
        -------
        ndarray of shape (W, len(feature_names))
        """
        host = host_feature_columns(self.feature_names)
        n_blocks, rest = divmod(len(self.feature_names) - sum(host.values()), N_FEATURES)
        if rest or not n_blocks:
            raise ValueError(f"this model takes {len(self.feature_names)} features that are not Table 12.1 window "
                             "features; call predict(X) with its feature rows")
        samples = np.asarray(samples, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.intp)
        if samples.ndim != 2 or samples.shape[1] != 3 * n_blocks:
            raise ValueError(f"this model takes standardized samples with {3 * n_blocks} columns per row (config "
                             f"orientation={self.config.orientation!r}); got shape {samples.shape}")
        context = _extra_rows("step_context", step_context, host["step_context"], offsets.size - 1,
                              "stairsense.features.step_context_features of the kept windows, in order")
        height = _extra_rows("height", height, host["height"], offsets.size - 1,
                             "WindowRowStage rows of a configuration with barometer=True")
        return WindowRows(samples, offsets, context, None, None, height=height).features()

    def predict_windows(self, samples, offsets, step_context=None, height=None) -> np.ndarray:
        """Labels (1 = STAIR) of windows given as standardized samples: ``predict`` on
        :meth:`window_rows`, the same call as the exported model's
        (:meth:`stairsense.export.OnnxStairModel.predict_windows`)."""
        return self.predict(self.window_rows(samples, offsets, step_context, height))

    def decision_windows(self, samples, offsets, step_context=None, height=None) -> np.ndarray:
        """KOMD scores (≥ 0 means STAIR) of windows given as standardized samples; arguments as
        :meth:`window_rows`."""
        return self.decision_function(self.window_rows(samples, offsets, step_context, height))

    def decide_windows(self, samples, offsets, step_context=None, height=None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`decide` on :meth:`window_rows`, the same call as the exported model's
        (:meth:`stairsense.export.OnnxStairModel.decide_windows`)."""
        return self.decide(self.window_rows(samples, offsets, step_context, height))

    def check_config(self, config: PipelineConfig | None = None) -> PipelineConfig:
        """The configuration to replay with: the model's own, after checking ``config`` agrees
        (:meth:`PipelineConfig.agree`; ``None`` accepts the model's)."""
        return self.config if config is None else self.config.agree(config)

    def header(self) -> dict[str, Any]:
        """The JSON-serialisable description written at the head of a saved file."""
        return {
            "config": self.config.to_dict(),
            "feature_names": self.feature_names,
            "summary": self.summary,
        }

    def __repr__(self) -> str:
        n = self.summary.get("n_windows", "?")
        return f"StairstepModel({len(self.feature_names)} features, {n} training windows, config={self.config})"


def _extra_rows(name: str, rows, n_columns: int, n_windows: int, source: str):
    """``rows`` (the per-window ``step_context`` or ``height`` argument) as a (W, n_columns) array,
    after checking the model takes them (``n_columns`` > 0) exactly when they are given."""
    if not n_columns:
        if rows is not None:
            raise ValueError(f"this model takes no {name.replace('_', '-')} features; call it without {name}")
        return None
    if rows is None:
        raise ValueError(f"this model takes {n_columns} {name.replace('_', '-')} features per window: pass "
                         f"{name}=(W, {n_columns}) rows ({source})")
    rows = np.asarray(rows, dtype=np.float64)
    if rows.shape != (n_windows, n_columns):
        raise ValueError(f"{name} must have shape ({n_windows}, {n_columns}), one row per window; got {rows.shape}")
    return rows


def _jsonable(value):
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.ndarray) and value.dtype == bool:
        # a feature mask (the selector's required columns): its repr spells out every entry, some
        # 1.3 KB of an exported file's metadata for 120 columns
        return f"mask of {value.size}, True at {np.flatnonzero(value).tolist()}"
    return repr(value)


def save_model(model: StairstepModel, path: str | os.PathLike) -> Path:
    """Write ``model`` to ``path`` atomically: a temporary file in the same folder, then a rename.

    A crash or a full disk leaves either the old file or the new one, never a half-written file.
    The file holds JSON and numeric arrays only (format 2, see the module docstring), so loading it
    runs no code from it.

    Parameters
    ----------
    model : StairstepModel
        With a fitted pipeline of :func:`make_stairstep_pipeline`'s estimator types.
    path : str or Path

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        When the pipeline holds an estimator type a model file cannot describe as plain data.
    """
    if not isinstance(model, StairstepModel):
        raise TypeError(f"save_model expects a StairstepModel, got {type(model).__name__}")
    check_is_fitted(model.pipeline)
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    estimator = estimator_to_state(model.pipeline, arrays)
    payload = pack_arrays(arrays)
    header = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "stairsense_version": package_version(),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "payload_bytes": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        **model.header(),
        "estimator": estimator,
    }
    with atomic_write(path) as tmp, open(tmp, "wb") as f:
        f.write(json.dumps(header, sort_keys=True).encode("utf-8") + b"\n")
        f.write(payload)
    return path


def read_model_header(path: str | os.PathLike) -> tuple[dict, int]:
    """The parsed header of a model file and the byte offset where its payload starts."""
    path = Path(path)
    with open(path, "rb") as f:
        first = f.readline(_MAX_HEADER_BYTES)
    try:
        header = json.loads(first.decode("utf-8")) if first.endswith(b"\n") else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("format") != MODEL_FORMAT:
        raise ModelFileError(
            f"{path}: not a stairsense stair-step model (no '{MODEL_FORMAT}' header line); pass a file "
            "written by `stairsense train --out` or save_model"
        )
    return header, len(first)


def _checked_payload(path: Path, header: dict, offset: int) -> bytes:
    """The payload after the header, refused if too large, truncated or corrupt (SHA-256)."""
    expected = header.get("payload_bytes")
    if type(expected) is not int or not 0 <= expected <= MAX_PAYLOAD_BYTES:
        raise ModelFileError(f"{path}: the header announces a payload of {str(expected)[:40]} bytes; a model "
                             f"file holds at most {MAX_PAYLOAD_BYTES >> 20} MiB of arrays. Retrain the model")
    with open(path, "rb") as f:
        f.seek(offset)
        payload = f.read(expected + 1)  # one byte more tells a padded file without reading all of it
    if len(payload) != expected:
        raise ModelFileError(
            f"{path}: truncated or padded model file: payload of {len(payload)} bytes, header says {expected}; "
            "copy the file again or retrain"
        )
    if hashlib.sha256(payload).hexdigest() != header.get("payload_sha256"):
        raise ModelFileError(f"{path}: corrupt model file (SHA-256 of the payload does not match its header); "
                             "copy the file again or retrain")
    return payload


def load_model(path: str | os.PathLike, *, allow_version_mismatch: bool = False) -> StairstepModel:
    """Read a model written by :func:`save_model`, refusing anything it cannot trust.

    Checks, in order: the header line names our format and format version 2 (version 1 files hold
    a pickle and are refused: see :func:`upgrade_model_file`); the payload has the announced length
    (else truncated) and SHA-256 (else corrupt); the stairsense and scikit-learn versions equal the
    running ones (the fitted attributes are those versions' internals); the estimators are of the
    stair-step types and hold only numbers, strings and numeric arrays. No code from the file runs.

    Parameters
    ----------
    path : str or Path
    allow_version_mismatch : bool, default=False
        Load a file written by another stairsense/scikit-learn version anyway (its estimators may
        miss attributes the running version expects).

    Returns
    -------
    StairstepModel

    Raises
    ------
    ModelFileError
        Naming the file and what is wrong with it.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense import PipelineConfig
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(80, 4)); y = (X[:, 1] > 0).astype(int)
    >>> model = StairstepModel.train(make_stairstep_pipeline(k=2, gamma=1.0), X, y,
    ...                              config=PipelineConfig(), feature_names=["a", "b", "c", "d"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     back = load_model(save_model(model, d + "/m.ssm"))
    >>> bool(np.array_equal(back.decision_function(X), model.decision_function(X)))
    True
    """
    path = Path(path)
    header, offset = read_model_header(path)
    version = header.get("format_version")
    if version == _PICKLE_FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model file format 1 stores a pickle, which can run code when loaded, so it is refused; "
            f"retrain with `stairsense train`, or if you trust who wrote it convert it once with "
            f"`stairsense upgrade-model {path} --out NEW.model`"
        )
    if version != MODEL_FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model file format version {version!r}, this stairsense reads "
            f"version {MODEL_FORMAT_VERSION}; retrain the model with this version"
        )
    payload = _checked_payload(path, header, offset)
    mismatched = [f"{name} {header.get(key)!r} (running {running!r})"
                  for name, key, running in (("stairsense", "stairsense_version", package_version()),
                                             ("scikit-learn", "sklearn_version", sklearn.__version__))
                  if header.get(key) != running]
    if mismatched and not allow_version_mismatch:
        raise ModelFileError(
            f"{path}: written by {', '.join(mismatched)}; fitted estimators may not work correctly across "
            "versions. Retrain with this version, or pass allow_version_mismatch=True to load it anyway"
        )
    try:
        pipeline = estimator_from_state(header.get("estimator"), unpack_arrays(payload))
        model = StairstepModel(pipeline, header["config"], header["feature_names"], header.get("summary"))
    except (ValueError, KeyError, TypeError) as exc:  # UnsafeStateError, or a config PipelineConfig refuses
        raise ModelFileError(f"{path}: refused: {exc}; retrain the model with `stairsense train`") from None
    _probe(model, path)
    return model


def _probe(model: StairstepModel, path: Path) -> None:
    """Score one window, so that arrays which do not fit together (support vectors of the wrong width,
    a scaler for other features, ...) are refused now, naming the file, not by NumPy at the first replay.

    Every step of the pipeline meets each of its arrays on any input, so one row of zeros checks
    every shape; a non-finite score means the file holds nan/inf coefficients.
    """
    try:
        score = model.decision_function(np.zeros((1, len(model.feature_names))))
        if not np.isfinite(score).all():
            raise ValueError(f"its decision is {score[0]} on a window of zeros (nan/inf coefficients)")
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        raise ModelFileError(f"{path}: refused: its arrays do not fit together ({' '.join(str(exc).split())[:200]}); "
                             "the file was damaged or edited: retrain the model with `stairsense train`") from None


def upgrade_model_file(path: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Convert a format-1 (pickled) model file to the current format. **Runs the file's pickle.**

    Unpickling can execute any code the file's author chose: call this only on files you wrote
    yourself or whose source you trust, once; the converted file then loads without that risk.

    Parameters
    ----------
    path : str or Path
        A format-1 file (a pickle).
    out : str or Path
        Where to write the format-2 file.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    ModelFileError
        If ``path`` is not a format-1 file, or is truncated or corrupt.
    """
    path = Path(path)
    header, offset = read_model_header(path)
    if header.get("format_version") != _PICKLE_FORMAT_VERSION:
        raise ModelFileError(f"{path}: format version {header.get('format_version')!r}, not the pickled "
                             f"format 1; only format-1 files need upgrading")
    payload = _checked_payload(path, header, offset)
    model = _Unpickler(io.BytesIO(payload)).load()
    if not isinstance(model, StairstepModel):
        raise ModelFileError(f"{path}: the payload holds a {type(model).__name__}, not a StairstepModel")
    # Unpickling restores the instance dict as written: a configuration pickled before a field
    # existed lacks it and would read the class default (step_context 5, not the 0 it was trained with)
    model.config = PipelineConfig.from_record(vars(model.config))
    try:
        return save_model(model, out)
    except UnsafeStateError as exc:
        raise ModelFileError(f"{path}: cannot be upgraded: {exc}") from None
