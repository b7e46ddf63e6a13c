"""A bench model with a known gradient noise scale: linear regression, Gaussian data.

``y = x . w* + sigma e`` with ``x ~ N(0, I_d)``, ``e ~ N(0, 1)``, the loss ``(x . w - y)^2 / 2``
at ``w = w* + delta``. A sample's gradient is ``g = x (x . delta - sigma e)``, so the true
gradient is ``G = E[x x^T] delta = delta`` and (Isserlis: ``E[x x^T (x . delta)^2] =
|delta|^2 I + 2 delta delta^T``) its covariance ``Sigma = (|delta|^2 + sigma^2) I +
delta delta^T``: ``tr Sigma = d (|delta|^2 + sigma^2) + |delta|^2`` and
``B_simple = tr Sigma / |G|^2``. Parameters and noise are large (|delta| = sigma = 10) so
that the bench's optimizer (AdamW, lr 1e-4) moves ``delta`` by well under 1% in a run.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from gpuscale.bench.models import BenchModel

W_STAR = torch.tensor([1.0, -1.0, 0.5, 2.0])
DELTA = torch.tensor([6.0, 8.0, 0.0, 0.0])
SIGMA = 10.0


def b_simple() -> float:
    """The closed form of ``tr Sigma / |G|^2``."""
    d, delta_sq = len(W_STAR), float(DELTA.pow(2).sum())
    return (d * (delta_sq + SIGMA**2) + delta_sq) / delta_sq


def make() -> BenchModel:
    module = nn.Linear(len(W_STAR), 1, bias=False)
    with torch.no_grad():
        module.weight.copy_((W_STAR + DELTA)[None, :])

    def make_batch(size: int, device: torch.device):
        x = torch.randn(size, len(W_STAR))  # torch's generator: the worker seeds it per rank
        y = x @ W_STAR + SIGMA * torch.randn(size)
        return x.to(device), y.to(device)

    def loss(output: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return 0.5 * (output.squeeze(-1) - y).pow(2).mean()

    return BenchModel(module, make_batch, loss, family="linreg")
