"""Multi-task models: output kernel learning (OKL) and MT-ONMKL."""
from ._mtonmkl import (
    MTONMKLClassifier,
    base_kernels,
    kernel_alignment_matrix,
    neighborhood_step,
    task_expansion,
    task_weights,
    theta_step,
)
from ._okl import (
    MaskedOutputs,
    OKLFit,
    OutputKernelClassifier,
    OutputKernelRegressor,
    okl_a_step,
    okl_b_step,
    okl_lambda_max,
    okl_objective,
    okl_path,
    okl_solve,
)

__all__ = [
    "MTONMKLClassifier",
    "base_kernels",
    "kernel_alignment_matrix",
    "neighborhood_step",
    "task_expansion",
    "task_weights",
    "theta_step",
    "MaskedOutputs",
    "OKLFit",
    "OutputKernelClassifier",
    "OutputKernelRegressor",
    "okl_a_step",
    "okl_b_step",
    "okl_lambda_max",
    "okl_objective",
    "okl_path",
    "okl_solve",
]
