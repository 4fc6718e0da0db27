"""Run an exported stair-step model through ONNX Runtime, the way a phone does.

:class:`OnnxStairModel` loads a ``.onnx`` (or ``.ort``) file written by
:func:`stairsense.export._export.export_model`, refuses files it cannot trust with an error naming
the file (not an ONNX model, truncated, corrupt, foreign, another format version, or trained for
another front-end configuration), and classifies windows given as standardized samples, one
ONNX Runtime call per window.

Every stair-step model takes windows the same way: ``predict_windows(samples, offsets,
step_context, height)`` (window w = ``samples[offsets[w]:offsets[w+1]]`` and, for a model with
step-context features, row w of ``step_context``; for a model that reads the barometer, row w of
``height``), the :class:`~stairsense.features.WindowRows` that replay and evaluation get from the
window-row stage. An exported graph takes each of those rows as an input of the same name.
"""
from __future__ import annotations

import collections
import os
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from stairsense.stream import PipelineConfig

from ._metadata import FORMAT, FORMAT_VERSION, HASH_KEY, OnnxModelError, content_hash, read_metadata

__all__ = ["ONSET_OUTPUT", "OnnxModelError", "OnnxStairModel", "inspect_model", "session_options"]

#: The graph output of a head with a flight-onset threshold: ≥ 0 where a window reaches it
#: (``GatedTreesClassifier.onset_decision_function``), read by the step vote.
ONSET_OUTPUT = "onset_score"

# The FlatBuffers file identifier of ONNX Runtime's ORT format, at bytes 4..8.
_ORT_IDENTIFIER = b"ORTM"
_STAIR, _NO_STAIR = 1, 0

# Per graph input the host computes (stairsense.features.host_feature_columns): what its features
# are called in errors, the configuration of a model without them, and where a caller gets them.
_HOST_INPUTS = {
    "step_context": ("step-context", "step_context=0",
                     "stairsense.features.step_context_features of the kept windows, in order"),
    "height": ("height", "barometer=False",
               "the height features of WindowRowStage rows, from a log with air pressure"),
}


