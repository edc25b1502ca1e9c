"""BERT (transformers `BertModel`, 2 layers, random weights) with its pooler, on CUDA.

Inference: one forward under no_grad. `--train`: one training step (forward, an MSE loss on the
pooled output, backward, SGD step). No bug of its own; plant one with `minify --inject SPEC`
(corpus/gpu_models/manifest.json). Needs transformers; dropout is off so eager and compiled agree.
"""
import sys

import torch
from transformers import BertConfig, BertModel


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    model = BertModel(config).to(device).train(train)
    ids = torch.randint(0, 512, (2, 16), device=device)
    compiled = torch.compile(model)
    if not train:
        with torch.no_grad():
            return compiled(input_ids=ids).pooler_output
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = compiled(input_ids=ids).pooler_output.pow(2).mean()
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None][:4]
    opt.step()
    return loss, grads


if __name__ == "__main__":
    out = main()
    print("done", float(out[0] if isinstance(out, tuple) else out.float().sum()))
