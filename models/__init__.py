"""Kernel machines: KOMD, EasyMKL, the stair-step classifier, server-side and multi-task solvers."""
from ._admm_mtl import ADMMMultiTaskClassifier
from ._easymkl import EasyMKL, EasyMKLSelector
from ._kernel_access import LinearKernel, PrecomputedKernel, RowOracleKernel
from ._kernel_machine_estimators import KernelMachineClassifier, KernelMachineRegressor
from ._kernel_machines import KernelMachineSolution, kernel_machine_objective, solve_kernel_machine
from ._komd import KOMDClassifier
from .multitask import MTONMKLClassifier, OutputKernelClassifier, OutputKernelRegressor, okl_path
from ._losses import LOSS_NAMES, Loss
from ._rls2 import RLS2Classifier, RLS2Path, RLS2Regressor, RLS2Selector, rls2_path
from ._simplex_pairwise import simplex_least_squares
from ._evaluation import CLASSIFIERS, PROTOCOLS, CVResult, default_grid, evaluate_protocol, make_classifier, stair_scores
from ._stairstep import (
    ModelFileError,
    StairstepModel,
    load_model,
    make_stairstep_pipeline,
    read_model_header,
    save_model,
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
    "MTONMKLClassifier",
    "OutputKernelClassifier",
    "OutputKernelRegressor",
    "okl_path",
    "KOMDClassifier",
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
