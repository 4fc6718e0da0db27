"""The smallest compaction of a model that still decides like it: what a refused export suggests.

Cutting a model to a budget can change what it decides: an int8 export cut to a 32 KB budget
keeps 398 of 2,990 support vectors and agrees with the Python model on only 75–82 % of windows.
Exports are therefore held to the agreement threshold, and a refusal says what *would* pass: the fewest support vectors at the
requested precision (and the file size they need), or that only a higher precision agrees.

The search runs on the float64 model as it would be stored (reduced, rounded, refitted: the
``stored`` function of ``build_onnx_model``), which the graph matches to ~1e-5 in score, so no
ONNX Runtime session is needed per candidate.
"""
from __future__ import annotations

import numpy as np

__all__ = ["smallest_passing_budget", "METADATA_BYTES"]

#: Bytes the metadata adds to the graph (configuration, feature names, training summary): the
#: CLI's headroom; the figure in a refusal includes it.
METADATA_BYTES = 2048


def _agreement(build, model, X, reference, precision, n):
    onnx_model, stored, _ = build(model, precision, max_support_vectors=n)
    return float(np.mean((stored(X) >= 0) == (reference >= 0))), len(onnx_model.SerializeToString())


def smallest_passing_budget(build, model, X, reference, precision: str, min_agreement: float) -> str:
    """One clause for a refusal: the smallest support set / precision whose decisions agree.

    Parameters
    ----------
    build : callable
        ``build_onnx_model`` (passed in: this module sits below ``_export``).
    model : StairstepModel
    X : ndarray of shape (N, n_features)
        Feature rows of the validation windows.
    reference : ndarray of shape (N,)
        The Python model's scores on them.
    precision : str
        The requested precision.
    min_agreement : float

    Returns
    -------
    str
        E.g. ``"the smallest int8 export that agrees keeps 1,900 of 2,990 support vectors (about
        152 KB: --max-kb 152); or train under a support-vector budget that fits (`stairsense
        train --landmarks N`)"``.
    """
    total = int(model.pipeline[-1].dual_coef_.size)
    compact = "or train under a support-vector budget that fits (`stairsense train --landmarks N`)"
    full, size = _agreement(build, model, X, reference, precision, None)
    if full < min_agreement:
        higher = {"int8": "fp16 or fp32", "fp16": "fp32"}.get(precision, "fp32")
        return (f"even all {total} support vectors at {precision} agree on only {full:.1%}; export at "
                f"{higher} with --max-kb 0, {compact}")
    lo, hi = 2, total  # agreement fails at lo (or lo is the answer), passes at hi
    if _agreement(build, model, X, reference, precision, lo)[0] >= min_agreement:
        hi = lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _agreement(build, model, X, reference, precision, mid)[0] >= min_agreement:
            hi = mid
        else:
            lo = mid
    size = _agreement(build, model, X, reference, precision, None if hi == total else hi)[1]
    kb = int(np.ceil((size + METADATA_BYTES) / 1024))
    return (f"the smallest {precision} export that agrees on {min_agreement:.1%} keeps {hi} of {total} support "
            f"vectors (about {kb} KB: --max-kb {kb}); {compact}")
