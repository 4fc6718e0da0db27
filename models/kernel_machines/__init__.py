"""Server-side regularized kernel machines (spec dinuzzo-solvers-rls2-client-server-mtl §1, §2).

The fixed-point and coordinate-descent solvers of §1.4-§1.5 for any loss of §1.3 (``_solver``,
with the compiled sweeps in ``_cd_compiled`` and the losses in ``_losses``), their scikit-learn
estimators, the kernel-access objects they read kernel rows through (only these solvers use them),
and RLS2, the two-layer least-squares MKL of §2.3-§2.6, with its simplex-constrained least-squares
solver.
"""
from ._estimators import KernelMachineClassifier, KernelMachineRegressor
from ._kernel_access import LinearKernel, PrecomputedKernel, RowOracleKernel
from ._losses import LOSS_NAMES, Loss
from ._rls2 import RLS2Classifier, RLS2Path, RLS2Regressor, RLS2Selector, rls2_path
from ._simplex_pairwise import simplex_least_squares
from ._solver import KernelMachineSolution, kernel_machine_objective, solve_kernel_machine

__all__ = [
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
    "RLS2Regressor",
    "RLS2Classifier",
    "RLS2Selector",
    "RLS2Path",
    "rls2_path",
    "simplex_least_squares",
]
