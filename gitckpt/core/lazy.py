"""Modules imported on first use, so a command pays only for the code it runs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from logging import Logger


class _Deferred(ModuleType):
    """Stands for a module until an attribute is read, then imports it the usual way (under
    the import lock, so two threads that read at once both get the loaded module; Python
    3.11's LazyLoader could hand one of them a module still being executed)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


class _Logger:
    """Stands for `logging.getLogger(name)` until it is first used: `logging` costs a hook
    5 ms to import, and most runs log nothing."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import logging

        return getattr(logging.getLogger(self._name), attr)


def logger(name: str) -> Logger:
    """The logger `name`, with `logging` imported when it first logs."""
    return cast("Logger", _Logger(name))


def lazy(name: str) -> ModuleType:
    """Module `name`, executed when one of its attributes is first read (at once if some
    other import already loaded it)."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _Deferred(name)
