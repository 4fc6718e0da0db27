"""A small builder for ONNX graphs made only of standard operators (spec §6, first bullet).

The exported stair-step model must run on ONNX Runtime's mobile builds, so it uses only operators
of the default ``ai.onnx`` domain, no custom ops and no control flow. :data:`ALLOWED_OPS` lists
every operator the stairsense graphs may contain; tests assert that exported graphs stay inside it.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["ALLOWED_OPS", "TARGET_OPSET", "GraphBuilder"]

#: Opset 18 is the first where every Reduce* operator takes its axes as an input (one calling
#: convention) and is run by ONNX Runtime ≥ 1.16, including its mobile packages.
TARGET_OPSET = 18

#: Operators the stairsense export graphs may use: element-wise arithmetic, reductions, indexing,
#: casts and the weight-only DequantizeLinear of int8 compaction. All are in ONNX Runtime's mobile
#: builds; none is a loop or a custom op.
ALLOWED_OPS = frozenset({
    "Abs", "Add", "And", "Cast", "Clip", "Concat", "DequantizeLinear", "Div", "Exp", "Gather",
    "Gemm", "Greater", "GreaterOrEqual", "Identity", "LessOrEqual", "MatMul", "Max", "Min", "Mul", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSum", "ReduceSumSquare", "Reshape", "Shape", "Slice", "Sqrt", "Sub", "Where",
    # skl2onnx's own MinMaxScaler converter (used by the registered pipeline converters) emits these.
    "Scaler", "ZipMap",
})


class GraphBuilder:
    """Collect nodes and initializers with unique names, then emit a ``ModelProto``.

    Constants always become initializers (never ``Constant`` nodes or attributes), so compaction
    can find and shrink them.

    Examples
    --------
    >>> import numpy as np, onnxruntime as ort
    >>> g = GraphBuilder()
    >>> x = g.input("x", np.float32, ["n"])
    >>> y = g.op("Mul", x, g.const(np.float32(2.0)))
    >>> model = g.model({y: (np.float32, ["n"])})
    >>> sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    >>> sess.run(None, {"x": np.array([1.0, 3.0], np.float32)})[0].tolist()
    [2.0, 6.0]
    """

    def __init__(self, prefix: str = ""):
        self.prefix = prefix
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self._count = 0

    def name(self, hint: str) -> str:
        """A fresh name; ``prefix`` keeps it apart from names of an enclosing (skl2onnx) graph."""
        self._count += 1
        return f"{self.prefix}{hint}_{self._count}"

    def input(self, name: str, dtype, shape) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape))
        return name

    def const(self, value, hint: str = "c") -> str:
        """Add ``value`` (a numpy array or scalar, dtype kept) as an initializer; return its name."""
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, hint: str | None = None, **attrs) -> str:
        """Add one single-output node and return the name of its output."""
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def emit_into(self, scope, container) -> None:
        """Copy the nodes and initializers into a skl2onnx converter's ``container``."""
        for tensor in self.initializers:
            if tensor.data_type == TensorProto.STRING:
                container.add_initializer(tensor.name, tensor.data_type, list(tensor.dims), list(tensor.string_data))
            else:
                container.add_initializer(tensor.name, tensor.data_type, list(tensor.dims), tensor)
        for node in self.nodes:
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            container.add_node(node.op_type, list(node.input), list(node.output),
                               name=scope.get_unique_operator_name(self.prefix + node.op_type),
                               op_version=TARGET_OPSET, **attrs)

    def rename(self, value: str, name: str) -> str:
        """Give the node output ``value`` the name ``name`` (a graph output), without an Identity.

        An Identity node would cost ONNX Runtime a kernel launch per window; renaming the
        producer's output (and its consumers' inputs) is free. Inputs and initializers, which
        no node produces, get an Identity.
        """
        producer = next((n for n in self.nodes if value in n.output), None)
        if producer is None:
            self.nodes.append(helper.make_node("Identity", [value], [name]))
            return name
        producer.output[list(producer.output).index(value)] = name
        for node in self.nodes:
            for k, inp in enumerate(node.input):
                if inp == value:
                    node.input[k] = name
        return name

    def model(self, outputs: dict, *, name: str = "stairsense") -> onnx.ModelProto:
        """A checked model whose outputs map names to ``(dtype, shape)``."""
        outs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(t)), s)
                for n, (t, s) in outputs.items()]
        graph = helper.make_graph(self.nodes, name, self.inputs, outs, initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", TARGET_OPSET)],
                                  producer_name="stairsense")
        # ONNX Runtime 1.16+ reads IR version 9; a newer onnx package would stamp a version that
        # older phone runtimes refuse.
        model.ir_version = 9
        onnx.checker.check_model(model, full_check=True)
        return model

