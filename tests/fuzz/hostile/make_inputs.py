#!/usr/bin/env python3
"""Writes the hostile inputs of hostile_test.sh into a folder: files that are slightly (or very) wrong in
the ways users and clusters hand them to us. Generated, because several are large or binary."""
import copy
import json
import os
import struct
import sys

out = sys.argv[1]
source = sys.argv[2]
os.makedirs(out, exist_ok=True)


def write(name, data):
    path = os.path.join(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


preset = json.load(open(os.path.join(source, "resources/presets/demo-tiny.json")))
tokenizer = json.load(open(os.path.join(source, "resources/demo/tokenizer.json")))

# Run configs.
write("deep.json", '{"schema": "slipway.run/1", "name": ' + "[" * 100000 + "]" * 100000 + "}")
write("truncated.json", json.dumps(preset)[:-40])
write("not-utf8.json", b'{"schema": "slipway.run/1", "name": "\xff\xfe"}')
bad = copy.deepcopy(preset)
bad["training"]["per_device_train_batch_size"] = 2**63
write("huge-batch.json", json.dumps(bad))
bad = copy.deepcopy(preset)
bad["slurm"]["partition"] = "gpu; rm -rf ~"
write("shell-partition.json", json.dumps(bad))

# tokenizer.json: ids out of range, truncated by int32, negative; a post-processor id in no vocab.
for name, id in [("tok-id-int-max.json", 2**31 - 1), ("tok-id-2-40.json", 2**40), ("tok-id-negative.json", -5),
                 ("tok-id-float.json", 1.5)]:
    t = copy.deepcopy(tokenizer)
    t["model"]["vocab"]["zzz"] = id
    write(name, json.dumps(t))
t = copy.deepcopy(tokenizer)
t["added_tokens"] = [{"id": 2**31, "content": "<x>", "special": True}]
write("tok-added-id.json", json.dumps(t))
write("tok-deep.json", '{"model": ' + "[" * 50000 + "]" * 50000 + "}")

# Model config.json with absurd sizes; a model folder whose safetensors header lies about sizes.
write("model-huge/config.json", json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
       "vocab_size": 2**62, "hidden_size": 2**40, "intermediate_size": 2**40, "num_hidden_layers": 2**31,
       "num_attention_heads": 2**20, "num_key_value_heads": 2**20, "max_position_embeddings": 2**40}))
cfg = json.load(open(os.path.join(source, "resources/demo/model/config.json")))
write("model-layers/config.json", json.dumps(dict(cfg, num_hidden_layers=2**31)))  # plan walked every layer
write("model-st/config.json", json.dumps(cfg))
header = json.dumps({"model.embed_tokens.weight": {"dtype": "F32", "shape": [2**32, 2**32],
                     "data_offsets": [0, 0]}}).encode()
write("model-st/model.safetensors", struct.pack("<Q", len(header)) + header)
write("model-offset/config.json", json.dumps(cfg))
header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [2**64 - 4, 2**64 - 0]}}).encode()
write("model-offset/model.safetensors", struct.pack("<Q", len(header)) + header + b"\0" * 4)
write("model-header/config.json", json.dumps(cfg))
write("model-header/model.safetensors", struct.pack("<Q", 2**64 - 1) + b"{}")
write("ids.jsonl", '{"ids": [1, 2, 3, 4]}\n')
# Token lines a real model must refuse by file and line: a float id, a huge one, a negative one, one past
# the vocabulary, too few ids, nesting.
vocab = cfg["vocab_size"]
write("ids-float.jsonl", '{"ids": [1, 2, 3, 4]}\n{"ids": [1, 1.5, 3]}\n')
write("ids-huge.jsonl", '{"ids": [1, 1e300, 3]}\n')
write("ids-negative.jsonl", '{"ids": [1, -1, 3]}\n')
write("ids-past-vocab.jsonl", '{"ids": [1, %d, 3]}\n' % vocab)
write("ids-short.jsonl", '{"ids": [1]}\n')
write("ids-deep.jsonl", '{"ids": ' + "[" * 50000 + "]" * 50000 + "}\n")

# Token ids outside int32 for decode.
write("decode-big.jsonl", '{"ids": [1099511627776]}\n')

# An MLLOG log whose only event nests too deep: summary must still run (bad line), not crash.
write("deep.log", ":::MLLOG " + "[" * 100000 + "\n")

# Evaluation task files (slipway-engine eval --tasks) and their JSONL data.
def tasks(name, kind, data, **options):
    write(name, json.dumps({"tasks": [dict(name="t", kind=kind, data=data, **options)]}))


write("eval-deep.json", '{"tasks": ' + "[" * 100000 + "]" * 100000 + "}")
tasks("eval-data-not-utf8.json", "perplexity", "not-utf8.jsonl")
write("not-utf8.jsonl", b'{"text": "ok"}\n{"text": "\xff\xfe"}\n')
tasks("eval-data-deep.json", "perplexity", "data-deep.jsonl")
write("data-deep.jsonl", '{"text": ' + "[" * 100000 + "]" * 100000 + "}\n")
tasks("eval-gold-huge.json", "multiple_choice", "gold-huge.jsonl")
write("gold-huge.jsonl", '{"context": "Q", "choices": ["a", "b"], "gold": 1e300}\n')
tasks("eval-dev-zero.json", "perplexity", "/dev/zero")
tasks("eval-max-new-tokens.json", "generation", "copy.jsonl", max_new_tokens=2**63)
write("copy.jsonl", '{"prompt": "Copy: a", "target": "a"}\n')
tasks("eval-prompt-too-long.json", "generation", "long.jsonl")
write("long.jsonl", json.dumps({"prompt": " ".join(f"word{i}" for i in range(2000)), "target": "x"}) + "\n")
