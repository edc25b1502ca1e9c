"""ViT (transformers `ViTModel`, 2 layers, 32x32 images in 8x8 patches, random weights) on CUDA.

Inference: one forward under no_grad. `--train`: one training step (MSE of the pooled output),
backward, SGD step. No bug of its own; plant one with `minify --inject SPEC`
(corpus/gpu_models/manifest.json). Needs transformers; dropout is off.
"""
import sys

import torch
from transformers import ViTConfig, ViTModel


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128, hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
    model = ViTModel(config).to(device).train(train)
    images = torch.randn(2, 3, 32, 32, device=device)
    compiled = torch.compile(model)
    if not train:
        with torch.no_grad():
            return compiled(pixel_values=images).last_hidden_state
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = compiled(pixel_values=images).pooler_output.pow(2).mean()
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None][:4]
    opt.step()
    return loss, grads


if __name__ == "__main__":
    out = main()
    print("done", float(out[0] if isinstance(out, tuple) else out.float().sum()))
