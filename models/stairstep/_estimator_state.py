"""Fitted estimators as JSON plus plain arrays, rebuilt without running code from the file.

A pickle names callables that ``pickle.load`` calls, so a shared model file could run anything. This
module describes the few estimator types a stair-step model is made of by their type name, their
constructor parameters (JSON scalars) and their fitted attributes (JSON scalars, string lists, or
numeric arrays stored in an ``.npz`` read with ``allow_pickle=False``). Reading looks the type name
up in :data:`ESTIMATOR_TYPES`, calls the class with the JSON parameters and sets the attributes: a
file can only choose among these classes and fill them with numbers and strings.
"""
from __future__ import annotations

import io
import math
import re
import zipfile
from typing import Any

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from ..mkl import EasyMKLSelector, KOMDClassifier, NystroemKOMDClassifier
from ..trees import GatedTreesClassifier
from ._invariant import RestrictedSelector

__all__ = ["ESTIMATOR_TYPES", "UnsafeStateError", "estimator_to_state", "estimator_from_state", "pack_arrays",
           "unpack_arrays"]

#: The estimator classes a model file may name; a Pipeline of them is also allowed, and so is one of
#: them as a parameter or attribute of another (RestrictedSelector wraps an EasyMKLSelector).
ESTIMATOR_TYPES = {cls.__name__: cls for cls in (MinMaxScaler, EasyMKLSelector, KOMDClassifier,
                                                  NystroemKOMDClassifier, GatedTreesClassifier, RestrictedSelector)}

# scikit-learn's convention for fitted attributes; anything else (dunders, private names) is refused.
_FITTED_NAME = re.compile(r"^[a-z][a-z0-9_]*_$")


class UnsafeStateError(ValueError):
    """A state that names an unknown type, or holds something other than numbers, strings and arrays."""


def _is_json_scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _encode_value(value, name: str, arrays: dict[str, np.ndarray], key: str):
    """JSON for one parameter or attribute; numeric arrays go to ``arrays`` under ``key``."""
    if isinstance(value, np.generic):
        value = value.item()
    if _is_json_scalar(value):
        return value
    if isinstance(value, (tuple, list)) and all(_is_json_scalar(v) for v in value):
        return {type(value).__name__: list(value)}
    if type(value).__name__ in ESTIMATOR_TYPES:
        return {"estimator": estimator_to_state(value, arrays, key + ".")}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            arrays[key] = value
            return {"array": key}
        if value.dtype.kind in "OU" and all(isinstance(v, str) for v in value.ravel()):
            return {"strings": value.tolist(), "dtype": "object" if value.dtype.kind == "O" else "str"}
    raise UnsafeStateError(
        f"{name} = {type(value).__name__} cannot be saved as plain data (numbers, strings, numeric arrays); "
        "only the stair-step pipeline's estimators can be saved"
    )


def _decode_value(value, name: str, arrays):
    if _is_json_scalar(value):
        return value
    if isinstance(value, dict) and len(value) == 1 and ("tuple" in value or "list" in value):
        (kind, items), = value.items()
        if isinstance(items, list) and all(_is_json_scalar(v) for v in items):
            return tuple(items) if kind == "tuple" else list(items)
    if isinstance(value, dict) and set(value) == {"estimator"}:
        return estimator_from_state(value["estimator"], arrays)  # its type is checked there
    if isinstance(value, dict) and set(value) == {"array"} and value["array"] in arrays:
        return arrays[value["array"]]
    if isinstance(value, dict) and set(value) == {"strings", "dtype"} and isinstance(value["strings"], list):
        strings = value["strings"]
        if all(isinstance(s, str) for s in strings) and value["dtype"] in ("object", "str"):
            return np.asarray(strings, dtype=object if value["dtype"] == "object" else str)
    raise UnsafeStateError(f"{name}: not a number, string, tuple or stored array: {str(value)[:80]!r}")


def estimator_to_state(estimator, arrays: dict[str, np.ndarray], prefix: str = "") -> dict[str, Any]:
    """Describe a fitted estimator as JSON; its numeric arrays are added to ``arrays``.

    Parameters
    ----------
    estimator : Pipeline or one of :data:`ESTIMATOR_TYPES`
    arrays : dict
        Filled with ``{key: ndarray}``; keys are ``prefix`` + attribute name.
    prefix : str
        Distinguishes the steps of a pipeline.

    Returns
    -------
    dict
        ``{"type", "params", "attributes"}`` (a pipeline: ``{"type": "Pipeline", "steps": [...]}``).

    Raises
    ------
    UnsafeStateError
        For an estimator type outside :data:`ESTIMATOR_TYPES`, or a parameter/attribute that is
        not plain data.
    """
    if type(estimator) is Pipeline:
        return {"type": "Pipeline",
                "steps": [[name, estimator_to_state(step, arrays, f"{prefix}{name}.")] for name, step in estimator.steps]}
    name = type(estimator).__name__
    if ESTIMATOR_TYPES.get(name) is not type(estimator):
        raise UnsafeStateError(
            f"cannot save a {name}: a model file holds only a Pipeline of {sorted(ESTIMATOR_TYPES)} "
            "(build it with make_stairstep_pipeline)"
        )
    params = {k: _encode_value(v, f"{name}.{k}", arrays, prefix + k) for k, v in estimator.get_params(deep=False).items()}
    attributes = {k: _encode_value(v, f"{name}.{k}", arrays, prefix + k) for k, v in vars(estimator).items()
                  if _FITTED_NAME.match(k) and k not in params}
    return {"type": name, "params": params, "attributes": attributes}


