import torch
import torch.nn as nn


class Model(nn.Module):
    """VGG16: five blocks of 3x3 conv + ReLU (2, 2, 3, 3, 3 convs) each ending in 2x2 max-pool,
    then three Linear layers with ReLU and Dropout(0.0) (deterministic)."""

    def __init__(self, num_classes=1000):
        super().__init__()
        layers = []
        in_channels = 3
        for out_channels, num_convs in [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)]:
            for _ in range(num_convs):
                layers.append(nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1))
                layers.append(nn.ReLU(inplace=True))
                in_channels = out_channels
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


batch_size = 10
num_classes = 1000


def get_inputs():
    x = torch.rand(batch_size, 3, 224, 224)
    return [x]


def get_init_inputs():
    return [num_classes]
