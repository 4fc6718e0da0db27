"""Per-feature linear scaling of the window features to [-1, 1] (spec §3.6 "Scaling").

The thesis rescales every feature with "a fixed and different for each feature" linear map
fitted on the training windows. The spec's proposal x' = 2(x − min)/(max − min) − 1, fitted on
the training folds only and clipped at inference, is exactly scikit-learn's
``MinMaxScaler(feature_range=(-1, 1), clip=True)``, so we use that estimator itself: it composes
in a scikit-learn ``Pipeline`` and skl2onnx already converts it.
"""
from __future__ import annotations


__all__ = ["make_feature_scaler"]


def make_feature_scaler():
    """A fresh, unfitted scaler mapping each training feature's [min, max] onto [-1, 1].

    Fit it on training windows only (inside a ``Pipeline`` so cross-validation refits it per
    fold); at inference values outside the training range are clipped to [-1, 1].

    Returns
    -------
    sklearn.preprocessing.MinMaxScaler
        ``MinMaxScaler(feature_range=(-1, 1), clip=True)``.

    Notes
    -----
    **Constant features deviate from the spec, deliberately.** The spec proposes mapping a
    feature with max = min on the training set to 0. scikit-learn replaces a zero range by 1
    (``_handle_zeros_in_scale``), so the constant c maps to -1 and an inference value x maps to
    clip(2(x − c) − 1, -1, 1). We keep scikit-learn's behaviour because the choice of constant
    cannot change a KOMD/EasyMKL model: for translation-invariant kernels (RBF) a shared constant
    leaves every distance unchanged, and for a linear kernel it adds the same a² to every entry
    of K, which cancels in γᵀŶKŶγ and in the decision function because Σ y_i γ_i = 0 on Γ̂
    (spec §0). Keeping the stock estimator keeps the skl2onnx converter and ``check_estimator``
    conformance without a subclass.

    Examples
    --------
    >>> import numpy as np
    >>> scaler = make_feature_scaler().fit(np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0]]))
    >>> scaler.transform(np.array([[1.0, 5.0], [9.0, 5.0]]))
    array([[-0.5, -1. ],
           [ 1. , -1. ]])
    """
    # Imported here: scikit-learn costs ~1 s and ~130 MB to import, and replay on the phone path
    # (front end + features) never needs it.
    from sklearn.preprocessing import MinMaxScaler

    return MinMaxScaler(feature_range=(-1, 1), clip=True)
