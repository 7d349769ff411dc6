"""Datasets: tables from OpenML, local files and the paper's experiments.

:func:`tabmoe.data.openml.load_openml` lives in its own module because it needs the
optional ``openml`` package (extra ``data``).
"""

from .files import load_table_file
from .paper import (
    SIMULATION_GRID,
    PaperSplit,
    auto_mpg_origin_split,
    auto_mpg_table,
    correlation_shift_simulation,
    paper_simulation_seeds,
    simulation_table,
)
from .table import Table

__all__ = [
    "SIMULATION_GRID",
    "PaperSplit",
    "Table",
    "auto_mpg_origin_split",
    "auto_mpg_table",
    "correlation_shift_simulation",
    "load_table_file",
    "paper_simulation_seeds",
    "simulation_table",
]
