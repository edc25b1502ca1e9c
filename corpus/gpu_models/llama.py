"""Llama (transformers `LlamaForCausalLM`, 2 layers, random weights) on CUDA.

Inference: one forward under no_grad. `--train`: one training step with the causal LM loss,
backward, SGD step. No bug of its own; plant one with `minify --inject SPEC`
(corpus/gpu_models/manifest.json). Needs transformers; no KV cache.
"""
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         use_cache=False)
    model = LlamaForCausalLM(config).to(device).train(train)
    ids = torch.randint(0, 512, (2, 16), device=device)
    compiled = torch.compile(model)
    if not train:
        with torch.no_grad():
            return compiled(input_ids=ids).logits
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = compiled(input_ids=ids, labels=ids).loss
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None][:4]
    opt.step()
    return loss, grads


if __name__ == "__main__":
    out = main()
    print("done", float(out[0] if isinstance(out, tuple) else out.float().sum()))
