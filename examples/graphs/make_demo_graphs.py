#!/usr/bin/env python3
"""Writes the graph cases `make demo` runs (docs/graph-json.md format).

    python3 examples/graphs/make_demo_graphs.py [OUTPUT_DIR]

OUTPUT_DIR defaults to the directory of this script. Two cases:

bert_base_encoder_f32.json
    One BERT-base encoder layer, batch 1, sequence 128, hidden 768, 12 heads
    of 64, FFN 3072. The Q, K and V projections keep their weights per head
    ([1, 12, 768, 64], bias [1, 12, 1, 64]), which is the usual [768, 768]
    projection followed by the split into heads, so each projection writes
    [1, 12, 128, 64] directly. Attention: MatMul(Q, K^T), Multiply by 1/8,
    Add of the [1, 1, 1, 128] padding mask, SoftMax, MatMul with V, then
    StaticTranspose + StaticReshape back to [1, 128, 768]. Output projection
    with bias, residual Add, LayerNorm; FFN 768 -> 3072 with bias and GELU,
    3072 -> 768 with bias, residual Add, LayerNorm.

llama_mlp_int4.json
    The MLP block of a llama-style decoder (TinyLlama sizes: hidden 2048,
    intermediate 5632) for 32 tokens, weights stored as u4 with f32 scales
    and u4 zero points per group of 128 along K: for each of the gate, up
    and down projections DynamicDequantize -> MatMul; gate and up read the
    same activations, SiLU(gate) = Multiply(gate, Sigmoid(gate)), Multiply
    with up, down projection.

The files are deterministic: the same script writes the same bytes.
"""

import json
import os
import sys


