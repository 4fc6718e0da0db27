"""Multiple kernel learning: KOMD and EasyMKL (spec donini-easymkl-komd-climbtheworld-admm §1, §2).

KOMD (§1) maximises the margin distribution for one kernel; EasyMKL (§2) runs KOMD on the sum of
many weak kernels and weights each kernel by the separation it gives, which ``EasyMKLSelector``
uses to keep the best features (§2.5, §3.9). The simplex solvers in ``_simplex`` (the spec's
addendum) serve only these two, so they live here; ``rbf_kernel_inplace`` is public because the
ONNX export rebuilds KOMD's RBF decision.
"""
from ._easymkl import EasyMKL, EasyMKLSelector
from ._komd import KOMDClassifier, rbf_kernel_inplace, resolve_rbf_gamma
from ._nystroem_komd import NystroemKOMDClassifier

__all__ = ["KOMDClassifier", "NystroemKOMDClassifier", "EasyMKL", "EasyMKLSelector", "rbf_kernel_inplace", "resolve_rbf_gamma"]
