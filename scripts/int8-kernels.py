"""Rewrites the embedding model so that its int8 weights stay int8 in memory (scripts/fetch-model).

The packaged all-MiniLM-L6-v2 stores each weight as int8 plus fp32 scales and dequantizes it in
the graph (Cast, then Mul). ONNX Runtime's constant folding turns all of that into fp32 weights
when a session is built: ~97 MB per session for a 23 MB file. Here:
- embedding tables (per-row scales) gather their rows first and dequantize only those;
- MatMul weights (per-column scales) go through MatMulNBits with 8 bits: one scale per column
  shared by all of its blocks and zero point 128, which holds the same int8 values; accuracy
  level 4 computes with int8 activations (embeddings within cosine 0.9995 of the original,
  routing recall within 0.002: docs/benchmarks.md); what runs where no rewrite below is used.
With --matmul-integer, MatMul weights instead stay as stored and each MatMul becomes
DynamicQuantizeLinear of its input (once per input) -> MatMulInteger -> Cast -> Mul by the input's
scale times the column scales: ONNX Runtime's integer GEMM, 2.4x faster than MatMulNBits on a
CPU with AVX2 and no VNNI and 2.3x on one with AVX-512 VNNI, at a few requests of recall either
way (one activation scale per tensor). The gateway loads that file on every x86-64 CPU
(docs/benchmarks.md, "The int8 kernels on a CPU with VNNI").

Usage: python int8-kernels.py IN.onnx OUT.onnx [--matmul-integer] (needs onnx and numpy)
"""

import collections
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BLOCK = 32
ACCURACY_LEVEL = 4


def rewrite(model, matmul_integer=False):
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    users = collections.defaultdict(list)
    for n in g.node:
        for x in n.input:
            users[x].append(n)
    drop_nodes, drop_inits, nodes, new_inits = set(), set(), [], []
    quantized = set()  # MatMul inputs already quantized (Q, K and V share theirs)
    for init in list(g.initializer):
        if init.data_type != TensorProto.INT8:
            continue
        (cast,) = users[init.name]
        (mul,) = users[cast.output[0]]
        scale = next(x for x in mul.input if x != cast.output[0])
        (use,) = users[mul.output[0]]
        q = init.name
        if use.op_type == "Gather" and list(use.input).index(mul.output[0]) == 0:
            ids = use.input[1]
            nodes += [
                helper.make_node("Gather", [q, ids], [q + "_rows"], axis=0),
                helper.make_node("Cast", [q + "_rows"], [q + "_rows_f"], to=TensorProto.FLOAT),
                helper.make_node("Gather", [scale, ids], [q + "_row_scales"], axis=0),
                helper.make_node("Mul", [q + "_rows_f", q + "_row_scales"], [use.output[0]]),
            ]
        elif (
            matmul_integer
            and use.op_type == "MatMul"
            and list(use.input).index(mul.output[0]) == 1
        ):
            a = use.input[0]
            s = numpy_helper.to_array(inits[scale]).reshape(-1).astype(np.float32)  # (N,)
            new_inits += [numpy_helper.from_array(s, q + "_col_scales")]
            if a not in quantized:
                quantized.add(a)
                nodes.append(
                    helper.make_node(
                        "DynamicQuantizeLinear", [a], [a + "_u8", a + "_scale", a + "_zp"]
                    )
                )
            nodes += [
                helper.make_node("MatMulInteger", [a + "_u8", q, a + "_zp"], [q + "_i32"]),
                helper.make_node("Cast", [q + "_i32"], [q + "_f"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [a + "_scale", q + "_col_scales"], [q + "_scales"]),
                helper.make_node("Mul", [q + "_f", q + "_scales"], [use.output[0]]),
            ]
            drop_inits.add(scale)
        elif use.op_type == "MatMul" and list(use.input).index(mul.output[0]) == 1:
            w = numpy_helper.to_array(init).astype(np.int16)  # (K, N)
            s = numpy_helper.to_array(inits[scale]).reshape(-1).astype(np.float32)  # (N,)
            k, n = w.shape
            blocks = (k + BLOCK - 1) // BLOCK
            packed = np.full((n, blocks * BLOCK), 128, dtype=np.uint8)
            packed[:, :k] = (w.T + 128).astype(np.uint8)
            new_inits += [
                numpy_helper.from_array(packed.reshape(n, blocks, BLOCK), q + "_nb"),
                numpy_helper.from_array(np.repeat(s, blocks), q + "_nb_scales"),
                numpy_helper.from_array(np.full(n * blocks, 128, dtype=np.uint8), q + "_nb_zp"),
            ]
            nodes.append(
                helper.make_node(
                    "MatMulNBits",
                    [use.input[0], q + "_nb", q + "_nb_scales", q + "_nb_zp"],
                    [use.output[0]],
                    domain="com.microsoft",
                    K=k,
                    N=n,
                    bits=8,
                    block_size=BLOCK,
                    accuracy_level=ACCURACY_LEVEL,
                )
            )
            drop_inits |= {q, scale}
        else:
            continue
        drop_nodes |= {id(cast), id(mul), id(use)}

    kept = [n for n in g.node if id(n) not in drop_nodes] + nodes
    inits_kept = [i for i in g.initializer if i.name not in drop_inits] + new_inits
    del g.initializer[:]
    g.initializer.extend(inits_kept)
    # Topological order, as the checker and ONNX Runtime want it.
    ready = {x.name for x in g.input} | {x.name for x in g.initializer} | {""}
    ordered = []
    while kept:
        rest = []
        for n in kept:
            if all(x in ready for x in n.input):
                ordered.append(n)
                ready |= set(n.output)
            else:
                rest.append(n)
        if len(rest) == len(kept):
            raise SystemExit("int8-kernels: the graph has a cycle")
        kept = rest
    del g.node[:]
    g.node.extend(ordered)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    source, target = sys.argv[1], sys.argv[2]
    onnx.save(rewrite(onnx.load(source), "--matmul-integer" in sys.argv[3:]), target)
