"""One frozen, serialisable configuration of the on-device front end (DESIGN.md).

The same :class:`PipelineConfig` drives replay, training and export, and travels in an exported
model's metadata so a phone runs exactly what Python evaluated.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping, get_args

__all__ = ["PipelineConfig", "READ_ONLY_FIELDS", "config_file_section", "ORIENTATIONS", "ORIENTATION_METHODS"]

#: Sections a configuration file may carry beside ``pipeline`` (``stairsense energy optimise`` writes
#: them): options of ``train`` and ``export``, and the energy estimate that chose them.
FILE_SECTIONS = ("pipeline", "train", "export", "energy")

Smoothing = Literal["time", "count", "none"]
Orientation = Literal["auto", "rotvec", "ahrs", "vertical", "linear", "mizell"]
Segmentation = Literal["pattern", "sliding"]

#: Every value of ``PipelineConfig.orientation`` (command-line choices come from here).
ORIENTATIONS: tuple[str, ...] = get_args(Orientation)
#: The concrete methods, what ``auto`` resolves to per log (``resolve_orientation``).
ORIENTATION_METHODS: tuple[str, ...] = tuple(m for m in ORIENTATIONS if m != "auto")

#: PipelineConfig fields that only affect how a file is read, not the windows or features: a model
#: trained with one value replays (and exports) fine with another.
READ_ONLY_FIELDS = frozenset({"max_gap_s"})

# Fields added after configurations were first recorded in model files, and the value that
# reproduces what a record without them meant: models trained before the step context
# saw the 79 Table 12.1 features only, so a missing ``step_context`` is 0, not today's default;
# its gap came with it at 1.5 s, pinned so a new default cannot change what old records mean;
# models before the height features read no barometer, and decided every step alone; models before
# adaptive thresholds took them in m/s².
# PipelineConfig.from_record applies them; config *files* (partial settings) do not. The Java
# core keeps the same table (android_stub PipelineConfig.RECORDED_BEFORE; tests compare them).
_RECORDED_BEFORE = {"step_context": 0, "step_context_gap_s": 1.5, "barometer": False, "vote_steps": 1,
                    "threshold_window_s": 0.0, "threshold_floor": 1.0}

# Upper bounds, checked before anything is sized from them: the buffers hold this span of samples,
# the resampler emits rate × duration, the step context and the vote keep rings this long. A config
# comes from a model file or a request, so its sizes are bounded like any other claim; the phone's
# core keeps the same table (android_stub PipelineConfig.LIMITS; tests compare them).
_LIMITS = {"rate_hz": 1000.0, "smooth_ms": 60_000.0, "gravity_ms": 60_000.0, "threshold_window_s": 60.0,
           "max_step_s": 60.0, "window_ms": 60_000.0, "max_gap_s": 60.0, "step_context": 1000,
           "step_context_gap_s": 60.0, "vote_steps": 999}


@dataclass(frozen=True)
class PipelineConfig:
    """Parameters of the streaming front end, spec §3.3–§3.5 of donini-easymkl-komd-climbtheworld-admm.

    Parameters
    ----------
    rate_hz : float or None
        Resample the log to this rate (zero-order hold) before the front end; ``None`` keeps the
        native rate. The thesis compares 20, 30 and 50 Hz and chooses 30 (spec §3.2).
    smoothing : {"time", "count", "none"}
        Causal buffer mean of spec §3.3: evict by timestamp (default, the spec's proposal), by a
        fixed sample count, or no smoothing.
    smooth_ms : float
        Length of the smoothing buffer (300 ms in the thesis).
    gravity_ms : float
        Length of the gravity-estimation buffer (500 ms in the thesis, §3.4).
    orientation : str, one of :data:`ORIENTATIONS`
        How device-frame dynamic acceleration is put in the Earth frame. ``rotvec``: the recorded
        rotation vector (the thesis's method). ``linear``: rotate the phone's linear-acceleration
        stream. ``mizell``: accelerometer only, vertical and horizontal components. ``ahrs``: an
        orientation filter on accelerometer + gyroscope. ``vertical``: accelerometer only, projecting
        onto the gravity estimate (no heading). ``auto`` picks ``rotvec`` when the log recorded it,
        else ``vertical`` (not ``ahrs``: measured in benchmarks/results/orientation.md).
    segmentation : {"pattern", "sliding"}
        Data-dependent step windows (§3.5) or the time-based sliding-window baseline.
    peak_threshold, valley_threshold : float
        τ_peak and τ_valley of the pattern state machine, m/s² on the vertical axis (or multiples
        of the recent amplitude, see ``threshold_window_s``).
    hysteresis : float
        Half-width of the Schmitt band around zero used to find upward crossings, m/s² (or a
        multiple of the recent amplitude).
    threshold_window_s : float ≥ 0
        0 (default): the three thresholds above are absolute, in m/s², as in the thesis. > 0: they
        are multiples of the recent amplitude, the root mean square of z over the last
        ``threshold_window_s`` seconds (this sample included) but at least ``threshold_floor``: the
        same setting then suits a swinging hand's strong steps and a bag's damped ones better than
        any absolute one does, though not yet within 5 % on every recording (spec §3.5 leaves the
        thresholds to the implementer; benchmarks/results/step_detection.md measures both forms,
        chosen on some people and scored on others).
    threshold_floor : float > 0
        The amplitude, m/s², below which adaptive thresholds stop shrinking, so a still phone's noise
        is never a step; also the amplitude used until the first ``threshold_window_s`` has passed.
    min_step_s, max_step_s : float
        The duration filter: windows outside [min, max] are rejected without classification.
    window_ms, window_overlap : float
        Sliding-window baseline: length and fractional overlap (500 ms, 50 %).
    max_gap_s : float
        A gap between samples longer than this is an error on read (or a split with
        ``repair="split-gaps"``): the smoothing and gravity buffers would otherwise mix data from
        before and after the gap.
    step_context : int ≥ 0
        Add the 36 step-shape and step-context features (``stairsense.features.STEP_CONTEXT_NAMES``)
        after the Table 12.1 ones, the context taken over this many kept steps (this one included);
        0 = the 79 Table 12.1 features only, the thesis's setting (the paper reproductions pin it).
        Default 5: with it the shipped classifier (300-landmark Nyström KOMD, k = 49) reaches UCI
        HAPT leave-subjects-out F1 0.951 and stairs-up recall 0.929 instead of 0.903 and 0.868,
        meeting the targets 0.93 / 0.9 (benchmarks/results/robust_research.md, row B vs row A).
        Changes the feature columns, so it is not a read-only field: a model replays only with its own.
    step_context_gap_s : float > 0
        A new context run starts when a kept window starts more than this after the previous kept
        one ended (standing still, rejected windows): 1.5 s, as in the research of row B.
    barometer : bool, default=False
        Add the 7 height features (``stairsense.features.HEIGHT_NAMES``) after the others: the height
        change and vertical speed over each step, over its step context and over its last 20 steps,
        from the causal :class:`~stairsense.stream.HeightFilter` of the log's air pressure and the vertical
        acceleration. A model trained with it needs logs with pressure
        (a ``p`` column); one without is the accelerometer-only model. Needs ``step_context`` ≥ 1
        (the context the height is taken over). Changes the feature columns, like ``step_context``.
    vote_steps : int, odd ≥ 1, default=3
        Each kept window's stair decision is the majority over this many consecutive kept windows of
        its run centred on it (:class:`~stairsense.models.StepVote`; runs as ``step_context_gap_s``
        cuts them); 1 decides every window alone. A decision then waits for ``vote_steps // 2``
        more steps (about 0.6 s with 3). Default 3: level walking called stairs falls in every
        simulated placement and on real pockets and wrists, and stair-step recall rises
        (benchmarks/results/barometer.md and placements.md, against ``--vote 1``). The features
        are the same, so a model's windows are too; its decisions are not, so a model evaluated
        with one value replays and exports with it.
    """

    rate_hz: float | None = None
    smoothing: Smoothing = "time"
    smooth_ms: float = 300.0
    gravity_ms: float = 500.0
    orientation: Orientation = "auto"
    segmentation: Segmentation = "pattern"
    peak_threshold: float = 0.5
    valley_threshold: float = 0.5
    hysteresis: float = 0.1
    min_step_s: float = 0.3
    max_step_s: float = 2.0
    window_ms: float = 500.0
    window_overlap: float = 0.5
    max_gap_s: float = 0.3
    step_context: int = 5
    step_context_gap_s: float = 1.5
    barometer: bool = False
    vote_steps: int = 3
    threshold_window_s: float = 0.0
    threshold_floor: float = 1.0

    def __post_init__(self):
        choices = {"smoothing": get_args(Smoothing), "orientation": ORIENTATIONS,
                   "segmentation": get_args(Segmentation)}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"PipelineConfig.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        positive = ("smooth_ms", "gravity_ms", "min_step_s", "max_step_s", "window_ms", "max_gap_s",
                    "step_context_gap_s", "threshold_floor")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"PipelineConfig.{name} must be > 0, got {getattr(self, name)!r}")
        if self.rate_hz is not None and not self.rate_hz > 0:
            raise ValueError(f"PipelineConfig.rate_hz must be > 0 or None, got {self.rate_hz!r}")
        if self.min_step_s >= self.max_step_s:
            raise ValueError(
                f"PipelineConfig needs min_step_s < max_step_s, got {self.min_step_s} and {self.max_step_s}"
            )
        if not 0 <= self.window_overlap < 1:
            raise ValueError(f"PipelineConfig.window_overlap must be in [0, 1), got {self.window_overlap!r}")
        for name in ("peak_threshold", "valley_threshold", "hysteresis", "threshold_window_s"):
            if not getattr(self, name) >= 0:  # NaN too
                raise ValueError(f"PipelineConfig.{name} must be >= 0, got {getattr(self, name)!r}")
        # bool is an int; 5.0 from a JSON file is not (the field is a count of steps)
        if isinstance(self.step_context, bool) or not isinstance(self.step_context, int) or self.step_context < 0:
            raise ValueError(f"PipelineConfig.step_context must be an integer >= 0 (0 = the 79 Table 12.1 features "
                             f"only), got {self.step_context!r}")
        if not isinstance(self.barometer, bool):
            raise ValueError(f"PipelineConfig.barometer must be true or false, got {self.barometer!r}")
        if isinstance(self.vote_steps, bool) or not isinstance(self.vote_steps, int) or self.vote_steps < 1 \
                or self.vote_steps % 2 == 0:
            raise ValueError(f"PipelineConfig.vote_steps must be an odd integer >= 1 (1 = decide every step alone), "
                             f"got {self.vote_steps!r}")
        for name, limit in _LIMITS.items():
            value = getattr(self, name)
            if value is not None and value > limit:
                raise ValueError(f"PipelineConfig.{name} must be at most {limit:g}, got {value!r}")
        if self.barometer and self.step_context < 1:
            raise ValueError("PipelineConfig.barometer needs step_context >= 1: the height features are taken over "
                             "the step context as well as the step; set step_context (default 5)")

    def read_gap_s(self) -> float:
        """The longest time step between samples this front end bridges: the one gap rule.

        ``max_gap_s``, and no more than ``smooth_ms`` when time-mode smoothing sees the log's own
        timestamps (``rate_hz`` None): a longer step leaves the smoothing buffer empty. Readers use
        this limit (``max_gap_s=config.read_gap_s()``), so a step the reader lets through never
        stops the front end, and ``repair="split-gaps"`` splits exactly where the front end would
        stop. With ``rate_hz`` the front end sees the resampled grid, whose zero-order hold spans
        any step up to ``max_gap_s``.
        """
        if self.smoothing == "time" and self.rate_hz is None:
            return min(self.max_gap_s, self.smooth_ms / 1e3)
        return self.max_gap_s

    def agree(self, given: "PipelineConfig | Mapping[str, Any]") -> "PipelineConfig":
        """The configuration to run a model trained with this one, after checking ``given`` agrees.

        A model's windows and features are those of its training configuration, so replay,
        evaluation and export run it with that configuration; what a caller asks for may differ
        only in :data:`READ_ONLY_FIELDS` (how files are read), which it then sets.

        Parameters
        ----------
        given : PipelineConfig or mapping
            A whole configuration, or only the fields a user set (``--config`` and flags).

        Returns
        -------
        PipelineConfig
            This configuration with ``given``'s read-only fields.

        Raises
        ------
        ValueError
            When ``given`` differs in a field that changes windows or features, listing each such
            field with both values.

        Examples
        --------
        >>> trained = PipelineConfig(rate_hz=30, orientation="rotvec")
        >>> trained.agree({"orientation": "rotvec", "max_gap_s": 1.0}) == trained.replace(max_gap_s=1.0)
        True
        >>> trained.agree({"rate_hz": 50})
        Traceback (most recent call last):
        ...
        ValueError: the model was trained with another front end (rate_hz: model 30, given 50), ...
        """
        given = given.to_dict() if isinstance(given, PipelineConfig) else dict(given)
        ours = self.to_dict()
        diffs = [f"{k}: model {ours[k]!r}, given {v!r}" for k, v in given.items()
                 if k not in READ_ONLY_FIELDS and ours[k] != v]
        if diffs:
            raise ValueError(f"the model was trained with another front end ({'; '.join(diffs)}), so its windows and "
                             "features would not match its training set; leave those settings out (a model runs with "
                             "its own configuration) or retrain with them")
        return self.replace(**{k: v for k, v in given.items() if k in READ_ONLY_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PipelineConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown PipelineConfig keys {unknown}; known keys are {sorted(known)}")
        return cls(**data)

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> "PipelineConfig":
        """A configuration recorded with a model (a model file's header, an export's metadata).

        A record is complete when written, so a field it lacks did not exist yet: it takes the
        value that reproduces what the record meant (``step_context``
        0 for models trained on the 79 features), not today's default.
        """
        return cls.from_dict({**_RECORDED_BEFORE, **data})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_file(cls, path: str | Path) -> "PipelineConfig":
        """Read a JSON configuration file, naming the file in any error.

        The file holds the fields at the top level, or under ``"pipeline"`` beside the other
        sections of :data:`FILE_SECTIONS` (read by :func:`config_file_section`).
        """
        path = Path(path)
        data = _read_object(path)
        if "pipeline" in data:
            data = config_file_section(path, "pipeline")
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from exc

    def replace(self, **changes) -> "PipelineConfig":
        return dataclasses.replace(self, **changes)


def _read_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM from a Windows editor is fine
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a JSON PipelineConfig: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a PipelineConfig file holds a JSON object, got {type(data).__name__}")
    return data


def config_file_section(path: str | Path, section: str) -> dict[str, Any]:
    """One section (``"pipeline"``, ``"train"``, ``"export"``, ``"energy"``) of a sectioned
    configuration file, ``{}`` when absent or when the file is a flat PipelineConfig."""
    path = Path(path)
    data = _read_object(path)
    if "pipeline" not in data:
        return {}
    unknown = sorted(set(data) - set(FILE_SECTIONS))
    if unknown:
        raise ValueError(f"{path}: unknown section {unknown[0]!r}; a sectioned configuration file holds {list(FILE_SECTIONS)}")
    value = data.get(section, {})
    if not isinstance(value, dict):
        raise ValueError(f"{path}: section {section!r} must be a JSON object, got {type(value).__name__}")
    return value
