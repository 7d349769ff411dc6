"""The network and its training: the model behind every torch classifier.

* :mod:`~tabmoe.nn.network`: :class:`~tabmoe.nn.network.TabularMoE`, the bidirectional
  attention network over column tokens;
* :mod:`~tabmoe.nn.objective`: the masked-feature objective (which tokens are hidden, the loss);
* :mod:`~tabmoe.nn.ensemble`: ensemble members trained side by side as one batched model;
* :mod:`~tabmoe.nn.trainer`: the one training loop (batches, early stopping, devices, AMP);
* ``tabmoe.nn._base``: the scikit-learn face shared by the torch classifiers (internal).
"""
