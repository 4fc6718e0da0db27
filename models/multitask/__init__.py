"""Multi-task models: output kernel learning (OKL) and MT-ONMKL."""
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
