"""The code the pages show runs, and the outputs they show are what it prints.

* Every ```` ```python ```` block of README.md and docs/ that is not an embedded example
  (``--8<--``) and not run by ``tests/test_docs.py`` (docs/tuning.md, the MoE code of
  docs/moe.md) runs here, in a scratch folder, in the order of its page. Such blocks are
  fragments: they use a reader's data (``X_train``, ``y_train``, ``X_test``, ``X_target``,
  a fitted ``clf``, a ``seed``, an Optuna ``optuna_trial``), which the test provides from
  the shipped car data; everything else (imports, other names) must come from the block
  itself or an earlier block of the same page. A new block on any page is picked up.
* (slow) Every docs example prints exactly its committed ``docs/examples/output/*.txt``,
  which the pages embed, on the CPU kind that made them (``output/cpu.txt``; another kind
  may round float32 sums differently and move a figure): ``scripts/run_examples.sh``
  regenerates the outputs in CI but nothing compared them, so an output could go stale.
  An example that draws the paper's simulation is compared only where numpy draws the
  authors' multivariate-normal basis, as where its output was recorded: the CPU model does
  not tell OpenBLAS's kernels apart (an "AMD EPYC (avx512f)" whose OpenBLAS picks its
  Haswell kernels draws other rows, ``tests/authors_data.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
import torch

from tabmoe.bench._environment import cpu_model

from .authors_data import draws_the_authors_basis
from .conftest import missing_optional_in

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
#: Blocks run elsewhere: tests/test_docs.py runs every block of docs/tuning.md and the
#: block of docs/moe.md that builds a MixtureOfExperts.
RUN_ELSEWHERE = {"tuning.md": None, "moe.md": "MixtureOfExperts.from_model"}
_BLOCK = re.compile(r"^( *)```python[^\n]*\n(.*?)^\1```", flags=re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    """The page's Python blocks, dedented, in order."""
    blocks = []
    for match in _BLOCK.finditer(page.read_text(encoding="utf8")):
        indent = len(match.group(1))
        blocks.append("\n".join(line[indent:] for line in match.group(2).splitlines()))
    return blocks


def fragments(page: Path) -> list[str]:
    skip = RUN_ELSEWHERE.get(page.name, "")
    return [
        block for block in python_blocks(page)
        if not block.strip().startswith("--8<--")
        and (skip is not None and not (skip and skip in block))
    ]


FRAGMENT_PAGES = [page for page in PAGES if fragments(page)]


@pytest.fixture(scope="module")
def reader_data():
    """What a fragment may take as given: a reader's table, split, fitted model, seed, trial."""
    optuna = pytest.importorskip("optuna")  # the `tuning` extra: README's `optuna_trial`

    from tabmoe import TabularMoEClassifier

    data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
    # 180 training rows: on the first 120 of a 160-row sample the default fit stopped on its
    # plateau at the class prior at epoch 14 (0.63 test accuracy; 0.90 with n_iter_no_change=30)
    # and warned so, as it should
    data = data.sample(240, random_state=0)
    X, y = data.drop(columns="class"), data["class"]
    X_train, y_train, X_test = X.iloc[:180], y.iloc[:180], X.iloc[180:]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    clf = TabularMoEClassifier(max_epochs=3, random_state=0).fit(X_train, y_train)
    return {"X_train": X_train, "y_train": y_train, "X_test": X_test, "X_target": X_test,
            "clf": clf, "seed": 0, "optuna_trial": optuna.create_study().ask()}


def test_the_fragments_are_found():
    names = {page.name for page in FRAGMENT_PAGES}
    assert {"README.md", "index.md", "paper.md", "persistence.md", "ood.md"} <= names, names
    assert "tuning.md" not in names
    # docs/moe.md's MoE block is run by tests/test_docs.py, not here.
    assert not any("MixtureOfExperts" in block for block in fragments(DOCS / "moe.md"))


@pytest.mark.parametrize("page", FRAGMENT_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_page_fragments_run_as_written(page, reader_data, tmp_path, monkeypatch):
    from tabmoe.registry import get_model

    missing = get_model("ft_transformer").missing()
    if page.name == "README.md" and missing:  # README fits an FT-Transformer
        pytest.skip(f"needs the baselines extra (missing: {missing})")
    monkeypatch.chdir(tmp_path)  # fragments save model files into the working folder
    namespace = {"__name__": "__doc_snippet__", **reader_data}
    for block in fragments(page):
        if not torch.cuda.is_available():
            # load(..., device="cuda") is a ValueError without CUDA; the line is the same on the CPU.
            block = block.replace('device="cuda"', 'device="cpu"')
        with warnings.catch_warnings():
            # A reader sees no warning but the unseen-category one of the tiny table.
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", message=r"Column .* not seen during fit", category=UserWarning)
            exec(compile(block, str(page), "exec"), namespace)


EXAMPLES = sorted((DOCS / "examples").glob("*.py"))
#: Names in an example that draw the paper's simulation, whose rows depend on numpy's SVD basis.
_SIMULATION_NAMES = ("SimulationSource", "correlation_shift_simulation", "simulation_table")
_CPU_FILE = DOCS / "examples" / "output" / "cpu.txt"  # written by scripts/run_examples.sh
RECORDED_CPU = _CPU_FILE.read_text(encoding="utf8").strip() if _CPU_FILE.is_file() else None


@pytest.mark.slow  # runs every docs example, about 2 minutes on one core
@pytest.mark.skipif(torch.cuda.is_available(), reason="the outputs were recorded on the CPU")
@pytest.mark.skipif(RECORDED_CPU != cpu_model(), reason=f"the outputs were recorded on {RECORDED_CPU!r}")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_example_prints_its_committed_output(example, tmp_path):
    """Run in a copy of docs/examples (so the committed figures under docs/img are not
    rewritten), one thread, as scripts/run_examples.sh runs it."""
    if any(name in example.read_text(encoding="utf8") for name in _SIMULATION_NAMES) and not draws_the_authors_basis():
        pytest.skip("the simulation's rows were recorded where numpy draws the authors' SVD basis, not this one")
    (tmp_path / "docs" / "img").mkdir(parents=True)
    shutil.copytree(DOCS / "examples", tmp_path / "docs" / "examples")
    (tmp_path / "benchmarks").symlink_to(ROOT / "benchmarks")
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(
        [sys.executable, str(tmp_path / "docs" / "examples" / example.name)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0 and (missing := missing_optional_in(result.stderr)):
        pytest.skip(f"needs the optional package {missing!r}, not installed")
    assert result.returncode == 0, result.stderr[-3000:]
    recorded = (DOCS / "examples" / "output" / f"{example.stem}.txt").read_text(encoding="utf8")
    assert result.stdout == recorded, (
        f"{example.name} now prints something else than docs/examples/output/{example.stem}.txt: "
        "rerun `bash scripts/run_examples.sh` and commit the output"
    )
