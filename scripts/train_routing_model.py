"""Fine-tunes the routing model (all-MiniLM-L6-v2) on public tool-retrieval data, on CPU.

Run through scripts/train-routing-model, which sets up the Python environment, the base model and
the gateway binary. Steps:
1. The training tools become a catalog in the evaluation format; the gateway itself
   (`mcp-gateway routing-texts`) writes the texts its model would embed for them and for the
   requests, so the model is trained on exactly what it will see.
2. Pairs (request, tool it needs) are sampled with a fixed seed: every source, with the share of
   command-line pages (tldr, 74% of the data) capped.
   With --step-pairs, a request that needs several tools and that the gateway splits into steps
   is trained on the step that serves each tool, as the gateway searches it (step_anchors),
   instead of the whole request (`replace`) or besides it (`add`).
3. Contrastive training with in-batch negatives (MultipleNegativesRankingLoss; batches hold no
   repeated text, so a request's other tool is never its negative).
4. The trained weights are written into the packaged int8 ONNX graph in the package's own
   quantisation (int8 with one fp32 scale per row of an embedding table and per column of a
   MatMul weight), so scripts/int8-kernels.py rewrites it exactly as it does today's model.

Usage: python train_routing_model.py --data DIR --base DIR --gateway BIN --out FILE.onnx
       [--pairs N] [--cli-share S] [--batch B] [--lr LR] [--epochs E] [--seed S] [--work DIR]
       [--hard-negatives] [--step-pairs replace|add]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def catalog_line(tool):
    """A training tool as an evaluation catalog line: {server, name, description, inputSchema}."""
    source, tid = tool["source"], tool["id"]
    params = tool.get("parameters") or {}
    if source == "tldr-pages":
        server, props = f"{params.get('platform', 'common')} shell", {}
    elif source == "gorilla-apibench":
        server, props = tid.split(":")[1], {}
    elif source in ("callnavi", "toolalpaca"):
        server = tid.split(":")[1]
        props = params.get("properties", params) if isinstance(params, dict) else {}
    else:
        server = source
        props = params.get("properties", params) if isinstance(params, dict) else {}
    if not isinstance(props, dict):
        props = {}
    props = {k: {} for k in props}
    return {
        "server": server,
        "name": tool["name"],
        "description": tool.get("description", ""),
        "inputSchema": {"type": "object", "properties": props},
    }


def gateway_texts(gateway, work, catalog=None, queries=None):
    """The texts the gateway embeds, one per input line, in order."""
    return [row["text"] for row in gateway_rows(gateway, work, catalog, queries)]


def gateway_rows(gateway, work, catalog=None, queries=None):
    """`routing-texts`' lines: `text`, and `steps` for a request the gateway splits."""
    args = [gateway, "routing-texts"]
    paths = []
    for flag, rows in (("--catalog", catalog), ("--queries", queries)):
        if rows is None:
            continue
        path = os.path.join(work, flag.strip("-") + ".jsonl")
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        args += [flag, path]
        paths.append(path)
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def sample_pairs(examples, pairs, cli_share, seed):
    """(query index, tool id) pairs: all sources but tldr first, tldr filling at most `cli_share`
    of the total; then cut to `pairs` at random."""
    rng = random.Random(seed)
    other, cli = [], []
    for i, e in enumerate(examples):
        for t in e["positives"]:
            (cli if e["source"] == "tldr-pages" else other).append((i, t))
    rng.shuffle(other)
    rng.shuffle(cli)
    n_cli = min(len(cli), int(pairs * cli_share))
    chosen = other[: pairs - n_cli] + cli[:n_cli]
    rng.shuffle(chosen)
    return chosen


