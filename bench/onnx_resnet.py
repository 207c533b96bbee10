"""ResNet-50 (torchvision's v1.5: the stride on the 3x3 conv) as torch.onnx.export writes it
with training=TrainingMode.PRESERVE in eval: every Conv (no bias) followed by its own
BatchNormalization and Relu, so each engine has to fold the batch norms itself. Input
float32 [batch, 3, 224, 224], output logits [batch, classes] from GlobalAveragePool,
Flatten and Gemm(transB=1).
"""
from dataclasses import dataclass

import numpy as np

from onnx_builder import FLOAT, OnnxBuilder


@dataclass(frozen=True)
class ResNetConfig:
    blocks: tuple = (3, 4, 6, 3)
    widths: tuple = (64, 128, 256, 512)
    stem: int = 64
    expansion: int = 4
    classes: int = 1000
    image: int = 224


RESNET50 = ResNetConfig()


class _Weights:
    """Random weights drawn in graph order: He-normal convs (fan in), plausible batch-norm
    statistics, and a small gain on each block's last batch norm so the residual sum stays
    near unit scale through the 16 blocks."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def conv(self, c_out, c_in, k):
        std = np.sqrt(2.0 / (c_in * k * k))
        return (std * self.rng.standard_normal((c_out, c_in, k, k))).astype(np.float32)

    def batch_norm(self, c, gain):
        r = self.rng
        return {"weight": (gain * r.uniform(0.5, 1.0, c)).astype(np.float32),
                "bias": (0.1 * r.standard_normal(c)).astype(np.float32),
                "running_mean": (0.1 * r.standard_normal(c)).astype(np.float32),
                "running_var": r.uniform(0.5, 1.5, c).astype(np.float32)}

    def fc(self, out_f, in_f):
        w = self.rng.standard_normal((out_f, in_f)) / np.sqrt(in_f)
        return w.astype(np.float32), (0.01 * self.rng.standard_normal(out_f)).astype(np.float32)


def _conv_bn(b, w, x, name, c_in, c_out, k, stride, gain=1.0, relu=True):
    y = b.op("Conv", x, b.weight(name + ".weight", w.conv(c_out, c_in, k)), kernel_shape=[k, k],
             strides=[stride, stride], pads=[k // 2] * 4, dilations=[1, 1], group=1)
    bn = {key: b.weight(f"{name}.bn.{key}", v) for key, v in w.batch_norm(c_out, gain).items()}
    y = b.op("BatchNormalization", y, bn["weight"], bn["bias"], bn["running_mean"],
             bn["running_var"], epsilon=1e-5, momentum=0.9)
    return b.op("Relu", y) if relu else y


def _bottleneck(b, w, x, name, c_in, width, out, stride):
    y = _conv_bn(b, w, x, name + ".conv1", c_in, width, 1, 1)
    y = _conv_bn(b, w, y, name + ".conv2", width, width, 3, stride)
    y = _conv_bn(b, w, y, name + ".conv3", width, out, 1, 1, gain=0.3, relu=False)
    if stride != 1 or c_in != out:
        x = _conv_bn(b, w, x, name + ".downsample", c_in, out, 1, stride, relu=False)
    return b.op("Relu", b.op("Add", y, x))


def build(cfg: ResNetConfig, seed: int, name: str = "resnet"):
    b, w = OnnxBuilder(name), _Weights(seed)
    x = b.input("input", FLOAT, ["batch", 3, cfg.image, cfg.image])
    x = _conv_bn(b, w, x, "conv1", 3, cfg.stem, 7, 2)
    x = b.op("MaxPool", x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=0)
    c_in = cfg.stem
    for stage, (count, width) in enumerate(zip(cfg.blocks, cfg.widths)):
        out = width * cfg.expansion
        for i in range(count):
            stride = 2 if i == 0 and stage > 0 else 1
            x = _bottleneck(b, w, x, f"layer{stage + 1}.{i}", c_in, width, out, stride)
            c_in = out
    x = b.op("Flatten", b.op("GlobalAveragePool", x), axis=1)
    fc_w, fc_b = w.fc(cfg.classes, c_in)
    x = b.op("Gemm", x, b.weight("fc.weight", fc_w), b.weight("fc.bias", fc_b),
             alpha=1.0, beta=1.0, transB=1)
    b.output(x, "logits", FLOAT, ["batch", cfg.classes])
    return b.model()


def inputs(cfg: ResNetConfig, batch: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"input": rng.standard_normal((batch, 3, cfg.image, cfg.image), dtype=np.float32)}