def estimator_from_state(state, arrays) -> Any:
    """Rebuild an estimator described by :func:`estimator_to_state`, refusing anything else.

    Parameters
    ----------
    state : dict
        From the file's JSON header (untrusted).
    arrays : mapping of str to ndarray
        From :func:`unpack_arrays`.

    Returns
    -------
    estimator

    Raises
    ------
    UnsafeStateError
        Naming what is not allowed: an unknown type, an attribute name outside scikit-learn's
        ``name_`` convention, or a value that is not plain data.
    """
    if not isinstance(state, dict):
        raise UnsafeStateError(f"an estimator must be described by a JSON object, got {type(state).__name__}")
    kind = state.get("type")
    if kind == "Pipeline":
        steps = state.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, list) and len(s) == 2 and isinstance(s[0], str)
                                                  for s in steps):
            raise UnsafeStateError("a Pipeline needs 'steps': a list of [name, estimator] pairs")
        return Pipeline([(name, estimator_from_state(step, arrays)) for name, step in steps])
    cls = ESTIMATOR_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise UnsafeStateError(f"estimator type {str(kind)[:80]!r} is not one a model file may hold "
                               f"({['Pipeline', *sorted(ESTIMATOR_TYPES)]})")
    params, attributes = state.get("params"), state.get("attributes")
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise UnsafeStateError(f"{kind}: 'params' and 'attributes' must be JSON objects")
    allowed = cls().get_params(deep=False)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise UnsafeStateError(f"{kind} has no parameter(s) {unknown[:5]}")
    estimator = cls(**{k: _decode_value(v, f"{kind}.{k}", arrays) for k, v in params.items()})
    for k, v in attributes.items():
        if not isinstance(k, str) or not _FITTED_NAME.match(k) or k in allowed:
            raise UnsafeStateError(f"{kind}: {str(k)[:80]!r} is not a fitted-attribute name (lowercase, ending in _)")
        setattr(estimator, k, _decode_value(v, f"{kind}.{k}", arrays))
    return estimator


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """The arrays as ``.npz`` bytes, uncompressed: a model is a few hundred kB, and a reader that
    accepts only stored members knows each array's size from the file's own length
    (:func:`unpack_arrays`)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _check_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse a member whose array would take more memory than its bytes in the file.

    Deflate lets a few MB stand for gigabytes, and an ``.npy`` header may claim any shape (NumPy
    allocates the claimed array before reading its data), so a member must be stored as it is, and
    its header's shape times item size must equal the data bytes that follow the header.
    """
    name = info.filename.removesuffix(".npy")
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
        raise UnsafeStateError(f"array {name!r} is compressed; model files store their arrays uncompressed "
                               "(save_model), so the file's size bounds the memory they take")
    with archive.open(info) as member:
        try:
            version = np.lib.format.read_magic(member)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f".npy format version {version} (a model file uses 1.0 or 2.0)")
            shape, _, dtype = read_header(member)
        except ValueError as exc:
            raise UnsafeStateError(f"array {name!r} has no valid .npy header ({exc})") from None
        data_bytes = info.file_size - member.tell()
    if dtype.kind not in "biuf":
        raise UnsafeStateError(f"the array payload is not an npz of plain arrays: {name!r} holds {dtype}")
    claimed = math.prod(shape) * dtype.itemsize  # Python ints: a claimed shape cannot overflow
    if claimed != data_bytes:
        raise UnsafeStateError(f"array {name!r} claims shape {shape} of {dtype} ({claimed} bytes) but holds "
                               f"{data_bytes} bytes of data")


def unpack_arrays(payload: bytes) -> dict[str, np.ndarray]:
    """Arrays from ``.npz`` bytes with ``allow_pickle=False``: an object array (a pickle) is refused.

    Every member is checked before NumPy reads it (:func:`_check_member`): stored, not compressed,
    and holding exactly the bytes its header's shape needs, so the arrays never take more memory
    than the payload's own length.

    Raises
    ------
    UnsafeStateError
        When the payload is not an npz of plain arrays, or a member claims more than it holds.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            for info in archive.infolist():
                _check_member(archive, info)
        with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
    except UnsafeStateError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:  # np.load: "Object arrays cannot be loaded when allow_pickle=False"
        raise UnsafeStateError(f"the array payload is not an npz of plain arrays ({exc})") from None
    bad = [k for k, a in arrays.items() if not isinstance(a, np.ndarray) or a.dtype.kind not in "biuf"]
    if bad:
        raise UnsafeStateError(f"arrays {bad[:5]} are not numeric")
    return arrays
