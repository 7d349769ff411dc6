"""Moved to :mod:`tabmoe.interpret.explain`; this old path warns and is removed in the next release."""

from ._moved import reexport

reexport(__name__, globals())