def strides(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


class Graph:
    def __init__(self):
        self.ops = []
        self.tensors = {}
        self.next_tensor = 0

    def tensor(self, dtype, shape, prop="undef"):
        tid = self.next_tensor
        self.next_tensor += 1
        self.tensors[tid] = {
            "id": tid,
            "dtype": dtype,
            "shape": list(shape),
            "stride": strides(shape),
            "layout_type": "strided",
            "property_type": prop,
        }
        return tid

    def op(self, kind, name, inputs, outputs, attrs=None):
        self.ops.append({
            "id": len(self.ops),
            "name": name,
            "kind": kind,
            "attrs": attrs or {},
            "inputs": [dict(self.tensors[t]) for t in inputs],
            "outputs": [dict(self.tensors[t]) for t in outputs],
        })
        return outputs[0] if len(outputs) == 1 else outputs

    def dump(self, path):
        produced = {t["id"] for o in self.ops for t in o["outputs"]}
        consumed = {t["id"] for o in self.ops for t in o["inputs"]}
        inputs = sorted(consumed - produced)
        outputs = sorted(produced - consumed)
        doc = {
            "version": "3.14.0",
            "engine_kind": "cpu",
            "fpmath_mode": "strict",
            "fpmath_mode_apply_to_int": "false",
            "input_ports": inputs,
            "output_ports": outputs,
            "graph": self.ops,
        }
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


def b(v):
    return {"type": "bool", "value": 1 if v else 0}


def s64(v):
    return {"type": "s64", "value": v}


def s64s(v):
    return {"type": "s64[]", "value": list(v)}


def f32(v):
    return {"type": "f32", "value": v}


def string(v):
    return {"type": "string", "value": v}


def matmul(g, name, a, w, bias, out_shape, dt, transpose_b=False):
    out = g.tensor(dt, out_shape)
    ins = [a, w] + ([bias] if bias is not None else [])
    return g.op("MatMul", name, ins, [out], {"transpose_a": b(False), "transpose_b": b(transpose_b)})


def layernorm(g, name, x, hidden, shape, dt):
    gamma = g.tensor("f32", [hidden], "constant")
    beta = g.tensor("f32", [hidden], "constant")
    out = g.tensor(dt, shape)
    return g.op("LayerNorm", name, [x, gamma, beta], [out],
                {"begin_norm_axis": s64(-1), "epsilon": f32(1e-12), "keep_stats": b(False),
                 "use_affine": b(True)})


def bert_encoder(dt="f32", seq=128, hidden=768, heads=12, ffn=3072):
    g = Graph()
    hd = hidden // heads
    x = g.tensor(dt, [1, seq, hidden])
    heads_shape = [1, heads, seq, hd]

    def proj(name):
        w = g.tensor(dt, [1, heads, hidden, hd], "constant")
        bias = g.tensor(dt, [1, heads, 1, hd], "constant")
        return matmul(g, name, x, w, bias, heads_shape, dt)

    q = proj("attention.self.query")
    k = proj("attention.self.key")
    v = proj("attention.self.value")
    scores = matmul(g, "attention.scores", q, k, None, [1, heads, seq, seq], dt, transpose_b=True)
    scale = g.tensor(dt, [], "constant")
    scaled = g.op("Multiply", "attention.scale", [scores, scale], [g.tensor(dt, [1, heads, seq, seq])],
                  {"auto_broadcast": string("numpy")})
    mask = g.tensor(dt, [1, 1, 1, seq])
    masked = g.op("Add", "attention.mask", [scaled, mask], [g.tensor(dt, [1, heads, seq, seq])],
                  {"auto_broadcast": string("numpy")})
    probs = g.op("SoftMax", "attention.softmax", [masked], [g.tensor(dt, [1, heads, seq, seq])],
                 {"axis": s64(-1), "mode": string("inf_as_zero")})
    ctx = matmul(g, "attention.context", probs, v, None, heads_shape, dt)
    ctx_t = g.op("StaticTranspose", "attention.merge_heads.transpose", [ctx],
                 [g.tensor(dt, [1, seq, heads, hd])], {"order": s64s([0, 2, 1, 3])})
    ctx_m = g.op("StaticReshape", "attention.merge_heads.reshape", [ctx_t],
                 [g.tensor(dt, [1, seq, hidden])], {"shape": s64s([1, seq, hidden]), "special_zero": b(False)})

    wo = g.tensor(dt, [hidden, hidden], "constant")
    bo = g.tensor(dt, [hidden], "constant")
    attn = matmul(g, "attention.output.dense", ctx_m, wo, bo, [1, seq, hidden], dt)
    res1 = g.op("Add", "attention.output.residual", [attn, x], [g.tensor(dt, [1, seq, hidden])],
                {"auto_broadcast": string("numpy")})
    h1 = layernorm(g, "attention.output.LayerNorm", res1, hidden, [1, seq, hidden], dt)

    w1 = g.tensor(dt, [hidden, ffn], "constant")
    b1 = g.tensor(dt, [ffn], "constant")
    inter = matmul(g, "intermediate.dense", h1, w1, b1, [1, seq, ffn], dt)
    act = g.op("GELU", "intermediate.gelu", [inter], [g.tensor(dt, [1, seq, ffn])],
               {"mode": string("gelu_erf")})
    w2 = g.tensor(dt, [ffn, hidden], "constant")
    b2 = g.tensor(dt, [hidden], "constant")
    out = matmul(g, "output.dense", act, w2, b2, [1, seq, hidden], dt)
    res2 = g.op("Add", "output.residual", [out, h1], [g.tensor(dt, [1, seq, hidden])],
                {"auto_broadcast": string("numpy")})
    layernorm(g, "output.LayerNorm", res2, hidden, [1, seq, hidden], dt)
    return g


def llama_mlp_int4(tokens=32, hidden=2048, inter=5632, group=128, dt="f32"):
    g = Graph()
    x = g.tensor(dt, [tokens, hidden])

    def weight(name, k, n):
        w = g.tensor("u4", [k, n], "constant")
        sc = g.tensor("f32", [k // group, n], "constant")
        zp = g.tensor("u4", [k // group, n], "constant")
        return g.op("DynamicDequantize", name + ".dequantize", [w, sc, zp], [g.tensor(dt, [k, n])],
                    {"qtype": string("per_group"), "group_shape": s64s([group, 1])})

    wg = weight("mlp.gate_proj", hidden, inter)
    gate = matmul(g, "mlp.gate_proj", x, wg, None, [tokens, inter], dt)
    wu = weight("mlp.up_proj", hidden, inter)
    up = matmul(g, "mlp.up_proj", x, wu, None, [tokens, inter], dt)
    sig = g.op("Sigmoid", "mlp.act.sigmoid", [gate], [g.tensor(dt, [tokens, inter])])
    silu = g.op("Multiply", "mlp.act.silu", [gate, sig], [g.tensor(dt, [tokens, inter])],
                {"auto_broadcast": string("numpy")})
    hid = g.op("Multiply", "mlp.gate_times_up", [silu, up], [g.tensor(dt, [tokens, inter])],
               {"auto_broadcast": string("numpy")})
    wd = weight("mlp.down_proj", inter, hidden)
    matmul(g, "mlp.down_proj", hid, wd, None, [tokens, hidden], dt)
    return g


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    bert_encoder().dump(os.path.join(out_dir, "bert_base_encoder_f32.json"))
    llama_mlp_int4().dump(os.path.join(out_dir, "llama_mlp_int4.json"))


if __name__ == "__main__":
    main()
