"""The one schema of a stored run record, checked whenever a record is read.

:func:`check_record` holds a record (the dict :func:`tabmoe.bench.execute.execute` returns)
to :data:`RECORD`: the type and range of every field that ``run`` and ``report`` use, and a
``run_id`` that is the run its suite, split, model, protocol and seed fields name. A record
that fails is *corrupt* (``storage`` moves it aside and ``run`` redoes the run; ``report``
skips it), exactly like a file that does not parse. Fields not listed are not checked, and a
listed field that is absent is accepted unless it is ``required`` (``report`` reads every
optional field with ``.get``). A scored part (``id_test``, ...) is null where the split has
no such part, but when present its accuracy is a number unless it has no rows (``n`` 0):
``execute`` scores only parts with rows, and a failed run leaves a failure, not a record, so
a null accuracy is a hand-made or damaged record, which the report would average over fewer
seeds than it shows. For the same reason ``ood_test`` (every split has OOD test rows) and
every part the record's ``n_rows`` gives rows must be scored, not null or absent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: What each kind accepts (bool is not a number here, though Python says it is an int).
_KINDS = {
    "str": (str,),
    "int": (int,),
    "number": (int, float),
    "bool": (bool,),
    "object": (dict,),
    "list": (list,),
}
_NAMES = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true or false",
          "object": "an object", "list": "a list"}


@dataclass(frozen=True)
class Field:
    """One field: its kind, whether it may be null or absent, its range, its own fields."""

    kind: str
    null: bool = False
    required: bool = False
    low: float | None = None
    high: float | None = None
    fields: Mapping[str, Field] = field(default_factory=dict)


def _unit() -> Field:
    return Field("number", null=True, low=0, high=1)


#: Scores of one part of a split (``classification_scores``); undefined metrics are null.
SCORES = Field("object", null=True, fields={
    "n": Field("int", low=0),
    "accuracy": _unit(),
    "balanced_accuracy": _unit(),
    "roc_auc": _unit(),
    "log_loss": Field("number", null=True, low=0),
    "bin_mse": Field("number", null=True, low=0),
})

SECONDS = Field("number", low=0)
#: The parts a record scores (null: the split has no such part; scored: an accuracy unless n=0).
_SCORED_PARTS = ("validation", "id_test", "ood_test", "ood_validation")

RECORD = Field("object", fields={
    "run_id": Field("str", required=True),
    "suite": Field("str", required=True),
    "split": Field("str", required=True),
    "model": Field("str", required=True),
    "protocol": Field("str", required=True),
    "seed": Field("int", required=True, low=0),
    "tuned": Field("bool"),
    "config": Field("object", fields={"budget": Field("object", null=True)}),
    "config_hash": Field("str", null=True),
    "params": Field("object", null=True),
    "validation": SCORES,
    "id_test": SCORES,
    "ood_test": SCORES,
    "ood_validation": SCORES,
    "search": Field("object", null=True, fields={
        "n_trials": Field("int", null=True, low=0),
        "best_validation_score": Field("number", null=True),
    }),
    "oracle": Field("object", null=True, fields={
        "ood_test_accuracy": _unit(),
        "ood_validation_accuracy": _unit(),
    }),
    "fit_seconds": SECONDS,
    "predict_seconds": SECONDS,
    "tune_seconds": Field("number", null=True, low=0),
    "peak_rss_mb": Field("number", null=True, low=0),
    "git": Field("object", null=True, fields={"revision": Field("str", null=True)}),
    "versions": Field("object", null=True),
    "threads": Field("int", null=True, low=1),
    "started_at": Field("str", null=True),
    "finished_at": Field("str", null=True),
    "warnings": Field("list", null=True),
    "n_rows": Field("object", null=True),
    "rows": Field("str", null=True),
    "source_digest": Field("str", null=True),
    "table": Field("str", null=True),
    "cpu": Field("str", null=True),
    "accelerator": Field("str", null=True),
})


class RecordError(ValueError):
    """A record does not match :data:`RECORD`; the message names the field."""


def _show(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def check(value: Any, spec: Field, name: str) -> None:
    """:class:`RecordError` naming ``name`` (a dotted path) unless ``value`` fits ``spec``."""
    if value is None:
        if spec.null:
            return
        raise RecordError(f"field {name}: expected {_NAMES[spec.kind]}, got null")
    kinds = _KINDS[spec.kind]
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise RecordError(f"field {name}: expected {_NAMES[spec.kind]}, got {_show(value)}")
    if spec.kind in ("int", "number"):
        if isinstance(value, float) and not math.isfinite(value):
            raise RecordError(f"field {name}: expected a finite number, got {value!r}")
        if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
            low = "" if spec.low is None else f">= {spec.low}"
            high = "" if spec.high is None else f"<= {spec.high}"
            raise RecordError(f"field {name}: expected {' and '.join(filter(None, [low, high]))}, got {value!r}")
    for key, sub in spec.fields.items():
        if key in value:
            check(value[key], sub, f"{name}.{key}" if name else key)
        elif sub.required:
            raise RecordError(f"field {f'{name}.{key}' if name else key} is missing")


def check_record(record: Any) -> None:
    """:class:`RecordError` (a ``ValueError``) naming the first field of ``record`` that does
    not match :data:`RECORD`."""
    if not isinstance(record, dict):
        raise RecordError(f"not a run record (a JSON {type(record).__name__}, not an object)")
    check(record, RECORD, "")
    # every split has OOD test rows (check_split refuses one without), and a part with rows
    # (n_rows) is scored: a null or absent one, too, dropped a seed from the report's means
    # while its seeds column still counted it
    n_rows = record.get("n_rows") if isinstance(record.get("n_rows"), dict) else {}
    for part in _SCORED_PARTS:
        rows = n_rows.get(part)
        needed = part == "ood_test" or (isinstance(rows, int) and not isinstance(rows, bool) and rows > 0)
        if needed and record.get(part) is None:
            got = "null" if part in record else "nothing"
            raise RecordError(
                f"field {part}: expected the scores of a part with rows"
                + (f" (n_rows.{part}={rows})" if rows is not None else " (every split has OOD test rows)")
                + f", got {got}; a finished run scores every part it has"
            )
    for part in _SCORED_PARTS:  # the report averages accuracies: a null one drops a seed unseen
        scores = record.get(part)
        if isinstance(scores, dict) and (scores.get("n") != 0 or part == "ood_test") and scores.get("accuracy") is None:
            rows = f"n={scores['n']}" if "n" in scores else "no n"
            got = "null" if "accuracy" in scores else "nothing"
            raise RecordError(
                f"field {part}.accuracy: expected a number for a part with rows ({rows}), "
                f"got {got}; "
                "a finished run scores every part it has (a failed run has no record)"
            )
    keys = "/".join([*(record[k] for k in ("suite", "split", "model", "protocol")), f"seed{record['seed']}"])
    if record["run_id"] != keys:  # the report groups by the fields, the stores by the run id
        raise RecordError(f"field run_id: {record['run_id']!r} is not the run its suite, split, model, "
                          f"protocol and seed fields name ({keys!r})")
