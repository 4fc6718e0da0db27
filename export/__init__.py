"""ONNX export, skl2onnx converters, compaction and parity checks."""

__all__: list[str] = []
