"""CUDA encoder / mixer / head model split into three Dynamo graphs, with Inductor's relu accuracy bug.

The forward calls `torch._dynamo.graph_break()` twice (standing in for logging or other
untraceable code), so Dynamo compiles three graphs: the encoder (graph 0), the token mixer
(graph 1) and the classification head (graph 2). Only the mixer contains a relu, and
`torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"` makes the Triton backend
print relu(x) as `x + 1`, so only graph 1 is miscompiled. The other activations are GELU,
SiLU, tanh and sigmoid, which do not lower to relu.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"


class EncoderMixerHead(nn.Module):
    def __init__(self, vocab=100, dim=48, tokens=24, classes=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(tokens, dim) * 0.02)
        self.enc_norm = nn.LayerNorm(dim)
        self.enc_fc1 = nn.Linear(dim, 2 * dim)
        self.enc_fc2 = nn.Linear(2 * dim, dim)
        self.enc_norm2 = nn.LayerNorm(dim)
        self.enc_fc3 = nn.Linear(dim, 2 * dim)
        self.enc_fc4 = nn.Linear(2 * dim, dim)
        self.enc_out_norm = nn.LayerNorm(dim)
        # MLP-Mixer style block: mix across tokens, then across channels
        self.mix_norm1 = nn.LayerNorm(dim)
        self.token_fc1 = nn.Linear(tokens, 2 * tokens)
        self.token_fc2 = nn.Linear(2 * tokens, tokens)
        self.mix_norm2 = nn.LayerNorm(dim)
        self.chan_fc1 = nn.Linear(dim, 2 * dim)
        self.chan_fc2 = nn.Linear(2 * dim, dim)
        self.head_norm = nn.LayerNorm(dim)
        self.head_fc1 = nn.Linear(3 * dim, dim)
        self.head_ln = nn.LayerNorm(dim)
        self.head_fc2 = nn.Linear(dim, dim)
        self.head_fc3 = nn.Linear(dim, classes)

    def forward(self, ids):
        # graph 0: encoder
        x = self.tok(ids) + self.pos
        x = x + self.enc_fc2(F.gelu(self.enc_fc1(self.enc_norm(x))))
        x = x + self.enc_fc4(F.gelu(self.enc_fc3(self.enc_norm2(x)), approximate="tanh"))
        x = self.enc_out_norm(x)
        torch._dynamo.graph_break()

        # graph 1: mixer (the only relu in the model is the token-mixing activation)
        y = self.mix_norm1(x).transpose(1, 2)
        y = self.token_fc2(torch.relu(self.token_fc1(y))).transpose(1, 2)
        x = x + y
        z = self.mix_norm2(x)
        x = x + self.chan_fc2(F.silu(self.chan_fc1(z)) * torch.sigmoid(z.mean(-1, keepdim=True)))
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        torch._dynamo.graph_break()

        # graph 2: head (mean, max and std pooling, then a small classifier)
        x = self.head_norm(x)
        pooled = torch.cat([x.mean(dim=1), x.amax(dim=1), x.std(dim=1)], dim=-1)
        h = torch.tanh(self.head_ln(self.head_fc1(pooled)))
        h = h + F.gelu(self.head_fc2(h))
        logits = self.head_fc3(h)
        return F.log_softmax(logits, dim=-1), pooled


def main():
    torch.manual_seed(0)
    model = EncoderMixerHead().cuda().eval()
    ids = torch.randint(100, (6, 24), device="cuda")

    compiled = torch.compile(model)
    with torch.no_grad():
        log_probs, pooled = compiled(ids)
    print("log-probs[0]:", log_probs[0])
    print("pooled norm:", float(pooled.norm()))


if __name__ == "__main__":
    main()
