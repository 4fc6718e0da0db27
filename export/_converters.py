"""skl2onnx shape calculators and converters for stairsense's estimators (STYLE.md habit 11).

With them registered, ``skl2onnx.to_onnx`` converts ``KOMDClassifier``, ``EasyMKLSelector`` and
the stair-step ``Pipeline`` (MinMaxScaler → EasyMKLSelector → KOMDClassifier, the scaler by
skl2onnx's own converter) for users who compute the window features themselves: the input is then
the ``[N, 79]`` feature matrix, not a window's samples (for that, see
:func:`stairsense.export._export.export_model`).

KOMD's outputs follow scikit-learn classifiers without probabilities (as skl2onnx does for
``SVC``): ``label`` ``[N]`` and ``scores`` ``[N, 2]`` = (−f, f), f the decision of spec §1.2.
Pass ``options={KOMDClassifier: {"zipmap": False}}`` to get ``scores`` as a tensor.

:func:`register_converters` is idempotent for our own converters and refuses to replace a
converter someone else registered for these classes (the registry is process-wide state).
"""
from __future__ import annotations

import numpy as np
from skl2onnx import update_registered_converter
from skl2onnx._supported_operators import sklearn_operator_name_map
from skl2onnx.common._registration import get_converter
from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, Int64TensorType, StringTensorType
from skl2onnx.common.utils import check_input_and_output_numbers, check_input_and_output_types

from stairsense.models import EasyMKLSelector, KOMDClassifier, NystroemKOMDClassifier

from ._compact import RBFHead, add_rbf_decision
from ._graph import TARGET_OPSET, GraphBuilder

__all__ = [
    "calculate_komd_output_shapes",
    "calculate_selector_output_shapes",
    "convert_komd",
    "convert_selector",
    "register_converters",
]


def _check_opset(container, owner: str) -> None:
    if container.target_opset is not None and container.target_opset < TARGET_OPSET:
        raise RuntimeError(
            f"the {owner} converter emits opset {TARGET_OPSET} reductions (axes as inputs) but the conversion "
            f"targets opset {container.target_opset}; call to_onnx(..., target_opset={TARGET_OPSET}) or higher"
        )


def calculate_komd_output_shapes(operator) -> None:
    """``[N, C]`` float/double features → ``label [N]`` (classes' type) and ``scores [N, 2]`` float."""
    check_input_and_output_numbers(operator, input_count_range=1, output_count_range=2)
    check_input_and_output_types(operator, good_input_types=[FloatTensorType, DoubleTensorType])
    komd = operator.raw_operator
    n = operator.inputs[0].get_first_dimension()
    integer_classes = np.issubdtype(np.asarray(komd.classes_).dtype, np.integer)
    operator.outputs[0].type = (Int64TensorType if integer_classes else StringTensorType)(shape=[n])
    operator.outputs[1].type = FloatTensorType(shape=[n, 2])


def convert_komd(scope, operator, container) -> None:
    """KOMD RBF decision (spec §1.2, §6) for a batch, float32 arithmetic, and the class labels."""
    _check_opset(container, "KOMDClassifier")
    komd = operator.raw_operator
    g = GraphBuilder(prefix=scope.get_unique_variable_name("komd") + "_")
    x = operator.inputs[0].full_name
    if isinstance(operator.inputs[0].type, DoubleTensorType):
        x = g.op("Cast", x, to=1)
    score, _ = add_rbf_decision(g, x, RBFHead.from_komd(komd), "fp32", batch=True)
    classes = np.asarray(komd.classes_)
    classes = classes.astype(np.int64) if np.issubdtype(classes.dtype, np.integer) else classes.astype(str).astype(object)
    positive = g.op("Cast", g.op("GreaterOrEqual", score, g.const(np.float32(0.0))), to=7)
    g.rename(g.op("Gather", g.const(classes, "classes"), positive, axis=0), operator.outputs[0].full_name)
    column = g.op("Reshape", score, g.const(np.array([-1, 1], np.int64)))
    negated = g.op("Mul", column, g.const(np.float32(-1.0)))
    g.rename(g.op("Concat", negated, column, axis=1), operator.outputs[1].full_name)
    g.emit_into(scope, container)


def calculate_selector_output_shapes(operator) -> None:
    """``[N, C]`` → ``[N, k]``, k the number of kept features, same element type."""
    check_input_and_output_numbers(operator, input_count_range=1, output_count_range=1)
    check_input_and_output_types(operator, good_input_types=[FloatTensorType, DoubleTensorType, Int64TensorType])
    k = int(operator.raw_operator.get_support().sum())
    operator.outputs[0].type = type(operator.inputs[0].type)(shape=[operator.inputs[0].get_first_dimension(), k])


def convert_selector(scope, operator, container) -> None:
    """Keep the selected columns: one ``Gather`` along axis 1."""
    g = GraphBuilder(prefix=scope.get_unique_variable_name("select") + "_")
    kept = np.flatnonzero(operator.raw_operator.get_support()).astype(np.int64)
    g.rename(g.op("Gather", operator.inputs[0].full_name, g.const(kept, "kept"), axis=1), operator.outputs[0].full_name)
    g.emit_into(scope, container)


_REGISTRATIONS = (
    (KOMDClassifier, "StairsenseKOMDClassifier", calculate_komd_output_shapes, convert_komd,
     {"zipmap": [True, False, "columns"], "nocl": [False]}),
    (NystroemKOMDClassifier, "StairsenseNystroemKOMDClassifier", calculate_komd_output_shapes, convert_komd,
     {"zipmap": [True, False, "columns"], "nocl": [False]}),
    (EasyMKLSelector, "StairsenseEasyMKLSelector", calculate_selector_output_shapes, convert_selector, None),
)


def _same_function(registered, ours) -> bool:
    """True for our converter, also when this module was imported twice under two names.

    That happens with ``pytest --doctest-modules`` (``export._converters`` beside
    ``stairsense.export._converters``) and ``importlib.reload``; the copies are the same code.
    """
    def key(f):
        return getattr(f, "__qualname__", None), getattr(f, "__module__", "").rsplit(".", 2)[-2:]

    return registered is ours or key(registered) == key(ours)


def register_converters() -> None:
    """Register the converters with skl2onnx, once; refuse to replace anyone else's.

    Raises
    ------
    RuntimeError
        If one of our classes or aliases is already registered with another converter.

    Examples
    --------
    >>> register_converters(); register_converters()  # idempotent
    >>> from skl2onnx._supported_operators import sklearn_operator_name_map
    >>> sklearn_operator_name_map[KOMDClassifier]
    'StairsenseKOMDClassifier'
    """
    for cls, alias, shape_fct, convert_fct, options in _REGISTRATIONS:
        current = sklearn_operator_name_map.get(cls)
        try:
            registered = get_converter(alias)._fct
        except ValueError:  # skl2onnx's "unregistered operator" error
            registered = None
        if current == alias and _same_function(registered, convert_fct):
            continue
        if current is not None or registered is not None:
            raise RuntimeError(
                f"skl2onnx already has a converter for {cls.__name__} (alias {current!r}) or for alias {alias!r}; "
                "stairsense will not overwrite it silently. Remove that registration before importing "
                "stairsense.export"
            )
        update_registered_converter(cls, alias, shape_fct, convert_fct, overwrite=False, options=options)
