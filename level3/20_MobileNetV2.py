import torch
import torch.nn as nn


class Model(nn.Module):
    """MobileNet v2: 3x3 conv stem, 17 inverted-residual-style blocks (optional 1x1 expand, 3x3 depthwise,
    1x1 linear projection, each with BatchNorm; ReLU6 after expand and depthwise), a 1x1 conv to 1280,
    global average pool, Dropout(0.0), Linear.

    As in the reference, the blocks are plain sequences: no residual additions are made.
    After the layers are built with PyTorch's default initialisation, every module is re-initialised
    in self.modules() order: convolutions kaiming-normal (fan_out, bias zeroed), BatchNorm weight 1 and
    bias 0, the Linear normal(0, 0.01) with bias 0; so the same seed gives KernelBench's weights.
    """

    def __init__(self, num_classes=1000):
        super().__init__()

        def make_divisible(v: float, divisor: int, min_value: int = 0) -> int:
            if min_value == 0:
                min_value = divisor
            new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
            if new_v < 0.9 * v:
                new_v += divisor
            return new_v

        def inverted_block(inp: int, oup: int, stride: int, expand_ratio: int) -> nn.Sequential:
            hidden_dim = int(inp * expand_ratio)
            layers = []
            if expand_ratio != 1:
                layers.append(nn.Conv2d(inp, hidden_dim, 1, 1, 0, bias=False))
                layers.append(nn.BatchNorm2d(hidden_dim))
                layers.append(nn.ReLU6(inplace=True))
            layers.append(nn.Conv2d(hidden_dim, hidden_dim, 3, stride, 1, groups=hidden_dim, bias=False))
            layers.append(nn.BatchNorm2d(hidden_dim))
            layers.append(nn.ReLU6(inplace=True))
            layers.append(nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False))
            layers.append(nn.BatchNorm2d(oup))
            return nn.Sequential(*layers)

        input_channel = 32
        last_channel = 1280
        # expand ratio t, output channels c, repeats n, first stride s
        settings = [
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        features = [
            nn.Conv2d(3, input_channel, 3, 2, 1, bias=False),
            nn.BatchNorm2d(input_channel),
            nn.ReLU6(inplace=True),
        ]
        for t, c, n, s in settings:
            output_channel = make_divisible(c, 8)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(inverted_block(input_channel, output_channel, stride, t))
                input_channel = output_channel
        features.append(nn.Conv2d(input_channel, last_channel, 1, 1, 0, bias=False))
        features.append(nn.BatchNorm2d(last_channel))
        features.append(nn.ReLU6(inplace=True))
        features.append(nn.AdaptiveAvgPool2d((1, 1)))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(0.0),
            nn.Linear(last_channel, num_classes),
        )

        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out")
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0.0, 0.01)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x.view(x.size(0), -1)
        x = self.classifier(x)
        return x


batch_size = 10
num_classes = 1000


def get_inputs():
    x = torch.rand(batch_size, 3, 224, 224)
    return [x]


def get_init_inputs():
    return [num_classes]
