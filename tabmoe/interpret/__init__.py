"""Reading a fitted model: the mixture-of-experts view of attention.

* :mod:`~tabmoe.interpret.moe`: attention as a mixture of continuous word experts;
* :mod:`~tabmoe.interpret.explain`: per-row explanations of the label prediction;
* :mod:`~tabmoe.interpret.analogy`: the linear analogy diagnostic (3CosAdd) on embeddings.
"""
