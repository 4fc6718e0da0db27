"""Learning algorithms by family, and the stair-step model built from them.

``mkl`` (KOMD, EasyMKL), ``kernel_machines`` (server-side solvers, RLS2), ``multitask`` (ADMM
and online client–server multi-task learning) and ``stairstep`` (the trained stair-step model and its evaluation
protocols). Every public name of the sub-packages used by the README is re-exported here, and
so are the output-kernel-learning solver pieces that evaluations and paper reproductions call
(``MaskedOutputs``, ``okl_solve``, ``okl_lambda_max``, ``okl_kronecker_basis``).
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use: the families import scikit-learn, numba and scipy, which a command that
# only reads or replays logs never needs.
__getattr__, __dir__ = _lazy_exports(__name__, {
    ".kernel_machines": ("LOSS_NAMES", "KernelMachineClassifier", "KernelMachineRegressor",
                         "KernelMachineSolution", "LinearKernel", "Loss", "PrecomputedKernel", "RLS2Classifier",
                         "RLS2Path", "RLS2Regressor", "RLS2Selector", "RowOracleKernel",
                         "kernel_machine_objective", "rls2_path", "simplex_least_squares", "solve_kernel_machine"),
    ".mkl": ("EasyMKL", "EasyMKLSelector", "KOMDClassifier", "NystroemKOMDClassifier"),
    ".multitask": ("ADMMMultiTaskClassifier", "MaskedOutputs", "MTONMKLClassifier", "OutputKernelClassifier",
                   "OutputKernelRegressor", "okl_kronecker_basis", "okl_lambda_max", "okl_path", "okl_solve",
                   "OnlineMultiTaskClassifier", "OnlineMultiTaskClient",
                   "OnlineMultiTaskLearner", "OnlineMultiTaskRegressor", "RiverMultiTaskClassifier",
                   "RiverMultiTaskRegressor", "UnknownEntryError"),
    ".stairstep": ("CLASSIFIERS", "PROTOCOLS", "CVResult", "ModelFileError", "StairstepModel", "default_grid",
                   "evaluate_protocol", "load_model", "make_classifier", "make_stairstep_pipeline",
                   "read_model_header", "save_model", "stair_counts", "stair_rates", "stair_scores",
                   "upgrade_model_file", "TRAIN_DEFAULTS", "TrainRecipe", "ClimbCounter", "FLOOR_M"),
})

__all__ = [
    "TrainRecipe",
    "TRAIN_DEFAULTS",
    "StairstepModel",
    "make_stairstep_pipeline",
    "save_model",
    "load_model",
    "read_model_header",
    "upgrade_model_file",
    "ModelFileError",
    "evaluate_protocol",
    "CVResult",
    "make_classifier",
    "default_grid",
    "stair_counts",
    "stair_scores",
    "stair_rates",
    "PROTOCOLS",
    "CLASSIFIERS",
    "ClimbCounter",
    "FLOOR_M",
    "ADMMMultiTaskClassifier",
    "OnlineMultiTaskLearner",
    "OnlineMultiTaskClient",
    "OnlineMultiTaskRegressor",
    "OnlineMultiTaskClassifier",
    "RiverMultiTaskRegressor",
    "RiverMultiTaskClassifier",
    "UnknownEntryError",
    "OutputKernelRegressor",
    "OutputKernelClassifier",
    "okl_path",
    "okl_solve",
    "okl_lambda_max",
    "okl_kronecker_basis",
    "MaskedOutputs",
    "MTONMKLClassifier",
    "KOMDClassifier",
    "NystroemKOMDClassifier",
    "EasyMKL",
    "EasyMKLSelector",
    "RLS2Regressor",
    "RLS2Classifier",
    "RLS2Selector",
    "RLS2Path",
    "rls2_path",
    "simplex_least_squares",
    "KernelMachineClassifier",
    "KernelMachineRegressor",
    "solve_kernel_machine",
    "KernelMachineSolution",
    "kernel_machine_objective",
    "PrecomputedKernel",
    "RowOracleKernel",
    "LinearKernel",
    "Loss",
    "LOSS_NAMES",
]
