"""What a configuration makes the phone do, measured rather than assumed.

Three measurements feed the energy model:

* **Window counts per activity** from a replay of a log through the real front end
  (:func:`measure_windows`): samples, windows opened, windows the duration filter drops before
  classification, windows classified, their median length.
* **Stage costs on this machine** (:func:`measure_stage_costs`): nanoseconds per sample of the
  actual smoothing, gravity/rotation and segmentation code and, with the barometer, of the height
  filter; microseconds per kept window of the host's step-context and height features (the work
  outside the ONNX graph); medians over repeats. The device profile's ``cpu.speed_ratio`` scales
  them to the phone.
* **The exported model** (:func:`inference_cost`): multiply-adds and element operations per
  inference counted node by node from the ONNX graph itself, and its median latency under ONNX
  Runtime on a window of the median length, split into the window features and the classifier
  (the graph computes both, as on the phone).
"""
from __future__ import annotations

import hashlib
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from stairsense.features import HeightContext, StepContext, step_signals
from stairsense.stream import (
    Activity,
    Barometer,
    PipelineConfig,
    CausalBufferMean,
    HeightFilter,
    Standardizer,
    resolve_orientation,
    run_front_end,
    segment_steps,
    simulate,
    sliding_windows,
)

from ._model import OPTIONAL_STREAMS

if TYPE_CHECKING:  # onnx is imported where a graph is read
    import onnx

__all__ = [
    "BAROMETER_HZ",
    "ActivityCounts",
    "Workload",
    "measure_workload",
    "StageCosts",
    "InferenceCost",
    "activity_class",
    "measure_windows",
    "measure_logs_windows",
    "add_up_counts",
    "count_windows",
    "measure_stage_costs",
    "inference_cost",
    "selected_features",
    "count_operations",
]

#: The day is described in three activity classes (``--day "16h idle, 6h walking, 10m stairs"``).
# A ramp is walked with level steps (the phone sees walking); in a lift or on an escalator the person
# stands, so those rides are idle like every other posture.
_CLASS_OF = {Activity.WALKING: "walking", Activity.WALKING_UPSTAIRS: "stairs", Activity.WALKING_DOWNSTAIRS: "stairs",
             Activity.STAIRS: "stairs", Activity.RAMP_UP: "walking", Activity.RAMP_DOWN: "walking"}


def activity_class(codes: np.ndarray) -> np.ndarray:
    """Map per-sample :class:`Activity` codes to ``idle`` / ``walking`` / ``stairs`` (postures,
    transitions and unlabelled samples are ``idle``: the phone is not stepping)."""
    out = np.full(np.shape(codes), "idle", dtype=object)
    for code, name in _CLASS_OF.items():
        out[np.asarray(codes) == int(code)] = name
    return out


#: The barometer's rate in a configuration that reads it (``barometer=True``), unless the workload
#: sets one (:attr:`Workload.extra_streams`): the reading rate the pipeline's height filter assumes
#: (``WindowRowStage`` builds its :class:`~stairsense.stream.HeightFilter` with the defaults).
BAROMETER_HZ = float(HeightFilter().pressure_rate_hz)


