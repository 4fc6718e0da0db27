"""The 79 window features of Table 12.1 (batch over ragged windows and per sample), the 36 step-shape and
step-context features and the 5 height features (barometer) beside them, their [-1, 1] scaling, and the one stage from standardized samples
and kept windows to window rows (:class:`WindowRowStage`) and training sets (:func:`window_dataset`)."""
from ._height_features import HEIGHT_NAMES, HeightContext, height_columns
from ._scaling import make_feature_scaler
from ._step_context import (
    STEP_CONTEXT_NAMES,
    STEP_CONTEXT_OF,
    STEP_SHAPE_NAMES,
    StepContext,
    StepRun,
    step_context_columns,
    step_context_features,
    step_shape,
    step_shape_features,
)
from ._streaming import WindowFeatureAccumulator
from ._window_rows import (
    AMBIGUOUS,
    MIXED_ACTIVITY,
    NO_STAIR,
    STAIR,
    WindowDataset,
    WindowRows,
    WindowRowStage,
    feature_names_for,
    step_signals,
    window_activity,
    window_dataset,
    window_labels,
)
from ._window_features import (
    CONSTANT_ROW_RTOL,
    FEATURE_NAMES,
    N_FEATURES,
    RATIO_CLIP,
    RATIO_EPS,
    ROW_NAMES,
    feature_names,
    window_features,
)

__all__ = [
    "FEATURE_NAMES",
    "N_FEATURES",
    "ROW_NAMES",
    "feature_names",
    "window_features",
    "WindowFeatureAccumulator",
    "make_feature_scaler",
    "RATIO_CLIP",
    "RATIO_EPS",
    "CONSTANT_ROW_RTOL",
    "STEP_SHAPE_NAMES",
    "STEP_CONTEXT_OF",
    "STEP_CONTEXT_NAMES",
    "step_shape",
    "step_shape_features",
    "step_context_features",
    "step_context_columns",
    "StepContext",
    "StepRun",
    "HEIGHT_NAMES",
    "HeightContext",
    "height_columns",
    "STAIR",
    "NO_STAIR",
    "AMBIGUOUS",
    "feature_names_for",
    "step_signals",
    "window_labels",
    "MIXED_ACTIVITY",
    "window_activity",
    "WindowRows",
    "WindowRowStage",
    "WindowDataset",
    "window_dataset",
]
