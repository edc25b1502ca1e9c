# Foreign program: a tabular/image data-preprocessing function compiled on its own, modelled on
# torchvision.transforms.Normalize plus the usual feature-engineering steps found in Kaggle
# notebooks (standardize, clamp outliers, one-hot encode a categorical column, mask missing values,
# build an attention padding mask). Expected: nothing fails.
import torch
import torch.nn.functional as F


@torch.compile
def preprocess(images, mean, std, numeric, category, lengths):
    images = (images.float() / 255.0 - mean[:, None, None]) / std[:, None, None]
    missing = torch.isnan(numeric)
    numeric = torch.where(missing, torch.zeros_like(numeric), numeric)
    numeric = (numeric - numeric.mean(0)) / (numeric.std(0) + 1e-6)
    numeric = numeric.clamp(-3.0, 3.0)
    onehot = F.one_hot(category, num_classes=5).float()
    features = torch.cat([numeric, onehot, missing.float()], dim=1)
    positions = torch.arange(12)
    pad_mask = positions[None, :] < lengths[:, None]
    return images, features, pad_mask


def main():
    torch.manual_seed(0)
    images = torch.randint(0, 256, (4, 3, 8, 8), dtype=torch.uint8)
    mean = torch.tensor([0.485, 0.456, 0.406])
    std = torch.tensor([0.229, 0.224, 0.225])
    numeric = torch.randn(4, 3) * 10
    numeric[1, 2] = float("nan")
    category = torch.tensor([0, 3, 4, 1])
    lengths = torch.tensor([12, 5, 9, 1])
    images, features, pad_mask = preprocess(images, mean, std, numeric, category, lengths)
    print("images", tuple(images.shape), f"{images.mean().item():.4f}", "features", features[1].tolist()[:4],
          "pad", pad_mask.sum(1).tolist())
    return images, features, pad_mask


if __name__ == "__main__":
    main()
