"""Energy-budget simulator: what a pipeline configuration costs in battery on a given phone.

Device profiles (``profiles/*.json``, every number with its source) × a workload measured from a
replay, the stage code and the exported ONNX graph (:func:`measure_workload`) × a day →
:func:`estimate` gives the charge per pipeline stage. The budget optimiser searches
configurations for the best F1 under a battery budget (``stairsense energy optimise``,
:mod:`._optimise`): leave-subjects-out F1 of each configuration on labelled recordings (for the
barometer, people simulated with one: :mod:`._people`), priced by this model.
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use: the command line's parser reads the defaults (``DEFAULT_DAY``,
# ``SearchSpace``) without loading NumPy, the features or the models.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._model": ("ACTIVITY_CLASSES", "DEFAULT_DAY", "OPTIONAL_STREAMS", "STAGES", "EnergyReport", "estimate",
                "parse_day", "streams_for"),
    "._search": ("Candidate", "Protocol", "SearchSpace", "parse_budget"),
    "._optimise": ("best_under", "evaluate_all", "evaluate_front_end", "evaluate_front_ends", "evaluate_windows",
                   "front_end_data", "load_recordings", "pareto_front", "plot_front", "price", "space_for", "twin_of",
                   "write_best"),
    "._people": ("logs_fingerprint", "simulated_people"),
    "._plot": ("plot_breakdown",),
    "._profile": ("DeviceProfile", "load_profile", "profile_names"),
    "._workload": ("BAROMETER_HZ", "ActivityCounts", "InferenceCost", "StageCosts", "Workload", "add_up_counts",
                   "count_operations", "count_windows", "inference_cost", "measure_stage_costs",
                   "measure_logs_windows", "measure_windows", "measure_workload", "selected_features"),
})

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
    "ACTIVITY_CLASSES",
    "OPTIONAL_STREAMS",
    "BAROMETER_HZ",
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
    "simulated_people",
    "logs_fingerprint",
    "space_for",
    "twin_of",
    "price",
    "pareto_front",
    "best_under",
    "write_best",
    "plot_front",
    "parse_budget",
]