def session_options(threads: int = 1):
    """ONNX Runtime options for a stair-step model; the phone glue should set the same two.

    ``session.disable_quant_qdq = 1`` lets the load-time constant folding turn the int8 support
    set's ``DequantizeLinear`` into a float32 constant once, instead of on every window (the QDQ
    optimisations it disables are for quantized *activations*, which these models do not have):
    measured 41 → 33 µs per window for 936 support vectors. The file stays small; RAM holds floats.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    return options


def _is_ort_format(path: Path, head: bytes) -> bool:
    return path.suffix == ".ort" or head[4:8] == _ORT_IDENTIFIER


def _read_onnx(path: Path) -> onnx.ModelProto:
    """Parse and verify an ONNX protobuf file: parseable, ours, our version, hash intact."""
    data = path.read_bytes()
    if not data:
        raise OnnxModelError(f"{path}: empty file; export the model again (stairsense export)")
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise OnnxModelError(f"{path}: not an ONNX model, or truncated/corrupt ({exc}); export it again") from exc
    _check_metadata(path, read_metadata(model, path))
    stamped = {p.key: p.value for p in model.metadata_props}.get(HASH_KEY)
    if stamped != content_hash(model):
        raise OnnxModelError(
            f"{path}: corrupt or modified model (its content SHA-256 does not match the one stamped at export); "
            "copy the file again or re-export"
        )
    return model


def _check_metadata(path, meta: dict) -> None:
    if meta.get("format") != FORMAT:
        raise OnnxModelError(
            f"{path}: a foreign ONNX model (no '{FORMAT}' metadata); only models written by stairsense export "
            "carry the configuration and feature names a replay needs"
        )
    if meta.get("format_version") != str(FORMAT_VERSION):
        raise OnnxModelError(
            f"{path}: stairsense ONNX format version {meta.get('format_version')!r}, this stairsense reads "
            f"{FORMAT_VERSION}; re-export the model with this version"
        )


class OnnxStairModel:
    """A stair-step model exported to ONNX, run through ONNX Runtime one window at a time.

    Parameters
    ----------
    path : str or Path
        A ``.onnx`` file from ``stairsense export`` (or its ``.ort`` twin).
    config : PipelineConfig, optional
        The configuration the caller will replay with. If given, it must agree with the one in
        the model's metadata (every field that changes windows or features), else
        :class:`OnnxModelError` lists the differences.
    threads : int, default=1
        ONNX Runtime intra-op threads; one window is too small to share.

    Attributes
    ----------
    metadata : dict
        The decoded ``stairsense.*`` metadata (see :func:`inspect_model`).
    config : PipelineConfig
        The model's configuration (with the caller's read-only settings such as ``max_gap_s``).
    n_columns : int
        Columns of the ``samples`` input (3, or 6 for Mizell models).
    n_step_context : int
        Step-context features per window of the ``step_context`` input (36), or 0 without one.
    n_height : int
        Height features per window of the ``height`` input (7: a model that reads the barometer),
        or 0 without one.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense import PipelineConfig
    >>> from stairsense.features._window_features import FEATURE_NAMES, window_features
    >>> from stairsense.models import StairstepModel, make_stairstep_pipeline
    >>> from stairsense.export._export import export_model
    >>> rng = np.random.default_rng(0)
    >>> samples = (rng.normal(size=(1600, 3)) * np.repeat(1 + np.arange(80) % 2, 20)[:, None]).astype(np.float32)
    >>> offsets = np.arange(81) * 20
    >>> X, y = window_features(samples, offsets), np.arange(80) % 2
    >>> model = StairstepModel.train(make_stairstep_pipeline(k=5, gamma=0.5), X, y,
    ...                              config=PipelineConfig(), feature_names=FEATURE_NAMES)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = export_model(model, d + "/stairs.onnx", validation=(samples, offsets))
    ...     onnx_model = OnnxStairModel(d + "/stairs.onnx", config=PipelineConfig())
    >>> bool((onnx_model.predict_windows(samples, offsets) == model.predict(X)).all())
    True
    """

    def __init__(self, path, config: PipelineConfig | None = None, *, threads: int = 1):
        import onnxruntime as ort

        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such model file")
        with open(self.path, "rb") as f:
            head = f.read(8)
        ort_format = _is_ort_format(self.path, head)
        options = session_options(threads)
        if ort_format:
            options.add_session_config_entry("session.load_model_format", "ORT")
            source = str(self.path)
        else:
            source = _read_onnx(self.path).SerializeToString()
        try:
            self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # ORT raises its own exception types per failure kind
            raise OnnxModelError(
                f"{self.path}: ONNX Runtime cannot load this model ({type(exc).__name__}: {exc}); "
                "it may be truncated, corrupt or from a newer exporter — export it again"
            ) from exc
        self.metadata = read_metadata(self._session.get_modelmeta().custom_metadata_map, self.path)
        if ort_format:
            _check_metadata(self.path, self.metadata)
        # A record from before a field existed means that field's old value (step_context 0).
        self.config = PipelineConfig.from_record(self.metadata["config"])
        if config is not None:
            try:
                self.config = self.config.agree(config)
            except ValueError as exc:
                raise OnnxModelError(f"{self.path}: {exc}") from None
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        self.n_columns = int(inputs["samples"][1])
        #: Features per window of each input the host computes (``step_context``, ``height``), 0 without it.
        self._host_widths = {name: int(inputs[name][1]) if name in inputs else 0 for name in _HOST_INPUTS}
        self.n_step_context, self.n_height = self._host_widths["step_context"], self._host_widths["height"]
        # Replay and the phone feed height rows exactly when the configuration reads the barometer (the
        # pressure stream is what they read it from); a graph that disagrees could never be fed.
        if bool(self.n_height) != self.config.barometer:
            raise OnnxModelError(f"{self.path}: its configuration has barometer={self.config.barometer} but the graph "
                                 f"{'has a' if self.n_height else 'has no'} 'height' input; export the model again "
                                 "with stairsense export")
        from stairsense.features import HEIGHT_NAMES

        if self.n_height and self.n_height != len(HEIGHT_NAMES):
            raise OnnxModelError(f"{self.path}: its graph takes {self.n_height} height features per window where this "
                                 f"stairsense computes {len(HEIGHT_NAMES)} (an export from an older version); train "
                                 "the model again with stairsense train --barometer and export it")
        self._has_onset = ONSET_OUTPUT in {o.name for o in self._session.get_outputs()}

    def _host_rows(self, name: str, rows, n_windows: int):
        """``rows`` of the host-computed input ``name`` as float32 (W, width), or None for a graph without it."""
        what, without, source = _HOST_INPUTS[name]
        width = self._host_widths[name]
        if width == 0:
            if rows is not None:
                raise ValueError(f"{self.path.name} takes no {what} features (its configuration has {without}); "
                                 f"call it without {name}")
            return None
        if rows is None:
            raise ValueError(f"{self.path.name} takes {width} {what} features per window: pass {name}=(W, {width}) rows "
                             f"({source})")
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        if rows.shape != (n_windows, width):
            raise ValueError(f"{name} must have shape ({n_windows}, {width}), one row per window; got {rows.shape}")
        return rows

    def _windows(self, samples, offsets):
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        offsets = np.asarray(offsets, dtype=np.intp)
        if samples.ndim != 2 or samples.shape[1] != self.n_columns:
            raise ValueError(
                f"{self.path.name} takes standardized samples with {self.n_columns} columns per row; got shape "
                f"{samples.shape}"
            )
        if offsets.ndim != 1 or offsets.size < 1 or offsets[0] < 0 or offsets[-1] > samples.shape[0]:
            raise ValueError(f"offsets must be W + 1 window boundaries within [0, {samples.shape[0]}], got {offsets[:5]}…")
        counts = np.diff(offsets)
        if (counts < 2).any():
            w = int(np.flatnonzero(counts < 2)[0])
            raise ValueError(f"window {w} has {counts[w]} samples; every window needs at least 2 (spec §3.6 resolution 7)")
        return samples, offsets

    def decision_windows(self, samples, offsets, step_context=None, height=None) -> np.ndarray:
        """KOMD scores (≥ 0 means STAIR) of each window, float32 as the phone computes them.

        Parameters
        ----------
        samples : array-like of shape (N, 3) (or (N, 6) for Mizell models)
            Standardized samples of all windows, concatenated.
        offsets : array-like of int, shape (W + 1,)
            Window w is ``samples[offsets[w]:offsets[w + 1]]``.
        step_context : array-like of shape (W, 36), optional
            Required when the model takes step-context features (:attr:`n_step_context` > 0, its
            configuration has ``step_context > 0``): row w holds window w's
            :data:`~stairsense.features.STEP_CONTEXT_NAMES` features; fed to the graph as float32.
        height : array-like of shape (W, 7), optional
            Required when the model reads the barometer (:attr:`n_height` > 0, its configuration
            has ``barometer``): row w holds window w's :data:`~stairsense.features.HEIGHT_NAMES`
            features; fed to the graph as float32.

        Returns
        -------
        ndarray of shape (W,)

        Raises
        ------
        ValueError
            When ``step_context`` or ``height`` is missing for a model that takes it (or given to
            one without), or its shape is not (W, 36) or (W, 7).
        """
        return self._run(samples, offsets, step_context, height, ("score",))[:, 0]

    def _run(self, samples, offsets, step_context, height, outputs) -> np.ndarray:
        samples, offsets = self._windows(samples, offsets)
        n_windows = offsets.size - 1
        inputs = {"step_context": self._host_rows("step_context", step_context, n_windows),
                  "height": self._host_rows("height", height, n_windows)}
        return run_windows(self._session, samples, offsets, inputs, outputs)

    def predict_windows(self, samples, offsets, step_context=None, height=None) -> np.ndarray:
        """Labels (1 = STAIR, 0 = NO_STAIR) of each window, the graph's ``stair`` (each head's rule at
        a tie); arguments as :meth:`decision_windows`."""
        return self.decide_windows(samples, offsets, step_context, height)[0]

    @property
    def onset_threshold(self) -> float | None:
        """The trees' flight-onset threshold the file was exported with (None: the graph has no
        ``onset_score`` output)."""
        return self.metadata.get("onset_threshold") if self._has_onset else None

    def decide_windows(self, samples, offsets, step_context=None, height=None) -> tuple[np.ndarray, np.ndarray]:
        """Labels of each window (the graph's ``stair``) and whether it reaches the onset threshold
        (``onset_score`` > 0, the rule of the trees, the only head with one; all False for a graph
        without that output), for the step vote; arguments as :meth:`decision_windows`, one
        ``session.run`` per window."""
        outputs = ("stair", ONSET_OUTPUT) if self._has_onset else ("stair",)
        ran = self._run(samples, offsets, step_context, height, outputs)
        onset = ran[:, 1] > 0 if self._has_onset else np.zeros(ran.shape[0], dtype=bool)
        return np.where(ran[:, 0] > 0, _STAIR, _NO_STAIR), onset

    def predict(self, X):
        raise TypeError(
            f"{self.path.name} computes its features inside the graph, so it takes window samples: call "
            "predict_windows(samples, offsets), as replay and evaluate do"
        )

    def __repr__(self) -> str:
        return f"OnnxStairModel({str(self.path)!r}, {len(self.metadata.get('feature_names', []))} features)"


def run_windows(session, samples, offsets, inputs, outputs=("score",)) -> np.ndarray:
    """float32 ``outputs`` (each ``[1]``; a boolean one as 0 or 1) of each window ``samples[offsets[w]:offsets[w + 1]]``, shape
    (W, len(outputs)), one ``session.run`` per window as on the phone, with row w of every array in
    ``inputs`` (graph input name → (W, k) float32 rows; None entries are inputs the graph does not take)."""
    rows = {name: np.asarray(value, np.float32) for name, value in inputs.items() if value is not None}
    run, outputs = session.run, list(outputs)
    scores = [[out[0] for out in run(outputs, {"samples": samples[a:b], **{name: r[w : w + 1] for name, r in rows.items()}})]
              for w, (a, b) in enumerate(zip(offsets[:-1], offsets[1:]))]
    return np.array(scores, dtype=np.float32).reshape(-1, len(outputs))


def inspect_model(path) -> dict:
    """Describe an exported model: its metadata, file size, inputs/outputs and operators.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    dict
        ``metadata`` (configuration, selected feature names, training summary, version, precision,
        parity results, content hash), ``size_bytes``, ``inputs``/``outputs`` (name, type, shape),
        ``opset`` and ``operators`` (op type → count; empty for ORT-format files).

    Raises
    ------
    OnnxModelError
        For anything that is not an intact stairsense export (see :class:`OnnxStairModel`).
    """
    model = OnnxStairModel(path)
    session = model._session
    info = {
        "path": str(model.path),
        "size_bytes": os.path.getsize(model.path),
        "metadata": model.metadata,
        "inputs": [{"name": i.name, "type": i.type, "shape": i.shape} for i in session.get_inputs()],
        "outputs": [{"name": o.name, "type": o.type, "shape": o.shape} for o in session.get_outputs()],
        "opset": None,
        "operators": {},
    }
    if not _is_ort_format(model.path, model.path.read_bytes()[:8]):
        proto = onnx.load_model(model.path)
        info["opset"] = {o.domain or "ai.onnx": o.version for o in proto.opset_import}
        info["operators"] = dict(collections.Counter(n.op_type for n in proto.graph.node))
    return info
