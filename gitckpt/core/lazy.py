"""Modules imported on first use, so a command pays only for the code it runs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    """Stands for a module until an attribute is read, then imports it the usual way (under
    the import lock, so two threads that read at once both get the loaded module; Python
    3.11's LazyLoader could hand one of them a module still being executed)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def lazy(name: str) -> ModuleType:
    """Module `name`, executed when one of its attributes is first read (at once if some
    other import already loaded it)."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _Deferred(name)
