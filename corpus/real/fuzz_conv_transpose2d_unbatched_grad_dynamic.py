"""Real torch.compile bug (not planted), found by `minify fuzz` through backward on torch 2.13.0 (CPU).
Kind: compile error where eager runs. `conv_transpose2d` on an unbatched (3-D) input that
requires grad, compiled with `dynamic=True`, raises `InductorError: TypeError: cannot determine
truth value of Relational: 1 < s..` while Inductor compiles the forward graph for training.
Eager runs; the same call with `dynamic=False`, or on an input that does not require grad,
compiles. The same class as #185510 (open: "cannot determine truth value of Relational during
stride sorting with dynamic=True"). Reproduces on torch 2.13.0 (CPU).
User-style program: one training step of a small upsampling decoder fed single images
(no batch dim), compiled once for every image size.
"""
import torch


class Upsample(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(1, 1, 3, 4) * 0.1)

    def forward(self, image):
        return torch.conv_transpose2d(image, self.weight, None, stride=2, padding=1, output_padding=1)


def main():
    torch.manual_seed(0)
    model = Upsample()
    step = torch.compile(model, dynamic=True)
    image = torch.randn(1, 4, 3, requires_grad=True)  # one channel, 4x3 pixels, no batch dim
    out = step(image)
    out.square().mean().backward()
    print("upsampled", tuple(out.shape), "grad norm", round(image.grad.norm().item(), 4))
    return out


if __name__ == "__main__":
    main()
