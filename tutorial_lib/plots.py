"""Figures the lessons show: loss curves, image grids, decision boundaries, gradient flow, schedules,
confusion matrices.

Each function returns a matplotlib ``Figure`` that is already closed in pyplot, so a notebook
cell shows it exactly once when the figure is the cell's last value, and nothing piles up
in memory across a long notebook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure


def _new(figsize: tuple[float, float] = (6, 4), ncols: int = 1, nrows: int = 1):
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False)
    plt.close(fig)  # shown once, as the cell's value, not again by pyplot at cell end
    return fig, axes


def plot_losses(
    train: Sequence[float],
    val: Sequence[float] | None = None,
    xlabel: str = "epoch",
    title: str = "Loss curves",
) -> Figure:
    """Train (and validation) loss per step or epoch; a widening gap means over-fitting."""
    fig, axes = _new()
    ax = axes[0, 0]
    ax.plot(range(1, len(train) + 1), list(train), label="train", marker="o", markersize=3)
    if val is not None:
        ax.plot(range(1, len(val) + 1), list(val), label="validation", marker="o", markersize=3)
    ax.set(xlabel=xlabel, ylabel="loss", title=title)
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def show_images(
    images: torch.Tensor,
    labels: Sequence[object] | None = None,
    ncols: int = 8,
    title: str | None = None,
) -> Figure:
    """A grid of images given as (N, C, H, W) or (N, H, W); one or three channels."""
    images = images.detach().cpu()
    if images.ndim == 3:
        images = images.unsqueeze(1)  # (N, H, W) -> (N, 1, H, W)
    if images.ndim != 4 or images.shape[1] not in (1, 3):
        raise ValueError(f"expected (N, C, H, W) with C in (1, 3), got {tuple(images.shape)}")
    n = images.shape[0]
    if n == 0:
        raise ValueError("show_images got an empty batch")
    ncols = min(ncols, n)
    nrows = (n + ncols - 1) // ncols
    fig, axes = _new((1.4 * ncols, 1.5 * nrows), ncols=ncols, nrows=nrows)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= n:
            continue
        img = images[i].permute(1, 2, 0)  # (C, H, W) -> (H, W, C) for imshow
        img = img.squeeze(-1) if img.shape[-1] == 1 else img.clamp(0, 1)
        ax.imshow(img.numpy(), cmap="gray")
        if labels is not None:
            ax.set_title(str(labels[i]), fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_decision_boundary(
    predict: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    resolution: int = 200,
    title: str = "Decision boundary",
) -> Figure:
    """Colour the plane by ``predict`` (points (M, 2) -> class ids (M,)) and overlay the data."""
    x, y = x.detach().cpu(), y.detach().cpu()
    lo, hi = x.min(0).values - 0.5, x.max(0).values + 0.5
    gx, gy = torch.meshgrid(
        torch.linspace(lo[0], hi[0], resolution),
        torch.linspace(lo[1], hi[1], resolution),
        indexing="xy",
    )
    grid = torch.stack([gx.flatten(), gy.flatten()], dim=1)  # (R*R, 2)
    with torch.no_grad():
        classes = predict(grid).detach().cpu().reshape(resolution, resolution)
    fig, axes = _new((5, 5))
    ax = axes[0, 0]
    ax.contourf(gx.numpy(), gy.numpy(), classes.numpy(), alpha=0.3, cmap="viridis")
    ax.scatter(
        x[:, 0].numpy(), x[:, 1].numpy(), c=y.numpy(), s=8, cmap="viridis", edgecolors="none"
    )
    ax.set(title=title, xticks=[], yticks=[])
    return fig


def plot_grad_flow(norms: Mapping[str, float], title: str = "Gradient norm per layer") -> Figure:
    """Bars of gradient norm per parameter, input side first, on a log scale."""
    if not norms:
        raise ValueError("plot_grad_flow got no gradient norms")
    names, values = list(norms), [max(float(v), 1e-30) for v in norms.values()]
    fig, axes = _new((max(5, 0.5 * len(names)), 4))
    ax = axes[0, 0]
    ax.bar(range(len(names)), values, color="tab:blue")
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    ax.set(ylabel="gradient L2 norm (log)", title=title)
    fig.tight_layout()
    return fig


def plot_lr_schedule(lrs: Sequence[float], title: str = "Learning-rate schedule") -> Figure:
    """The learning rate at every optimizer step."""
    fig, axes = _new()
    ax = axes[0, 0]
    ax.plot(range(len(lrs)), list(lrs))
    ax.set(xlabel="step", ylabel="learning rate", title=title)
    ax.grid(alpha=0.3)
    return fig


def plot_function(
    x: torch.Tensor,
    curves: Mapping[str, torch.Tensor],
    title: str = "",
    xlabel: str = "x",
) -> Figure:
    """Several named curves over the same 1-d ``x`` (e.g. a function and its derivative)."""
    fig, axes = _new()
    ax = axes[0, 0]
    xs = x.detach().cpu().numpy()
    for label, ys in curves.items():
        ax.plot(xs, ys.detach().cpu().numpy(), label=label)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set(xlabel=xlabel, title=title)
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def plot_bars(
    values: Mapping[str, float], ylabel: str = "", title: str = "", log: bool = False
) -> Figure:
    """Labelled bars: timings per configuration, activation statistics per layer, and so on."""
    if not values:
        raise ValueError("plot_bars got nothing to plot")
    fig, axes = _new((max(5, 0.6 * len(values)), 4))
    ax = axes[0, 0]
    ax.bar(range(len(values)), [float(v) for v in values.values()], color="tab:orange")
    ax.set_xticks(range(len(values)), list(values), rotation=45, ha="right", fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set(ylabel=ylabel, title=title)
    fig.tight_layout()
    return fig


def _draw_confusion(ax, cm, class_names: Sequence[str], title: str) -> None:
    counts = torch.as_tensor(cm).detach().cpu()
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"a confusion matrix is square (C, C), got {tuple(counts.shape)}")
    c = counts.shape[0]
    ax.imshow(counts.double().numpy(), cmap="Blues", vmin=0)
    # White text on dark cells, black on light ones, so every count stays readable.
    threshold = float(counts.max()) / 2 if c else 0.0
    for t in range(c):
        for p in range(c):
            value = counts[t, p].item()
            text = f"{value:g}" if isinstance(value, float) else str(value)
            colour = "white" if float(value) > threshold else "black"
            ax.text(p, t, text, ha="center", va="center", color=colour, fontsize=8)
    ax.set_xticks(range(c), list(class_names), fontsize=8)
    ax.set_yticks(range(c), list(class_names), fontsize=8)
    ax.set(xlabel="predicted class", ylabel="true class", title=title)


def plot_confusion_matrix(
    cm: torch.Tensor | Mapping[str, torch.Tensor],
    class_names: Sequence[object] | None = None,
    title: str = "Confusion matrix",
) -> Figure:
    """Counts of a (C, C) confusion matrix, row = true class (y axis), column = predicted (x).

    A mapping ``{title: cm}`` draws one panel per matrix, side by side (before and after a
    fix, say); ``title`` then heads the whole figure.
    """
    panels = dict(cm) if isinstance(cm, Mapping) else {title: cm}
    if not panels:
        raise ValueError("plot_confusion_matrix got no matrix")
    c = torch.as_tensor(next(iter(panels.values()))).shape[-1]
    names = [str(n) for n in (range(c) if class_names is None else class_names)]
    if len(names) != c:
        raise ValueError(f"{len(names)} class names for a matrix of {c} classes")
    side = max(3.5, 0.45 * c + 1.5)
    fig, axes = _new((side * len(panels), side), ncols=len(panels))
    for ax, (panel_title, matrix) in zip(axes[0], panels.items(), strict=True):
        _draw_confusion(ax, matrix, names, panel_title)
    if isinstance(cm, Mapping):
        fig.suptitle(title)
    fig.tight_layout()
    return fig
