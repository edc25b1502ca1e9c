"""GPT-2 (transformers `GPT2LMHeadModel`, 2 layers, random weights) on CUDA.

Inference: one forward under no_grad. `--train`: one training step with the causal LM loss
(labels = inputs), backward, SGD step. No bug of its own; plant one with `minify --inject SPEC`
(corpus/gpu_models/manifest.json). Needs transformers; dropout is off; no KV cache.
"""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
    model = GPT2LMHeadModel(config).to(device).train(train)
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
