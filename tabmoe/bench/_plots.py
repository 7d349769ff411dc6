"""The report's two figures per protocol: mean ID vs mean OOD accuracy per (model, split),
and the ID - OOD gap per split and model (grouped bars, or a table of coloured cells when
there are too many bars to read)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._optional import optional_module


def _matplotlib(module: str) -> Any:
    """``module`` of matplotlib (the "bench" extra): an ImportError naming the extra otherwise."""
    return optional_module(module, "write_report", extra="bench")


def _colours(models: Sequence[str]) -> dict[str, Any]:
    colormaps = _matplotlib("matplotlib").colormaps
    cmap = colormaps["tab10" if len(models) <= 10 else "tab20"]  # 13 models: no colour twice
    return {m: cmap(i % cmap.N) for i, m in enumerate(models)}


def _plain(text: Any) -> str:
    """``text`` as matplotlib prints it literally: a ``$`` escaped, else two of them (a split
    named ``a_$1_$2``) start mathtext, which fails to parse and loses the whole report."""
    return str(text).replace("$", r"\$")


#: One marker per split in the ID-vs-OOD plot (colour = model).
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p", "d", "x", "H")


def plot_id_vs_ood(rows: pd.DataFrame, path: Path, title: str) -> None:
    """Scatter of mean ID vs mean OOD accuracy, one point per (model, split), SD bars.

    Colour names the model and marker shape the split (two legends), so that every point
    can be told apart.
    """
    Figure = _matplotlib("matplotlib.figure").Figure
    Line2D = _matplotlib("matplotlib.lines").Line2D

    splits = list(dict.fromkeys(rows["split"]))
    markers = {split: _MARKERS[i % len(_MARKERS)] for i, split in enumerate(splits)}
    fig = Figure(figsize=(6.4 + (2.4 if len(splits) > 1 else 0), 5.2), layout="constrained")
    ax = fig.add_subplot()
    colours = _colours(list(dict.fromkeys(rows["model"])))
    for row in rows.itertuples(index=False):
        ax.errorbar(row.id_mean, row.ood_mean,
                    xerr=0 if pd.isna(row.id_sd) else row.id_sd, yerr=0 if pd.isna(row.ood_sd) else row.ood_sd,
                    fmt=markers[row.split], capsize=2, color=colours[row.model], markersize=6)
    low = float(np.nanmin(rows[["id_mean", "ood_mean"]].to_numpy())) - 0.05
    ax.plot([low, 1], [low, 1], "--", color="grey", linewidth=1)
    ax.set_xlabel("ID test accuracy (mean over seeds)")
    ax.set_ylabel("OOD test accuracy (mean over seeds)")
    ax.set_title(_plain(title))
    model_handles = [Line2D([], [], color=c, marker="o", linestyle="", label=_plain(m)) for m, c in colours.items()]
    model_handles.append(Line2D([], [], color="grey", linestyle="--", linewidth=1, label="OOD = ID"))
    models_legend = ax.legend(handles=model_handles, fontsize="small", title="model (colour)",
                              title_fontsize="small", loc="upper left")
    if len(splits) > 1:
        ax.add_artist(models_legend)
        split_handles = [Line2D([], [], color="black", marker=markers[s], linestyle="", label=_plain(s))
                         for s in splits]
        fig.legend(handles=split_handles, fontsize="x-small", title="split (marker)",
                   title_fontsize="small", loc="outside right upper")
    fig.savefig(path, dpi=110, metadata={"Software": None})


#: Bars beyond which the gap figure is a table of coloured cells: grouped bars of openml-ood's
#: 14 splits x 13 models were 73 inches wide (8,008 pixels), their legend over the bars.
MAX_GAP_BARS = 40


def plot_gap(rows: pd.DataFrame, path: Path, title: str) -> None:
    """Grouped bars of the ID - OOD accuracy gap per split and model, SD over seeds; beyond
    :data:`MAX_GAP_BARS` bars, :func:`plot_gap_cells`."""
    Figure = _matplotlib("matplotlib.figure").Figure

    splits = list(dict.fromkeys(rows["split"]))
    models = list(dict.fromkeys(rows["model"]))
    if len(splits) * len(models) > MAX_GAP_BARS:
        plot_gap_cells(rows, splits, models, path, title)
        return
    colours = _colours(models)
    fig = Figure(figsize=(max(6.4, 1.2 * len(splits) * max(1, len(models)) / 3), 4.8), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(models)
    for i, model in enumerate(models):
        group = rows[rows["model"] == model].set_index("split").reindex(splits)
        ax.bar(np.arange(len(splits)) + (i - (len(models) - 1) / 2) * width, group["gap_mean"], width,
               yerr=group["gap_sd"].fillna(0), capsize=2, label=_plain(model), color=colours[model])
    ax.axhline(0, color="grey", linewidth=1)
    ax.set_xticks(np.arange(len(splits)), [_plain(s) for s in splits], rotation=30, ha="right")
    ax.set_ylabel("ID - OOD test accuracy")
    ax.set_title(_plain(title))
    ax.legend(fontsize="small")
    fig.savefig(path, dpi=110, metadata={"Software": None})


def plot_gap_cells(rows: pd.DataFrame, splits: list, models: list, path: Path, title: str) -> None:
    """The ID - OOD gap as a splits x models table of cells, each coloured by its mean over
    seeds (red: OOD below ID, blue: above; white at 0) and showing it; no record: blank. The
    SDs are in ``per_split.csv``."""
    Figure = _matplotlib("matplotlib.figure").Figure

    gap = rows.pivot_table(index="split", columns="model", values="gap_mean", aggfunc="first")
    gap = gap.reindex(index=splits, columns=models)
    values = gap.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    limit = max(float(np.abs(finite).max()) if finite.size else 0.0, 0.01)
    width = 2.5 + 0.75 * len(models) + 0.06 * max(len(str(s)) for s in splits)
    fig = Figure(figsize=(width, 1.6 + 0.32 * len(splits)), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    for i, j in zip(*np.nonzero(np.isfinite(values)), strict=True):
        ax.text(j, i, f"{values[i, j]:.2f}".replace("-0.00", "0.00"), ha="center", va="center", fontsize="x-small",
                color="white" if abs(values[i, j]) > 0.6 * limit else "black")
    ax.set_xticks(np.arange(len(models)), [_plain(m) for m in models], rotation=45, ha="right")
    ax.set_yticks(np.arange(len(splits)), [_plain(s) for s in splits])
    ax.set_title(_plain(title))
    if finite.size:
        fig.colorbar(image, ax=ax, label="ID - OOD test accuracy (mean over seeds)", shrink=0.8)
    else:  # the paper protocol scores no ID test part
        ax.text(0.5, 0.5, "no ID test accuracy in these runs: no gap", transform=ax.transAxes,
                ha="center", va="center", color="grey")
    fig.savefig(path, dpi=110, metadata={"Software": None})