def step_anchors(args, examples, steps, tools, pairs):
    """For a request that needs several tools and that the gateway splits into steps, the step
    each of its tools serves: the one the published model finds closest to the tool. The gateway
    searches each step on its own, so a step, not the whole request, is what must find the tool
    ("… then email it to Bob" → the mail tool); and another step's tool in the same batch is
    then a true negative. Returns the text to train each pair on."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = args.max_length
    wanted = [i for i, (q, _) in enumerate(pairs)
              if len(examples[q]["positives"]) > 1 and steps[q]]
    queries = sorted({pairs[i][0] for i in wanted})
    step_texts = [s for q in queries for s in steps[q]]
    sv = model.encode(step_texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    first, at = {}, 0
    for q in queries:
        first[q] = at
        at += len(steps[q])
    tool_ids = sorted({pairs[i][1] for i in wanted})
    tv = model.encode([tools[t] for t in tool_ids], batch_size=64, normalize_embeddings=True,
                      convert_to_numpy=True)
    row = {t: i for i, t in enumerate(tool_ids)}
    anchors = [None] * len(pairs)
    for i in wanted:
        q, t = pairs[i]
        block = sv[first[q]:first[q] + len(steps[q])]
        anchors[i] = steps[q][int(np.argmax(block @ tv[row[t]]))]
    return anchors


def mine_negatives(args, examples, texts, tools, pairs):
    """One hard negative per pair: a tool the published model ranks high for the text the pair is
    trained on (`texts`, one per pair: the request, or the step that needs the tool), ranks 3 to
    30 among the tools of the request's own source, that the request does not need. Ranks 1 and 2
    are skipped: near-duplicates that nobody labelled (a `tldr` page and its alias) sit there."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = args.max_length
    ids = sorted(tools)
    source_of = {t: t.split(":", 1)[0] for t in ids}
    vectors = model.encode([tools[t] for t in ids], batch_size=64, normalize_embeddings=True,
                           convert_to_numpy=True)
    wanted = sorted(set(texts))
    qv = model.encode(wanted, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    row = {text: i for i, text in enumerate(wanted)}
    by_source = {}
    for i, t in enumerate(ids):
        by_source.setdefault(source_of[t], []).append(i)
    by_source = {k: np.array(v) for k, v in by_source.items()}
    rng = random.Random(args.seed)
    negatives = []
    for (q, t), text in zip(pairs, texts):
        pool = by_source[source_of[t]]
        scores = vectors[pool] @ qv[row[text]]
        ranked = pool[np.argsort(-scores)[:30]]
        positives = set(examples[q]["positives"])
        choices = [ids[i] for i in ranked[2:] if ids[i] not in positives]
        negatives.append(rng.choice(choices) if choices else rng.choice(ids))
    return negatives


def train(args, texts, tools, pairs, negatives=None):
    """`texts`: per pair, the text it is trained on (the request, or the step that needs the
    tool)."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (SentenceTransformer, SentenceTransformerTrainer,
                                       SentenceTransformerTrainingArguments, losses)
    from sentence_transformers.training_args import BatchSamplers

    torch.manual_seed(args.seed)
    torch.set_num_threads(os.cpu_count() or 2)
    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = args.max_length
    columns = {
        "anchor": texts,
        "positive": [tools[t] for _, t in pairs],
    }
    if negatives:
        columns["negative"] = [tools[t] for t in negatives]
    data = Dataset.from_dict(columns)
    targs = SentenceTransformerTrainingArguments(
        output_dir=os.path.join(args.work, "checkpoints"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        warmup_ratio=0.1,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        logging_steps=10,
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
        report_to=[],
        dataloader_drop_last=True,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=targs, train_dataset=data,
        loss=losses.MultipleNegativesRankingLoss(model),
    )
    trainer.train()
    return model


def quantize_into(int8_path, weights, out_path):
    """Writes `weights` (HF BERT names → fp32 arrays) into the packaged int8 graph."""
    import onnx
    from onnx import TensorProto, numpy_helper

    model = onnx.load(int8_path)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    users = {}
    for n in g.node:
        for x in n.input:
            users.setdefault(x, []).append(n)

    def put(name, array):
        inits[name].CopyFrom(numpy_helper.from_array(array, name))

    # The MatMul weights are unnamed in the graph; they come layer by layer in this order.
    per_layer = ["attention.self.query", "attention.self.key", "attention.self.value",
                 "attention.output.dense", "intermediate.dense", "output.dense"]
    matmuls = [f"encoder.layer.{layer}.{p}.weight" for layer in range(6) for p in per_layer]
    done = set()
    for init in list(g.initializer):
        if init.data_type == TensorProto.INT8:
            (cast,) = users[init.name]
            (mul,) = users[cast.output[0]]
            scale = next(x for x in mul.input if x != cast.output[0])
            (use,) = users[mul.output[0]]
            if use.op_type == "Gather":
                key = init.name.removeprefix("inner.").removesuffix("_q")
                w = weights[key]  # (rows, dim): one scale per row
                s = np.abs(w).max(axis=1, keepdims=True) / 127.0
            else:
                key = matmuls.pop(0)
                w = weights[key].T  # (in, out): one scale per column
                s = np.abs(w).max(axis=0, keepdims=True) / 127.0
            s = np.maximum(s, 1e-12).astype(np.float32)
            q = np.clip(np.rint(w / s), -127, 127).astype(np.int8)
            put(init.name, q)
            put(scale, s.reshape(numpy_helper.to_array(inits[scale]).shape))
            done |= {init.name, scale, key}
    for init in list(g.initializer):
        if (init.name not in done and init.name.startswith("inner.")
                and init.data_type == TensorProto.FLOAT):
            key = init.name.removeprefix("inner.")
            put(init.name, weights[key].astype(np.float32))
            done |= {init.name, key}
    if matmuls:
        raise SystemExit(f"train: {len(matmuls)} MatMul weights not found in the graph")
    left = [k for k in weights if k not in done and k != "embeddings.position_ids"
            and not k.startswith("pooler.")]
    if left:
        raise SystemExit(f"train: weights the graph does not hold: {left[:5]}")
    onnx.save(model, out_path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--base", required=True, help="folder of the sentence-transformers model")
    ap.add_argument("--int8", required=True, help="the packaged int8 ONNX model")
    ap.add_argument("--gateway", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/routing-train")
    ap.add_argument("--pairs", type=int, default=12800)
    ap.add_argument("--cli-share", type=float, default=0.2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--epochs", type=int, default=1,
                    help="passes over the pairs (each batch drawn anew)")
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--hard-negatives", action="store_true",
                    help="add one mined hard negative per pair (mine_negatives)")
    ap.add_argument("--step-pairs", choices=["replace", "add"],
                    help="a split request's pair trained on the step that needs the tool: "
                         "instead of the whole request (replace) or besides it (add)")
    ap.add_argument("--requantize-only", action="store_true",
                    help="write the base weights into the int8 graph (checks the quantisation)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    if args.requantize_only:
        from safetensors.numpy import load_file
        quantize_into(args.int8, load_file(os.path.join(args.base, "model.safetensors")),
                      args.out)
        return

    tool_rows = load_jsonl(os.path.join(args.data, "tools.jsonl"))
    examples = load_jsonl(os.path.join(args.data, "train.jsonl"))
    tool_texts = gateway_texts(args.gateway, args.work,
                               catalog=[catalog_line(t) for t in tool_rows])
    tools = {t["id"]: text for t, text in zip(tool_rows, tool_texts)}
    rows = gateway_rows(args.gateway, args.work,
                        queries=[{"query": e["query"]} for e in examples])
    queries = [r["text"] for r in rows]
    pairs = sample_pairs(examples, args.pairs, args.cli_share, args.seed)
    print(f"train: {len(pairs)} pairs, e.g. {queries[pairs[0][0]]!r} -> {tools[pairs[0][1]]!r}",
          file=sys.stderr)
    started = time.time()
    anchors = None
    if args.step_pairs:
        anchors = step_anchors(args, examples, [r.get("steps") for r in rows], tools, pairs)
        if args.step_pairs == "add":
            on_step = [i for i, a in enumerate(anchors) if a is not None]
            pairs = pairs + [pairs[i] for i in on_step]
            anchors = [None] * len(anchors) + [anchors[i] for i in on_step]
        moved = sum(a is not None for a in anchors)
        example = next((i for i, a in enumerate(anchors) if a), None)
        print(f"train: {moved} pairs on a step, e.g. {anchors[example]!r} -> "
              f"{tools[pairs[example][1]]!r}" if example is not None else "train: no step pairs",
              file=sys.stderr)
    texts = [(anchors and anchors[i]) or queries[q] for i, (q, _) in enumerate(pairs)]
    negatives = None
    if args.hard_negatives:
        # Mined for the text each pair is trained on: a step's negative is a look-alike of the
        # tool that step needs, not of the request's first tool.
        negatives = mine_negatives(args, examples, texts, tools, pairs)
        print(f"train: negatives mined in {time.time() - started:.0f} s, e.g. "
              f"{tools[negatives[0]]!r}", file=sys.stderr)
    model = train(args, texts, tools, pairs, negatives)
    print(f"train: trained in {time.time() - started:.0f} s", file=sys.stderr)
    fp32 = os.path.join(args.work, "fp32")
    model.save(fp32)
    from safetensors.numpy import load_file
    quantize_into(args.int8, load_file(os.path.join(fp32, "model.safetensors")), args.out)


if __name__ == "__main__":
    main()
