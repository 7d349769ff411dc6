"""tabmoe: bidirectional attention as a mixture of continuous word experts, for tables."""

from ._paper_config import PAPER_CONFIG, paper_config
from ._version import __version__ as __version__
from .estimator import TabularMoEClassifier
from .tokenizer import ColumnTokenizer

__all__ = ["ColumnTokenizer", "PAPER_CONFIG", "TabularMoEClassifier", "paper_config"]
