"""Datasets: the paper's experiments (more loaders live beside them)."""

from .paper import (
    SIMULATION_GRID,
    PaperSplit,
    auto_mpg_origin_split,
    correlation_shift_simulation,
    paper_simulation_seeds,
)

__all__ = [
    "SIMULATION_GRID",
    "PaperSplit",
    "auto_mpg_origin_split",
    "correlation_shift_simulation",
    "paper_simulation_seeds",
]
