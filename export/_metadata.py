"""What an exported model says about itself: ONNX ``metadata_props`` and a content hash.

DESIGN.md (Export): the pipeline configuration, feature names and training provenance travel in
the model's metadata, so a phone (or a replay) runs the front end the classifier was trained for.
Every value is a string; structured values are JSON. The content hash is the SHA-256 of the
deterministic serialisation of the model with the hash entry itself removed, so any change to the
graph, the weights or the other metadata is detected on load.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import onnx

__all__ = ["FORMAT", "FORMAT_VERSION", "OnnxModelError", "content_hash", "read_metadata", "write_metadata",
           "HASH_KEY"]

#: Value of ``stairsense.format``: models without it are foreign.
FORMAT = "stairsense-stairstep-onnx"
#: Bumped when inputs, outputs or metadata keys change meaning; other versions are refused.
FORMAT_VERSION = 1
_PREFIX = "stairsense."
HASH_KEY = _PREFIX + "content_sha256"
# Keys whose values are JSON; the others are plain strings.
_JSON_KEYS = frozenset({"config", "feature_names", "input_feature_names", "training", "parity", "compaction",
                        "onset_threshold"})


class OnnxModelError(ValueError):
    """An ONNX file that cannot be used as a stairsense stair-step model; the message names it."""


def _without_hash(model: onnx.ModelProto) -> onnx.ModelProto:
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    kept = [p for p in bare.metadata_props if p.key != HASH_KEY]
    del bare.metadata_props[:]
    bare.metadata_props.extend(kept)
    return bare


def content_hash(model: onnx.ModelProto) -> str:
    """SHA-256 (hex) of ``model`` serialised deterministically, ignoring its own hash entry."""
    return hashlib.sha256(_without_hash(model).SerializeToString(deterministic=True)).hexdigest()


def write_metadata(model: onnx.ModelProto, values: dict[str, Any]) -> onnx.ModelProto:
    """Set ``stairsense.<key>`` entries from ``values`` (JSON for structured ones), then the hash.

    Examples
    --------
    >>> from stairsense.export._features_graph import window_features_model
    >>> model = write_metadata(window_features_model([0]), {"precision": "fp32", "config": {"rate_hz": 30}})
    >>> meta = read_metadata(model)
    >>> meta["format"], meta["config"], meta["content_sha256"] == content_hash(model)
    ('stairsense-stairstep-onnx', {'rate_hz': 30}, True)
    """
    entries = {"format": FORMAT, "format_version": str(FORMAT_VERSION), **values}
    props = {p.key: p.value for p in model.metadata_props if not p.key.startswith(_PREFIX)}
    for key, value in entries.items():
        props[_PREFIX + key] = json.dumps(value, sort_keys=True) if key in _JSON_KEYS else str(value)
    del model.metadata_props[:]
    onnx.helper.set_model_props(model, props)
    onnx.helper.set_model_props(model, {**props, HASH_KEY: content_hash(model)})
    return model


def read_metadata(model_or_props, source=None) -> dict[str, Any]:
    """The ``stairsense.*`` metadata as a dict (JSON values decoded, prefix dropped).

    Parameters
    ----------
    model_or_props : onnx.ModelProto or mapping of str to str
        A model, or a plain ``{key: value}`` mapping such as ONNX Runtime's
        ``get_modelmeta().custom_metadata_map`` (the route for ORT-format files).
    source : str or Path, optional
        The file the metadata was read from, named by the error.

    Returns
    -------
    dict

    Raises
    ------
    OnnxModelError
        When a structured value is not JSON: the file was damaged or edited after export.
    """
    if isinstance(model_or_props, onnx.ModelProto):
        props = {p.key: p.value for p in model_or_props.metadata_props}
    else:
        props = dict(model_or_props)
    out = {}
    for key, value in props.items():
        if key.startswith(_PREFIX):
            short = key[len(_PREFIX):]
            try:
                out[short] = json.loads(value) if short in _JSON_KEYS else value
            except json.JSONDecodeError as exc:
                where = f"{source}: " if source is not None else ""
                raise OnnxModelError(f"{where}metadata {key!r} is not valid JSON ({exc}); the file is corrupt "
                                     "or was edited after export: export the model again") from None
    return out
