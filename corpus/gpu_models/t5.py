"""T5 (transformers `T5Model`, 2 encoder and 2 decoder layers, relu feed-forward, random
weights) on CUDA.

Inference: one encoder-decoder forward under no_grad. `--train`: one training step (MSE of the
decoder's last hidden state), backward, SGD step. No bug of its own; plant one with
`minify --inject SPEC` (corpus/gpu_models/manifest.json). Needs transformers; dropout is off.
"""
import sys

import torch
from transformers import T5Config, T5Model


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = T5Config(vocab_size=512, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                      num_heads=4, dropout_rate=0.0, feed_forward_proj="relu", use_cache=False)
    model = T5Model(config).to(device).train(train)
    ids = torch.randint(0, 512, (2, 16), device=device)
    dec = torch.randint(0, 512, (2, 8), device=device)
    compiled = torch.compile(model)
    if not train:
        with torch.no_grad():
            return compiled(input_ids=ids, decoder_input_ids=dec).last_hidden_state
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = compiled(input_ids=ids, decoder_input_ids=dec).last_hidden_state.pow(2).mean()
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None][:4]
    opt.step()
    return loss, grads


if __name__ == "__main__":
    out = main()
    print("done", float(out[0] if isinstance(out, tuple) else out.float().sum()))
