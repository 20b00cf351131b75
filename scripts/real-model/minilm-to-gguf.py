"""Writes all-MiniLM-L6-v2 (a sentence-transformers BERT) as an f16 GGUF that llama-server serves.

Usage: minilm-to-gguf.py MODEL_DIR GGUF_PY_DIR OUT NAME

It does what llama.cpp's convert_hf_to_gguf.py does for this model (conversion/bert.py, with
--outtype f16), with the gguf writer vendored beside that script and numpy, and without torch or
transformers: the safetensors file is read by its published layout (a little-endian u64 header
length, a JSON header, then the raw tensors), and the WordPiece vocabulary comes from
tokenizer.json. The metadata that decides how the model runs (hyperparameters, tokenizer, pooling,
every tensor's name, type and bytes) is the converter's: checked once against its output with
torch 2.11.0 and transformers 4.57.6, every tensor byte-identical. The model-card fields it copies
from README.md (tags, datasets) are left out.
"""

import json
import struct
import sys
from pathlib import Path

model_dir, gguf_py, out, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, gguf_py)
import gguf  # noqa: E402
import numpy as np  # noqa: E402

hp = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
if hp.get("model_type") != "bert" or hp.get("position_embedding_type", "absolute") != "absolute":
    sys.exit(f"{model_dir}: not a BERT model with absolute positions")
n_blocks = hp["num_hidden_layers"]


def read_safetensors(path):
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        if header_len > 100 << 20:
            sys.exit(f"{path}: header of {header_len} bytes")
        header = json.loads(f.read(header_len))
        base = 8 + header_len
        dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            begin, end = info["data_offsets"]
            f.seek(base + begin)
            raw = f.read(end - begin)
            if len(raw) != end - begin:
                sys.exit(f"{path}: {name} is cut short")
            yield name, np.frombuffer(raw, dtype=dtypes[info["dtype"]]).reshape(info["shape"])


writer = gguf.GGUFWriter(out, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
writer.add_type(gguf.GGUFType.MODEL)
writer.add_name(name)
writer.add_license("apache-2.0")
writer.add_block_count(n_blocks)
writer.add_context_length(hp["max_position_embeddings"])
writer.add_embedding_length(hp["hidden_size"])
writer.add_feed_forward_length(hp["intermediate_size"])
writer.add_head_count(hp["num_attention_heads"])
writer.add_layer_norm_eps(hp["layer_norm_eps"])
writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
writer.add_causal_attention(False)

modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
pooling = json.loads((model_dir / pooling_dir / "config.json").read_text(encoding="utf-8"))
if pooling.get("pooling_mode_mean_tokens"):
    writer.add_pooling_type(gguf.PoolingType.MEAN)
elif pooling.get("pooling_mode_cls_token"):
    writer.add_pooling_type(gguf.PoolingType.CLS)
else:
    sys.exit(f"{model_dir}: a pooling this script does not write")

tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
if tokenizer["model"]["type"] != "WordPiece":
    sys.exit(f"{model_dir}: not a WordPiece tokenizer")
vocab = tokenizer["model"]["vocab"]
by_id = {i: t for t, i in vocab.items()}
special = {t["id"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
tokens, toktypes = [], []
for i in range(hp["vocab_size"]):
    if i not in by_id:
        tokens.append(f"[PAD{i}]")
        toktypes.append(gguf.TokenType.UNUSED)
        continue
    tok = by_id[i]
    if i in special:
        tokens.append(tok)
        toktypes.append(gguf.TokenType.CONTROL)
    else:
        # llama.cpp's WordPiece reads the "phantom space" form: a word start carries U+2581,
        # a continuation drops its "##".
        tokens.append(tok[2:] if tok.startswith("##") else "\u2581" + tok)
        toktypes.append(gguf.TokenType.NORMAL)
writer.add_token_type_count(hp.get("type_vocab_size", 1))
writer.add_tokenizer_model("bert")
# The pre-tokenizer name convert_hf_to_gguf.py derives for this tokenizer from its output hash.
writer.add_tokenizer_pre("jina-v2-en")
writer.add_token_list(tokens)
writer.add_token_types(toktypes)
gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(writer)
writer.add_quantization_version(gguf.GGML_QUANT_VERSION)

names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_blocks)
keep_f32 = (gguf.MODEL_TENSOR.POS_EMBD, gguf.MODEL_TENSOR.TOKEN_TYPES)
keep_f32_names = {gguf.TENSOR_NAMES[t] for t in keep_f32}
for hf_name, data in read_safetensors(model_dir / "model.safetensors"):
    hf_name = hf_name.removeprefix("bert.")
    # The pooler and the masked-LM head are not used for embeddings.
    if hf_name in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias") or hf_name.startswith("cls."):
        continue
    new_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
    if new_name is None:
        sys.exit(f"{model_dir}: no GGUF name for tensor {hf_name}")
    data = data.astype(np.float32)
    as_f32 = (
        data.ndim <= 1
        or new_name.endswith("_norm.weight")
        or not new_name.endswith(".weight")
        or new_name.removesuffix(".weight") in keep_f32_names
    )
    if as_f32:
        writer.add_tensor(new_name, data, raw_dtype=gguf.GGMLQuantizationType.F32)
    else:
        writer.add_tensor(new_name, data.astype(np.float16), raw_dtype=gguf.GGMLQuantizationType.F16)

writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
