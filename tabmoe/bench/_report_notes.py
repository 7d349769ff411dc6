"""What the benchmark report warns about under its tables: records it keeps one of (an old
protocol name beside the new), seeds made under different configurations, records of splits
the suite no longer defines, records of one split and seed drawn on different rows, and
models that cover different splits, numbers of seeds or seeds of a split."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .plan import PROTOCOL_ALIASES


def one_record_per_run(records: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One record per (suite, split, model, protocol, seed), the protocol under its current
    name: a record under an old name (``untuned``) gives way to one under the new name (a
    ``--force`` rerun made beside it). Returns the records and how many carry an old name."""
    kept: dict[tuple, dict[str, Any]] = {}
    for record in records:
        protocol = record.get("protocol")
        key = (record.get("suite"), record.get("split"), record.get("model"),
               PROTOCOL_ALIASES.get(protocol, protocol), record.get("seed"))
        if key not in kept or kept[key].get("protocol") in PROTOCOL_ALIASES:
            kept[key] = record
    renamed = sum(r.get("protocol") in PROTOCOL_ALIASES for r in kept.values())
    return list(kept.values()), renamed


def record_notes(
    records: Sequence[dict[str, Any]], renamed: int, current: Mapping[str, str | None] | None = None
) -> list[str]:
    """Notes on records that the tables average although they differ: an old protocol name,
    or seeds of one (protocol, split, model) made under different configurations; and on
    cells whose every record was made under another configuration than ``current`` (run id ->
    the config hash the suite gives that run now), which the tables report unmarked."""
    notes = []
    if renamed:
        notes.append(f"{renamed} run(s) carry an old protocol name and are reported under the new "
                     "one (`tabmoe-bench rename-protocol RESULTS` renames a results folder's in place).")
    hashes: dict[tuple, set] = {}
    tables: dict[tuple, set] = {}  # the target/categorical settings, outside the hash
    for r in records:
        protocol = PROTOCOL_ALIASES.get(r.get("protocol"), r.get("protocol"))
        if protocol == r.get("protocol"):  # an old name's hash was made with that name
            key = (protocol, r.get("split"), r.get("model"))
            hashes.setdefault(key, set()).add(r.get("config_hash"))
            if r.get("table") is not None:  # None: made before records said it (hash only)
                tables.setdefault(key, set()).add(r["table"])
    mixed = [key for key, found in hashes.items() if len(found) > 1 or len(tables.get(key, ())) > 1]
    if mixed:
        listed = ", ".join(f"{model} on {split} ({protocol})" for protocol, split, model in mixed[:5])
        notes.append(
            f"STALE: the seeds of {len(mixed)} (protocol, split, model) cell(s) were made under "
            f"different configurations and are averaged together: {listed}"
            + (", ..." if len(mixed) > 5 else "") + ". `tabmoe-bench run --force` reruns them."
        )
    notes.extend(_outdated_notes(records, current or {}))
    notes.extend(row_notes(records))
    return notes


def _outdated_notes(
    records: Sequence[dict[str, Any]], current: Mapping[str, str | None]
) -> list[str]:
    """A note naming the (protocol, split, model) cells all of whose records (those with a
    hash to compare) differ from the suite's current configuration: ``run`` warns about them,
    but no hash within the cell differs, so the STALE note does not list them."""
    old: dict[tuple, bool] = {}
    for r in records:
        want = current.get(r.get("run_id"))
        if want is not None and r.get("config_hash") is not None:
            key = (r.get("protocol"), r.get("split"), r.get("model"))
            old[key] = old.get(key, True) and r["config_hash"] != want
    outdated = [key for key, all_old in old.items() if all_old]
    if not outdated:
        return []
    listed = ", ".join(f"{m} on {s} ({p})" for p, s, m in outdated[:5])
    return [
        f"OLD CONFIGURATION: every seed of {len(outdated)} (protocol, split, model) cell(s) was "
        "made under another configuration than the suite's current one (its split, fixed "
        f"parameters or tuning budget changed since), and the tables report it: {listed}"
        + (", ..." if len(outdated) > 5 else "")
        + ". `tabmoe-bench run --force` reruns them."
    ]


