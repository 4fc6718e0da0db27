"""Learning algorithms by family, and the stair-step model built from them.

``mkl`` (KOMD, EasyMKL), ``kernel_machines`` (server-side solvers, RLS2), ``multitask`` (ADMM
multi-task learning) and ``stairstep`` (the trained stair-step model and its evaluation
protocols). Every public name of the sub-packages used by the README is re-exported here.
"""
from .kernel_machines import (
    LOSS_NAMES,
    KernelMachineClassifier,
    KernelMachineRegressor,
    KernelMachineSolution,
    LinearKernel,
    Loss,
    PrecomputedKernel,
    RLS2Classifier,
    RLS2Path,
    RLS2Regressor,
    RLS2Selector,
    RowOracleKernel,
    kernel_machine_objective,
    rls2_path,
    simplex_least_squares,
    solve_kernel_machine,
)
from .mkl import EasyMKL, EasyMKLSelector, KOMDClassifier, NystroemKOMDClassifier
from .multitask import ADMMMultiTaskClassifier
from .stairstep import (
    CLASSIFIERS,
    PROTOCOLS,
    CVResult,
    ModelFileError,
    StairstepModel,
    default_grid,
    evaluate_protocol,
    load_model,
    make_classifier,
    make_stairstep_pipeline,
    read_model_header,
    save_model,
    stair_scores,
)

__all__ = [
    "StairstepModel",
    "make_stairstep_pipeline",
    "save_model",
    "load_model",
    "read_model_header",
    "ModelFileError",
    "evaluate_protocol",
    "CVResult",
    "make_classifier",
    "default_grid",
    "stair_scores",
    "PROTOCOLS",
    "CLASSIFIERS",
    "ADMMMultiTaskClassifier",
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
