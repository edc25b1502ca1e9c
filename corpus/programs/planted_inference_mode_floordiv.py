"""Program shape: `torch.inference_mode()` around a compiled int64 feature-bucketing function
(quantize sensor readings into integer bins, then hash with the device id).

Plant: the vectorized C++ integer floordiv is off by one
(`inject_bug("floordiv", "accuracy", form="add_one", paths=("cppvec",))`).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op floordiv.
"""
import torch

from compiler.inject import inject_bug

inject_bug("floordiv", "accuracy", form="add_one", paths=("cppvec",))


def bucketize(readings, device_ids, buckets: int = 97):
    bins = (readings * 100).to(torch.int64) // 7
    return (bins * 31 + device_ids) % buckets


def main():
    torch.manual_seed(0)
    compiled = torch.compile(bucketize)
    readings = torch.rand(4, 64) * 50
    device_ids = torch.randint(0, 1000, (4, 64))
    with torch.inference_mode():
        ids = compiled(readings, device_ids)
    print("ids", ids[0, :8].tolist())
    return ids


if __name__ == "__main__":
    main()
