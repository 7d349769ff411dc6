"""Study 56's research-only network: the token embeddings drawn on a larger scale.

``TabularMoE`` draws its token embeddings from U(-0.05, 0.05) (Keras's ``Embedding``
default, the paper's setup: standard deviation 0.029, BERT's 0.02 in spirit), while its
column embeddings are Glorot-uniform, sqrt(6 / (L + d)): 0.28 for 10 columns and d = 64,
about six times the tokens' scale. At initialisation a position's input is mostly its
column, and the gates (scores of query and key projections of those inputs) barely see
which value a column holds; Adam moves each embedding by about the learning rate a step,
so over the ~300 steps of an early-stopped fit a 0.05 start is soon forgotten, but the
first epochs, which the early stopping on 100-row hold-outs watches, start from gates that
ignore the values. rtdl's FT-Transformer draws its feature tokens from U(-1/sqrt(d),
1/sqrt(d)): 0.125 for d = 64.

``embedding_init``: the half-width of the uniform draw. The network is built exactly as
the estimator builds it (the same draws from the global RNG, so everything else a fit
draws is unchanged), then its token embedding table is multiplied by ``embedding_init /
0.05``: U(-0.05, 0.05) scaled is U(-embedding_init, embedding_init). A numeric column's
thermometer tokens are sums of its rows, so they scale with them. Research-only: no
persistence, no ensembles.
"""

from __future__ import annotations

import torch

from tabmoe import TabularMoEClassifier

#: The half-width TabularMoE draws its token embeddings with (tabmoe/nn/network.py).
DEFAULT_INIT = 0.05


class ScaledInitClassifier(TabularMoEClassifier):
    """Research-only (study 56): token embeddings drawn from U(-embedding_init, embedding_init)."""

    # Set on the instance after construction, not an __init__ parameter (as research.py's
    # TrainerOptionsClassifier.trainer_extra): research.py never clones.
    embedding_init: float = DEFAULT_INIT

    def _initialize_module(self):
        net = super()._initialize_module()  # one member: research.py refuses n_members
        with torch.no_grad():
            net.token_embedding.weight.mul_(self.embedding_init / DEFAULT_INIT)
        return net
