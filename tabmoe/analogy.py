"""Moved to :mod:`tabmoe.interpret.analogy`; this old path warns and is removed in the next release."""

from ._moved import reexport

reexport(__name__, globals())
