"""Study 54's research-only network: output heads tied to the input embeddings.

``ColumnHeads`` scores column j's values with rows of its own (V, d) weight matrix, apart
from the token embeddings the same values enter the attention with (the CBOW view's
separate input and output vectors, as word2vec). Language models usually tie the two
(Press & Wolf, *Using the Output Embedding to Improve Language Models*, EACL 2017; Inan et
al., ICLR 2017): a value's logit is its input embedding times the hidden state, plus its
own bias. It halves the value parameters, and every value's vector is trained both as a
context and as a target, which is the regularisation those papers measure on small corpora.

``tie_heads``:

* ``"all"``: every column's head, the label's included, reads the table the tokens enter
  with (``TabularMoE.token_table()``: a numeric bin's thermometer sum, not its raw step);
* ``"features"``: the feature columns' heads are tied and the label's classes keep rows of
  their own (the label's input embeddings only serve as context for the feature heads).

The network is built exactly as the estimator builds it (the same draws from the global
RNG, so a tied variant starts from the defaults' initial embeddings and attention), then
its heads' weight parameter is removed and read from the embeddings instead; the head
weights drawn at construction are not used. Research-only: no persistence, no ensembles.
"""

from __future__ import annotations

from torch import Tensor, nn

from tabmoe import TabularMoEClassifier
from tabmoe.nn.network import ColumnHeads, TabularMoE

TIE_HEADS = ("none", "all", "features")


class TiedColumnHeads(ColumnHeads):
    """``ColumnHeads`` whose weight is computed from the network's token table."""

    @property
    def weight(self) -> Tensor:  # (V, d)
        net = self._network[0]
        table = net.token_table()
        own = self._parameters.get("label_weight")
        if own is None:
            return table
        return table.index_copy(0, net.label_ids, own.to(table.dtype))


def tie_heads(net: TabularMoE, mode: str) -> TabularMoE:
    """Tie ``net``'s heads to its input embeddings in place (``mode`` as ``TIE_HEADS``)."""
    if mode not in TIE_HEADS:
        raise ValueError(f"tie_heads must be one of {TIE_HEADS}, got {mode!r}")
    if mode == "none":
        return net
    heads = net.heads
    drawn = heads._parameters.pop("weight")  # (V, d), drawn at construction
    heads.__class__ = TiedColumnHeads
    # A list, not an attribute nn.Module would register: the network owns the heads, so
    # registering it back would make a module cycle.
    heads.__dict__["_network"] = [net]
    if mode == "features":
        # The label's classes keep the rows the estimator drew for them.
        heads.label_weight = nn.Parameter(drawn.detach()[net.label_ids].clone())
    return net


class TiedHeadsClassifier(TabularMoEClassifier):
    """Research-only (study 54): the estimator with ``tie_heads`` applied to its network."""

    # Set on the instance after construction, not an __init__ parameter (as
    # research.py's TrainerOptionsClassifier.trainer_extra): research.py never clones.
    tie_mode: str = "none"

    def _initialize_module(self):
        if self.n_members != 1:
            raise ValueError("tie_heads is research-only for one member")
        return tie_heads(super()._initialize_module(), self.tie_mode)