def unknown_split_notes(records: Sequence[dict[str, Any]], splits: Sequence[str]) -> list[str]:
    """A note when records are of splits that ``splits`` (the suite's, when given) does not
    define: made before the split was removed from the suite file or renamed, they are not
    results of the suite as it is, yet count in its tables."""
    if not splits:
        return []
    counts: dict[str, int] = {}
    for r in records:
        if r.get("split") not in splits:
            counts[str(r.get("split"))] = counts.get(str(r.get("split")), 0) + 1
    if not counts:
        return []
    listed = ", ".join(f"{split} ({n} run(s))" for split, n in sorted(counts.items()))
    return [
        f"NOT IN THE SUITE: the tables include runs of {len(counts)} split(s) that the suite no "
        f"longer defines (removed or renamed since they ran): {listed}. Delete their records to "
        "leave them out."
    ]


def _sizes(record: dict[str, Any]) -> tuple | None:
    """A record's part sizes (the OOD rows an adaptation took out counted back in), or None
    for a record that does not say."""
    n = dict(record.get("n_rows") or {})
    if not n:
        return None
    n["ood_test"] = n.get("ood_test", 0) + n.pop("ood_adaptation", 0)
    return tuple(sorted(n.items()))


def row_notes(records: Sequence[dict[str, Any]]) -> list[str]:
    """A note when the records of one (split, seed) were drawn on different rows: a split
    computed differently on another platform or by other code, so the models' paired
    comparisons there compare different rows. Every record's part sizes are compared, and
    the row and data-file digests of the records that carry one (a data file edited between
    two models' runs)."""
    found: dict[tuple, dict[tuple, list[str]]] = {}
    for r in records:
        name = f"{r.get('model')} ({PROTOCOL_ALIASES.get(r.get('protocol'), r.get('protocol'))})"
        for kind, value in (("sizes", _sizes(r)), ("digest", r.get("rows")), ("file", r.get("source_digest"))):
            if value is not None:
                found.setdefault((r.get("split"), r.get("seed"), kind), {}).setdefault(value, []).append(name)
    differ: dict[tuple, list[list[str]]] = {}
    for (split, seed, _), groups in found.items():
        if len(groups) > 1 and (split, seed) not in differ:
            differ[(split, seed)] = list(groups.values())
    if not differ:
        return []

    def shown(group: list[str]) -> str:
        return f"{len(group)}: " + ", ".join(group[:3]) + (", ..." if len(group) > 3 else "")

    listed = "; ".join(
        f"{split} seed {seed} (" + " | ".join(shown(g) for g in groups) + ")"
        for (split, seed), groups in list(differ.items())[:3]
    )
    return [
        f"ROWS DIFFER: on {len(differ)} (split, seed) pair(s) the records were drawn on different "
        f"rows (part sizes, row digests or data file digests differ), so the comparisons there are unpaired: {listed}"
        + ("; ..." if len(differ) > 3 else "") + ". `tabmoe-bench shift-report SUITE --split S --seed N` "
        "gives the split's rows here; rerun the records that differ from them with `tabmoe-bench run --force`."
    ]


def coverage_note(rows: pd.DataFrame, runs: pd.DataFrame) -> str:
    """A warning under the summary when models cover different splits, numbers of seeds, or
    (on a split) different seeds: a seed draws the split's rows, so W/T/L, ranks and p there
    compare means over different rows."""
    n_splits = rows["split"].nunique()
    short = rows.groupby("model", sort=False)["split"].nunique()
    short = short[short < n_splits]
    seeds = rows.groupby("model", sort=False)["seeds"].agg(["min", "max"])
    notes = []
    if len(short):
        listed = ", ".join(f"{model} ({count} of {n_splits} splits)" for model, count in short.items())
        notes.append(
            f"Not every model has every split yet: {listed}. Their means are over their own "
            "splits only, so compare them through W/T/L and the per-split table (paired splits), "
            "not through the means."
        )
    uneven = seeds[seeds["min"] != seeds["max"]]
    if len(uneven):
        listed = ", ".join(f"{model} ({lo}-{hi})" for model, (lo, hi) in uneven.iterrows())
        notes.append(f"Seeds per split differ for {listed}; the seeds column shows the fewest.")
    seed_sets = runs.groupby(["split", "model"], sort=False)["seed"].agg(frozenset)
    differ = [split for split, sets in seed_sets.groupby(level="split", sort=False) if sets.nunique() > 1]
    if differ:
        notes.append(
            f"The models were run on different seeds on {len(differ)} split(s) ({', '.join(differ[:5])}"
            + (", ..." if len(differ) > 5 else "") + "): a seed draws the split's rows, so there the "
            "ranks, W/T/L and p compare means over different rows."
        )
    return "".join(f"\n\n{note}" for note in notes)
