# Foreign program: RNN cells stepped by hand over time, modelled on the examples in the PyTorch docs
# for nn.GRUCell and nn.LSTMCell ("for i in range(6): hx = rnn(input[i], hx)") and on the
# "seq2seq" tutorial's decoder loop. The whole loop is compiled (Dynamo unrolls it). Expected:
# nothing fails.
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, n_in=10, hidden=20):
        super().__init__()
        self.gru = nn.GRUCell(n_in, hidden)
        self.lstm = nn.LSTMCell(hidden, hidden)
        self.out = nn.Linear(hidden, 5)

    def forward(self, inputs, hx, cx):
        h = torch.zeros(inputs.size(1), self.gru.hidden_size)
        outputs = []
        for t in range(inputs.size(0)):
            h = self.gru(inputs[t], h)
            hx, cx = self.lstm(h, (hx, cx))
            outputs.append(self.out(hx))
        return torch.stack(outputs), hx, cx


def main():
    torch.manual_seed(0)
    model = Encoder()
    inputs = torch.randn(6, 3, 10)  # (time_steps, batch, input_size)
    hx, cx = torch.randn(3, 20), torch.randn(3, 20)
    compiled = torch.compile(model)
    with torch.no_grad():
        out, hx, cx = compiled(inputs, hx, cx)
    print("out", tuple(out.shape), f"last hx sum {hx.sum().item():.4f}")
    return out


if __name__ == "__main__":
    main()
