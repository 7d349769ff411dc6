"""Saving and loading a fitted model safely.

    python docs/examples/save_load.py

``save`` writes JSON documents and tensors; ``load`` reads them back with
``torch.load(weights_only=True)``, so a model file cannot run code on your machine. The
script checks that the loaded model predicts exactly what the saved one did, and that a
file carrying a pickled object is refused. Offline; about 10 s on one CPU core.
"""

import pickle
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.persistence import IncompatibleFileError

ROOT = Path(__file__).resolve().parents[2]

data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
X, y = data.drop(columns="class"), data["class"]
clf = TabularMoEClassifier(max_epochs=15, random_state=0).fit(X, y)

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "car.tabmoe"
    clf.save(path)
    # To the KiB: the file holds the training history, whose epoch timings change its
    # size by a few bytes from run to run.
    print(f"saved {path.name}: about {path.stat().st_size / 1024:.0f} KiB")

    # Loaded onto the device it was fitted on ("auto": the GPU where there is one, as in
    # fit), so the probabilities are bit-identical; `load` puts it on the CPU by default,
    # where a GPU-fitted model agrees with the GPU's probabilities to float rounding only.
    loaded = TabularMoEClassifier.load(path, device="auto")
    same = np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    print("identical probabilities after loading:", same)
    print("hyperparameters kept:", loaded.get_params() == clf.get_params())
    assert same

    # A file that is not a tabmoe model is refused with a clear error ...
    other = Path(tmp) / "weights.pt"
    torch.save({"weight": torch.zeros(2)}, other)
    try:
        TabularMoEClassifier.load(other)
    except IncompatibleFileError as exc:
        print("refused:", str(exc).replace(tmp, "<tmp>"))

    # ... and so is a file whose loading would execute code (a pickled object).
    class Payload:
        def __reduce__(self):
            return (print, ("this would have run arbitrary code",))

    hostile = Path(tmp) / "hostile.tabmoe"
    torch.save({"format": "tabmoe.TabularMoEClassifier", "params": Payload()}, hostile)
    try:
        TabularMoEClassifier.load(hostile)
    except pickle.UnpicklingError as exc:
        print("refused:", str(exc).splitlines()[0].replace(tmp, "<tmp>"))