def _checked_extra_streams(extra_streams) -> dict[str, float]:
    """``extra_streams`` (name → Hz) as a dict of floats, after checking each name is in
    :data:`OPTIONAL_STREAMS` and each rate a finite number > 0; ``ValueError`` names the stream."""
    checked = {}
    for name, rate in dict(extra_streams).items():
        if name not in OPTIONAL_STREAMS:
            raise ValueError(f"extra stream {name!r} is not one a configuration can turn on; known: "
                             f"{list(OPTIONAL_STREAMS)}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not np.isfinite(rate) or rate <= 0:
            raise ValueError(f"the {name}'s sampling rate must be a number of Hz > 0, got {rate!r}")
        checked[name] = float(rate)
    return checked


@dataclass
class ActivityCounts:
    """Front-end work during one activity class of a replayed log."""

    seconds: float = 0.0
    samples: int = 0
    opened: int = 0
    dropped: int = 0
    classified: int = 0

    def add(self, other: "ActivityCounts") -> None:
        """Accumulate another log's counts for the same activity class."""
        self.seconds += other.seconds
        self.samples += other.samples
        self.opened += other.opened
        self.dropped += other.dropped
        self.classified += other.classified

    def per_second(self) -> dict[str, float]:
        s = self.seconds or 1.0
        return {"samples": self.samples / s, "opened": self.opened / s, "dropped": self.dropped / s,
                "classified": self.classified / s}


def _median_kept_length(windows) -> int:
    kept = windows.kept
    if not kept.any():
        return 0
    return int(np.median((windows.stop - windows.start)[kept]))


def measure_logs_windows(logs, config: PipelineConfig) -> tuple[dict[str, ActivityCounts], int]:
    """:func:`measure_windows` summed over ``logs``, and the median classified window length
    (see :func:`add_up_counts`)."""
    return add_up_counts([measure_windows(log, config) for log in logs], config)


def add_up_counts(per_log, config: PipelineConfig) -> tuple[dict[str, ActivityCounts], int]:
    """Sum per-log ``(counts, median window)`` pairs; the window length is the median of the
    logs' medians, or with no classified window 0.6 s at the configured rate, a typical step."""
    totals: dict[str, ActivityCounts] = {}
    lengths = []
    for counts, median in per_log:
        for name, c in counts.items():
            totals.setdefault(name, ActivityCounts()).add(c)
        if median:
            lengths.append(median)
    window = int(np.median(lengths)) if lengths else max(3, round(0.6 * config.rate_hz))
    return totals, window


def measure_windows(log, config: PipelineConfig) -> tuple[dict[str, ActivityCounts], int]:
    """Replay ``log`` through the front end of ``config`` and count its work per activity class.

    Parameters
    ----------
    log : SensorLog
        Gap-free; with per-sample labels the counts are split into idle / walking / stairs,
        without them everything counts as ``"log"``.
    config : PipelineConfig
        With ``rate_hz`` set (the sampling rate the phone would use).

    Returns
    -------
    counts : dict of str → ActivityCounts
    median_window : int
        Median length, in samples, of the windows that reach the classifier (0 if none).
    """
    return count_windows(run_front_end(log, config))


def count_windows(result) -> tuple[dict[str, ActivityCounts], int]:
    """:func:`measure_windows` from a front-end pass already made (a
    :class:`~stairsense.stream.FrontEndResult` of a whole log), so a caller that needs the
    windows anyway does not replay the log twice."""
    log, windows, first = result.log, result.windows, result.standardized.first
    if log.label is None:
        sample_class = np.full(len(log), "log", dtype=object)
    else:
        sample_class = activity_class(log.label)
    dt = np.diff(log.t_ns, append=log.t_ns[-1] + (log.t_ns[-1] - log.t_ns[-2] if len(log) > 1 else 0)) / 1e9
    # A window belongs to the activity at its closing sample: that is when the phone does its work.
    window_class = sample_class[first + np.maximum(windows.stop - 1, 0)] if len(windows) else np.zeros(0, object)
    counts = {}
    for name in dict.fromkeys(sample_class.tolist()):
        in_class = sample_class == name
        mine = window_class == name
        counts[name] = ActivityCounts(seconds=float(dt[in_class].sum()), samples=int(in_class.sum()),
                                      opened=int(mine.sum()), dropped=int((mine & ~windows.kept).sum()),
                                      classified=int((mine & windows.kept).sum()))
    return counts, _median_kept_length(windows)


@dataclass
class StageCosts:
    """Desktop cost of the host's front-end stages of one configuration (medians over repeats);
    ``machine`` records where they were measured.

    Attributes
    ----------
    smoothing_ns, gravity_rotation_ns, segmentation_ns : float
        Nanoseconds per input sample.
    step_context_us : float or None
        Microseconds per kept window of the step-shape and step-context features the host
        computes outside the ONNX graph (0 for a configuration with ``step_context = 0``).
    height_filter_ns : float or None
        Nanoseconds per input sample of the height filter (0 for a configuration without the
        barometer).
    height_features_us : float or None
        Microseconds per kept window of the 7 height features (0 without the barometer).

    A None figure was not measured (a record from before that work was priced);
    :func:`~._model.estimate` refuses to price the work with it rather than count it as free.
    """

    smoothing_ns: float
    gravity_rotation_ns: float
    segmentation_ns: float
    step_context_us: float | None = None
    machine: str = ""
    height_filter_ns: float | None = None
    height_features_us: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


_BENCH_LOGS: dict = {}


def _bench_log(rate_hz: float):
    """A simulated 3-minute log (walking and stairs, all streams, air pressure) at ``rate_hz``,
    built once. The barometer draws from a random stream of its own, so every other array is
    the log's without it."""
    key = float(rate_hz)
    if key not in _BENCH_LOGS:
        _BENCH_LOGS[key] = simulate(minutes=3, rate_hz=key, seed=11, barometer=Barometer(rate_hz=BAROMETER_HZ))
    return _BENCH_LOGS[key]


_STAGE_TIMES: dict = {}


def _stage_time(key, fn, repeats: int) -> float:
    """Median seconds of ``fn``, measured once per process for each ``key``: configurations that
    run the same code share one figure, so comparisons between them are free of timing noise."""
    if key not in _STAGE_TIMES:
        _STAGE_TIMES[key] = _median_seconds(fn, repeats)
    return _STAGE_TIMES[key]


def _windower_key(config: PipelineConfig) -> tuple:
    """What the configured windower's windows depend on."""
    if config.segmentation == "pattern":
        return ("pattern", config.peak_threshold, config.valley_threshold, config.hysteresis, config.min_step_s,
                config.max_step_s, config.threshold_window_s, config.threshold_floor)
    return ("sliding", config.window_ms, config.window_overlap)


def _windows(config: PipelineConfig, reference):
    """The configured windower's windows on a standardized stream."""
    if config.segmentation == "pattern":
        return segment_steps(reference.t_ns, reference.vertical, config)
    return sliding_windows(reference.t_ns, config)


def measure_stage_costs(config: PipelineConfig, repeats: int = 7) -> StageCosts:
    """Time the actual per-sample front-end code of ``config`` on a simulated log (desktop).

    Smoothing is timed alone (:class:`~stairsense.stream.CausalBufferMean` over ``smooth_ms``);
    gravity removal and rotation as :class:`~stairsense.stream.Standardizer` without smoothing
    (for ``linear`` that is the rotation only: the phone's fusion removed gravity); segmentation as
    the configured windower on a reference vertical stream (the rotation-vector method's), once per
    rate. Each figure is the median of ``repeats`` runs,
    per input sample. Window features and the classifier are priced from the exported graph
    (:func:`inference_cost`), since that is what the phone runs.

    The step context is what the phone computes per kept window outside the graph
    (``android_stub/core`` ``WindowRows.close``): the window's step signals, its step shape and
    the running context, timed here as the Python reference (:func:`stairsense.features.step_signals`
    and :class:`stairsense.features.StepContext`) over the kept windows of the configured windower
    on the reference stream, per kept window. That time is mostly numpy's per-call overhead
    (a few dozen small array operations per window), so × ``cpu.speed_ratio`` it is an upper bound for
    the Java core's loop over a few hundred samples.

    With the barometer (``barometer=True``) the height work is timed the same way, on
    the reference stream and the log's air pressure at its samples, as ``WindowRowStage`` runs it:
    the :class:`~stairsense.stream.HeightFilter` per sample, and
    :class:`~stairsense.features.HeightContext` per kept window. Both are the Python reference the
    Java core mirrors operation for operation: the filter is a pure-Python loop of some 30
    floating-point operations per sample, each paying the interpreter's dispatch (tens of ns against
    about one compiled), and the height features are a handful of numpy calls per window, so ×
    ``cpu.speed_ratio`` both are upper bounds, by the same argument as the step context's.
    """
    import platform

    rate = float(config.rate_hz or 50.0)
    log = _bench_log(rate)
    method = resolve_orientation(config, log)
    n = len(log)
    smooth_s = 0.0
    if config.smoothing != "none":
        span = int(config.smooth_ms * 1e6)
        smooth_s = _stage_time(("smooth", rate, span), lambda: CausalBufferMean(span_ns=span).process(log.t_ns, log.acc),
                               repeats)
    raw = config.replace(smoothing="none")

    def standardize():
        return Standardizer(raw, method, rate).process(log.t_ns, log.acc, gyro=log.gyro, rotvec=log.rotvec,
                                                       linacc=log.linacc)

    std_s = _stage_time(("standardize", rate, method, raw.gravity_ms), standardize, repeats)
    # The windower's per-sample work hardly depends on which orientation produced the vertical
    # signal; timing it once per rate on one reference signal keeps configurations comparable.
    reference = Standardizer(raw, "rotvec", rate).process(log.t_ns, log.acc, rotvec=log.rotvec)
    seg_s = _stage_time((rate, *_windower_key(config)), lambda: _windows(config, reference), repeats)
    windows = _windows(config, reference)
    pressure = log.pressure[reference.first:reference.first + reference.t_ns.size]
    height_filter_ns, height_features_us = _height_costs(config, reference, pressure, windows, rate, repeats)
    return StageCosts(smoothing_ns=smooth_s / n * 1e9, gravity_rotation_ns=std_s / n * 1e9,
                      segmentation_ns=seg_s / len(reference.t_ns) * 1e9,
                      step_context_us=_step_context_us(config, reference, windows, rate, repeats),
                      machine=platform.machine(), height_filter_ns=height_filter_ns,
                      height_features_us=height_features_us)


def _step_context_us(config: PipelineConfig, reference, windows, rate: float, repeats: int) -> float:
    """Desktop µs per kept window of the host's step-context work (:func:`measure_stage_costs`)."""
    kept = np.flatnonzero(windows.kept)
    # a front end that keeps no step of a simulated walk classifies none in a replay either
    if config.step_context == 0 or not kept.size:
        return 0.0

    def close_windows():  # what WindowRows.close does for each kept window on the phone
        context = StepContext(config.step_context, config.step_context_gap_s)
        for i in kept:
            a, b = windows.start[i], windows.stop[i]
            signals = step_signals(reference.samples[a:b], reference.vertical[a:b])
            context.push(signals[:, 0], signals[:, 1], 1.0 / rate, windows.t_start_ns[i], windows.t_end_ns[i])

    key = ("step_context", rate, *_windower_key(config), config.step_context, config.step_context_gap_s)
    return _stage_time(key, close_windows, repeats) / kept.size * 1e6


def _height_costs(config: PipelineConfig, reference, pressure, windows, rate: float,
                  repeats: int) -> tuple[float, float]:
    """Desktop ns per sample of the height filter and µs per kept window of the height features
    (:func:`measure_stage_costs`); 0 and 0 for a configuration without the barometer."""
    if not config.barometer:
        return 0.0, 0.0

    def run_filter():  # WindowRowStage's filter over the stream it standardized
        return HeightFilter(max_gap_s=config.max_gap_s).process(reference.t_ns, reference.vertical, pressure)

    filter_s = _stage_time(("height_filter", rate, config.max_gap_s), run_filter, repeats)
    filter_ns = filter_s / reference.t_ns.size * 1e9
    kept = np.flatnonzero(windows.kept)
    if not kept.size:
        return filter_ns, 0.0
    height, speed = run_filter()

    def close_windows():  # what the phone computes for each kept window beside the step context
        context = HeightContext(config.step_context, config.step_context_gap_s)
        for i in kept:
            a, b = windows.start[i], windows.stop[i]
            context.push(height[a:b], speed[a:b], windows.t_start_ns[i], windows.t_end_ns[i])

    key = ("height_features", rate, config.max_gap_s, *_windower_key(config), config.step_context,
           config.step_context_gap_s)
    return filter_ns, _stage_time(key, close_windows, repeats) / kept.size * 1e6


@dataclass
class Workload:
    """Everything measured about one configuration, independent of the phone.

    Attributes
    ----------
    config : dict
        The :class:`~stairsense.PipelineConfig` (as a dict) with ``orientation`` resolved.
    counts : dict of str → ActivityCounts
        Per activity class of the replayed log(s).
    stages : StageCosts
    inference : InferenceCost or None
        None prices inference at zero (and says so in the report).
    source : str
        What was replayed.
    extra_streams : dict of str → float
        Sensors from :data:`~._model.OPTIONAL_STREAMS` run at their own rates, in Hz
        (``{"barometer": 10.0}``): turned on beside a configuration that does not read them, or
        the rate of one it reads (the barometer of ``barometer=True``, else at
        :data:`BAROMETER_HZ`). :meth:`side_streams` gives both.
    """

    config: dict
    counts: dict[str, ActivityCounts]
    stages: StageCosts
    inference: InferenceCost | None
    source: str = ""
    extra_streams: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        self.extra_streams = _checked_extra_streams(self.extra_streams)

    @property
    def rate_hz(self) -> float:
        return float(self.config["rate_hz"])

    def side_streams(self) -> dict[str, float]:
        """Every sensor that runs at its own rate, name → Hz: the barometer a configuration with
        ``barometer=True`` reads (at :data:`BAROMETER_HZ` unless :attr:`extra_streams` sets its
        rate), and the extra streams."""
        reads = {"barometer": BAROMETER_HZ} if self.config.get("barometer", False) else {}
        return {**reads, **self.extra_streams}

    def to_dict(self) -> dict:
        return {"config": self.config, "counts": {k: asdict(v) for k, v in self.counts.items()},
                "stages": self.stages.to_dict(), "inference": None if self.inference is None else self.inference.to_dict(),
                "source": self.source, "extra_streams": dict(self.extra_streams)}

    @classmethod
    def from_dict(cls, data: dict) -> "Workload":
        return cls(config=data["config"], counts={k: ActivityCounts(**v) for k, v in data["counts"].items()},
                   stages=StageCosts(**data["stages"]),
                   inference=None if data["inference"] is None else InferenceCost(**data["inference"]),
                   source=data.get("source", ""), extra_streams=data.get("extra_streams", {}))

    def day_from_log(self) -> dict[str, float]:
        """The replayed log's own activity mix, scaled to 24 hours."""
        total = sum(c.seconds for c in self.counts.values())
        if total <= 0:
            raise ValueError(f"{self.source}: the replayed log has no duration")
        return {name: c.seconds / total * 86400 for name, c in self.counts.items()}


# --- the exported model -------------------------------------------------------------------------
_ELEMENTWISE = {"Abs", "Add", "And", "Cast", "Clip", "Div", "Exp", "Greater", "GreaterOrEqual", "LessOrEqual", "Max",
                "Min", "Mul", "Sqrt", "Sub", "Where", "Neg", "Pow", "Less", "Not", "Or", "Relu", "Sigmoid", "Tanh"}
_REDUCE = {"ReduceMax", "ReduceMean", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSum", "ReduceSumSquare"}


@dataclass
class InferenceCost:
    """Per-window cost of the exported graph at one window length (desktop, ONNX Runtime).

    ``features_us`` is the latency of the window-features part alone (the same selected features,
    :func:`stairsense.export.window_features_model`), ``classifier_us`` the rest of the graph
    (scaling and the RBF decision): the full graph's latency minus ``features_us``, floored at 0.
    Operation counts are of the full graph.
    """

    window_samples: int
    features_us: float
    classifier_us: float
    macs: int
    elementwise: int
    by_node: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def count_operations(model: onnx.ModelProto, window_samples: int) -> tuple[int, int, dict]:
    """Multiply-adds and element operations of one inference, from the graph's nodes.

    The dynamic window length is fixed to ``window_samples`` and ONNX shape inference gives every
    tensor's shape. ``MatMul``/``Gemm`` count M·K·N multiply-adds; element-wise nodes one operation
    per output element; reductions one per input element. Indexing and shape nodes count zero, and
    so does a node whose inputs are all constants (the cast of stored weights, a trees head's
    per-shape tables): ONNX Runtime folds it once when it loads the model.
    A node whose shapes cannot be inferred raises (the count would silently be low otherwise).

    Returns
    -------
    macs, elementwise : int
    by_node : dict
        op type → operations (MACs for matrix products).
    """
    import onnx
    from onnx import numpy_helper, shape_inference

    model = onnx.ModelProto.FromString(model.SerializeToString())
    for value in model.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                dim.Clear()
                dim.dim_value = int(window_samples)
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for value in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = value.type.tensor_type.shape.dim
        shapes[value.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in inferred.graph.initializer:
        shapes[init.name] = list(numpy_helper.to_array(init).shape)
    macs = elementwise = 0
    by_node: dict[str, int] = {}
    constant = {init.name for init in inferred.graph.initializer}
    for node in inferred.graph.node:
        op = node.op_type
        if node.input and all(name in constant for name in node.input if name):
            constant.update(node.output)
            continue
        if op in ("MatMul", "Gemm"):
            a, out = _known_shape(shapes, node, node.input[0]), _known_shape(shapes, node, node.output[0])
            count = int(np.prod(out)) * int(a[-1] if not (op == "Gemm" and _trans_a(node)) else a[0])
            macs += count
        elif op in _ELEMENTWISE or op in _REDUCE:
            # an element-wise op costs one operation per output, a reduction one per input
            count = int(np.prod(_known_shape(shapes, node, node.output[0] if op in _ELEMENTWISE else node.input[0])))
            elementwise += count
        else:
            continue
        by_node[op] = by_node.get(op, 0) + count
    return macs, elementwise, by_node


def _known_shape(shapes: dict, node, name: str) -> list[int]:
    shape = shapes.get(name)
    if shape is None or None in shape:
        raise ValueError(f"cannot infer the shape of {name!r}, an input or output of {node.op_type} node "
                         f"{node.name or node.output[0]}")
    return shape


def _trans_a(node) -> bool:
    return any(a.name == "transA" and a.i for a in node.attribute)


def _paired_latency_us(first: onnx.ModelProto, second: onnx.ModelProto, window: np.ndarray,
                       repeats: int) -> tuple[float, float]:
    """Median latencies of two graphs on the same window, runs interleaved so that both see the
    same machine load (their difference is what the split into features and classifier needs)."""
    import onnxruntime as ort

    from stairsense.export import session_options

    options = session_options(1)
    options.log_severity_level = 3  # the features-only graph leaves unused constants ORT warns about
    sessions = [ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
                for m in (first, second)]
    # A graph may also take the host's step_context [1, 36] and height [1, 7]; their values do not change the cost.
    feeds = [{i.name: window if i.name == "samples" else np.zeros(i.shape, np.float32) for i in s.get_inputs()}
             for s in sessions]
    times = ([], [])
    for rep in range(repeats + 10):
        for which in (0, 1):
            start = time.perf_counter()
            sessions[which].run(None, feeds[which])
            if rep >= 10:  # warm-up runs are not timed
                times[which].append(time.perf_counter() - start)
    return statistics.median(times[0]) * 1e6, statistics.median(times[1]) * 1e6


def selected_features(model: onnx.ModelProto) -> tuple[list[int], list[str]]:
    """Indices of the features an exported stair-step graph computes, and its input feature names,
    from the model's ``stairsense`` metadata.

    Raises
    ------
    ValueError
        If the graph carries no stairsense metadata (not a ``stairsense export`` model).
    """
    from stairsense.export import OnnxModelError
    from stairsense.export._metadata import read_metadata

    meta = read_metadata(model)
    names, inputs = meta.get("feature_names"), meta.get("input_feature_names")
    if not names or not inputs:
        raise OnnxModelError("not a stairsense stair-step model (no feature names in its metadata); export one with "
                             "stairsense export")
    return [inputs.index(n) for n in names], list(inputs)


def inference_cost(model: onnx.ModelProto, window_samples: int, selected=None, input_names=None,
                   repeats: int = 300) -> InferenceCost:
    """Operation count and median ONNX Runtime latency of one window of ``window_samples`` samples.

    Parameters
    ----------
    model : onnx.ModelProto
        An exported stair-step graph (:func:`stairsense.export.build_onnx_model` or a file from
        ``stairsense export``).
    window_samples : int
        Window length to price (the median classified window of the replay).
    selected, input_names : optional
        The features the graph computes; read from the model's metadata when omitted.

    Notes
    -----
    The session uses the phone glue's options (:func:`stairsense.export.session_options`, one
    thread). Latencies include the Python binding's per-call overhead (a few µs, measured in
    ``benchmarks/results/export.md``), which the phone's C/Java API does not pay.
    """
    from stairsense.export import window_features_model
    from stairsense.features import host_feature_columns

    if selected is None:
        selected, input_names = selected_features(model)
    # The graph computes the Table 12.1 features it keeps; step-context and height ones come from the host.
    n_table = len(input_names) - sum(host_feature_columns(input_names).values())
    window_samples = max(2, int(window_samples))
    macs, elementwise, by_node = count_operations(model, window_samples)
    width = int(model.graph.input[0].type.tensor_type.shape.dim[1].dim_value)
    window = np.random.default_rng(0).normal(size=(window_samples, width)).astype(np.float32)
    key = ("ort", hashlib.sha256(model.SerializeToString()).hexdigest(), window_samples)
    if key not in _STAGE_TIMES:  # one measurement per graph and length: comparisons are noise-free
        table = [i for i in selected if i < n_table]
        if table:
            features = window_features_model(table, list(input_names)[:n_table])
            _STAGE_TIMES[key] = _paired_latency_us(model, features, window, repeats)
        else:  # every kept feature comes from the host: the graph is the classifier alone
            _STAGE_TIMES[key] = (_paired_latency_us(model, model, window, repeats)[0], 0.0)
    full_us, features_us = _STAGE_TIMES[key]
    return InferenceCost(window_samples, features_us, max(0.0, full_us - features_us), macs, elementwise, by_node)


def measure_workload(logs, config: PipelineConfig, model: onnx.ModelProto | None = None, *,
                     selected=None, input_names=None, source: str = "", extra_streams=None,
                     stage_costs=measure_stage_costs, inference_costs=inference_cost) -> Workload:
    """Replay ``logs`` with ``config`` and measure every cost the energy model needs.

    Parameters
    ----------
    logs : SensorLog or list of SensorLog
        Replayed at ``config.rate_hz`` (required); counts add up over the logs.
    config : PipelineConfig
        ``orientation="auto"`` is resolved on the first log.
    model : onnx.ModelProto, optional
        The exported classifier; its cost is measured at the median classified window length.
    selected, input_names : optional
        The features the graph computes (read from its metadata when omitted).
    source : str
        A description for the report (file names).
    extra_streams : dict of str → float, optional
        Sensors from :data:`~._model.OPTIONAL_STREAMS` with their rates (``{"barometer": 10.0}``):
        run beside the configuration's own, or the rate of the barometer a configuration with
        ``barometer=True`` reads (:attr:`Workload.extra_streams`); priced as sensors and events,
        not replayed.
    stage_costs : callable, default=measure_stage_costs
        ``stage_costs(config) -> StageCosts`` for the configuration with its orientation resolved.
        The default times the stage code on this machine; a fixed table prices configurations
        with costs measured elsewhere, free of this machine's timing noise.
    inference_costs : callable, default=inference_cost
        ``inference_costs(model, window_samples, selected, input_names) -> InferenceCost``, called
        only with a ``model``. The default counts the graph's operations and times it under ONNX
        Runtime.
    """
    if config.rate_hz is None:
        raise ValueError("the energy model needs a sampling rate: set rate_hz in the configuration (or --rate)")
    extra_streams = _checked_extra_streams(extra_streams or {})  # before the replay, which takes a while
    logs = [logs] if not isinstance(logs, (list, tuple)) else list(logs)
    if not logs:
        raise ValueError("no log to replay")
    config = config.replace(orientation=resolve_orientation(config, logs[0]))
    totals, window = measure_logs_windows(logs, config)
    stages = stage_costs(config)
    inference = None if model is None else inference_costs(model, window, selected, input_names)
    return Workload(config=config.to_dict(), counts=totals, stages=stages, inference=inference, source=source,
                    extra_streams=extra_streams)
