"""Griffe extension: render the code's Sphinx-flavoured NumPy docstrings correctly.

mkdocstrings reads the docstrings as Markdown; this extension bridges two habits of the
code base (both standard NumPy / scikit-learn style) before they reach the page:

* Sphinx roles (``:class:`~tabmoe.tokenizer.ColumnTokenizer```, ``:func:`save```) become
  Markdown cross-references (names resolved in the object's scope). Targets inside tabmoe
  are links that ``mkdocs build --strict`` checks (an object missing from the API pages
  fails the build); other targets (scikit-learn, torch) become inline code.
* Grouped parameters (``learning_rate, weight_decay : float``): griffe gives every name of
  a group the first name's default, and the first name's annotation when the entry has no
  type, so the pages would show ``dropout : int = 20``. Each name gets its own default and
  annotation from the signature instead.
* Module and class attributes documented Sphinx's way, by ``#:`` comment lines right above
  the assignment (``#: Rows per forward pass at prediction time.``), which griffe does not
  read (it reads a string after the assignment only): the pages showed such constants, and
  ``tabmoe.PAPER_CONFIG``, with no text. The comment becomes the attribute's docstring.

Loaded by mkdocstrings (``extensions:`` in mkdocs.yml); it changes only what the docs show.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|mod|attr|obj|data|exc|const):"
    r"`(?:(?P<title>[^`<]+?)\s*<(?P<target_t>[^`>]+)>|(?P<tilde>~?)(?P<target>[^`]+))`"
)


def _resolve(obj: griffe.Object, target: str) -> str:
    """Full path of ``target`` as written in ``obj``'s docstring (unchanged if unknown)."""
    if target.startswith("tabmoe"):
        return target
    head, _, rest = target.partition(".")
    for scope in (obj, obj.parent, obj.module):
        if scope is None:
            continue
        try:
            path = scope.resolve(head)
        except (griffe.NameResolutionError, AttributeError, KeyError):
            continue
        return f"{path}.{rest}" if rest else path
    return target


def roles_to_markdown(obj: griffe.Object, text: str) -> str:
    """Replace every Sphinx role in ``text`` by a Markdown cross-reference or inline code."""

    def replace(match: re.Match) -> str:
        target = match["target_t"] or match["target"]
        title = match["title"] or (target.rsplit(".", 1)[-1] if match["tilde"] else target)
        if match["role"] in ("func", "meth") and not match["title"]:
            title += "()"
        path = _resolve(obj, target)
        if path.startswith("tabmoe"):
            return f"[`{title}`][{path}]"
        return f"`{title}`"

    return ROLE.sub(replace, text)


def fix_grouped_parameters(obj: griffe.Object) -> None:
    """Signature default and annotation for each name of a grouped Parameters entry."""
    try:
        signature = {p.name: p for p in obj.parameters}
    except (AttributeError, KeyError):  # a class without __init__, an unresolved alias
        return
    for section in obj.docstring.parsed:
        if section.kind is not griffe.DocstringSectionKind.parameters:
            continue
        params = section.value
        for i, param in enumerate(params):
            # Names of one entry share the very same description string object.
            grouped = any(
                other is not param and other.description is param.description
                for other in params[max(0, i - 8) : i + 9]
            )
            own = signature.get(param.name)
            if not grouped or own is None:
                continue
            param.value = own.default
            if own.annotation is not None:
                param.annotation = own.annotation


def comment_docstring(obj: griffe.Object) -> str | None:
    """The ``#:`` comment lines right above attribute ``obj``'s first line (Sphinx autodoc's
    convention for documenting attributes), as text; None where there are none."""
    if not obj.is_attribute or obj.lineno is None:
        return None
    try:
        lines = obj.module.lines
    except (AttributeError, KeyError, OSError):  # no source (a compiled or inspected module)
        return None
    comment: list[str] = []
    for line in reversed(lines[: obj.lineno - 1]):
        stripped = line.strip()
        if not stripped.startswith("#:"):
            break
        comment.insert(0, stripped[3:] if stripped.startswith("#: ") else stripped[2:])
    return "\n".join(comment).strip() or None


class SphinxNumpyDocstrings(griffe.Extension):
    """Sphinx roles -> Markdown cross-references; grouped parameters -> their own defaults;
    ``#:`` comments -> attribute docstrings."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is None and (text := comment_docstring(obj)) is not None:
            obj.docstring = griffe.Docstring(text, parent=obj, lineno=obj.lineno)
        if obj.docstring is None:
            return
        obj.docstring.value = roles_to_markdown(obj, obj.docstring.value)
        if obj.is_class or obj.is_function:
            fix_grouped_parameters(obj)
