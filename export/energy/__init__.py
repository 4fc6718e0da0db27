"""Energy-budget simulator: what a pipeline configuration costs in battery on a given phone.

Device profiles (``profiles/*.json``, every number with its source) × a workload measured from a
replay, the stage code and the exported ONNX graph (:func:`measure_workload`) × a day →
:func:`estimate` gives the charge per pipeline stage. The budget optimiser searches
configurations for the best F1 under a battery budget (``stairsense energy optimise``,
:mod:`._optimise`): leave-subjects-out F1 of each configuration on labelled recordings, priced by
this model.
"""
from ._model import DEFAULT_DAY, STAGES, EnergyReport, estimate, parse_day
from ._optimise import (
    Candidate,
    Protocol,
    SearchSpace,
    best_under,
    evaluate_all,
    evaluate_front_end,
    evaluate_front_ends,
    evaluate_windows,
    front_end_data,
    load_recordings,
    pareto_front,
    parse_budget,
    plot_front,
    price,
    write_best,
)
from ._plot import plot_breakdown
from ._profile import DeviceProfile, load_profile, profile_names
from ._workload import (
    OPTIONAL_STREAMS,
    ActivityCounts,
    InferenceCost,
    StageCosts,
    Workload,
    add_up_counts,
    count_operations,
    count_windows,
    inference_cost,
    measure_stage_costs,
    measure_logs_windows,
    measure_windows,
    measure_workload,
    selected_features,
    streams_for,
)

__all__ = [
    "DeviceProfile",
    "load_profile",
    "profile_names",
    "Workload",
    "ActivityCounts",
    "StageCosts",
    "InferenceCost",
    "measure_workload",
    "measure_windows",
    "measure_logs_windows",
    "count_windows",
    "add_up_counts",
    "measure_stage_costs",
    "inference_cost",
    "count_operations",
    "streams_for",
    "OPTIONAL_STREAMS",
    "estimate",
    "EnergyReport",
    "parse_day",
    "STAGES",
    "DEFAULT_DAY",
    "plot_breakdown",
    "selected_features",
    "SearchSpace",
    "Protocol",
    "Candidate",
    "front_end_data",
    "evaluate_windows",
    "evaluate_front_end",
    "evaluate_front_ends",
    "evaluate_all",
    "load_recordings",
    "price",
    "pareto_front",
    "best_under",
    "write_best",
    "plot_front",
    "parse_budget",
]
