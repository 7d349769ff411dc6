"""The Python examples of docs/tuning.md run as written (one shared namespace, in order)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_tuning_examples_run(capsys):
    text = (DOCS / "tuning.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOCS / "tuning.md"), "exec"), namespace)
    assert namespace["search"].best_params_.keys() == {"d_model", "learning_rate"}
    result = namespace["result"]
    assert set(result.best_params) == {"d_model", "dropout"} and len(result.study.trials) == 2
    assert "number" in capsys.readouterr().out
