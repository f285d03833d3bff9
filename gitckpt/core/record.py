"""The stdlib's dataclass, made on a class's first use, so a process pays only for the
classes it uses.

Python 3.11 compiles each dataclass's `__init__`, `__repr__` and `__eq__` (and a frozen one's
`__setattr__`, `__delattr__` and `__hash__`) when its module is imported: about 0.5 ms a class.
A hook's modules define 33, and it makes instances of 15. So `dataclass` here leaves the class
as written, with three stand-ins: `__init__`, `__dataclass_fields__` and
`__dataclass_params__`. The first of them to be used makes the class: an instance made, or
`dataclasses.fields`, `is_dataclass`, `replace`, or a dataclass subclass being made. Making
runs `dataclasses.dataclass` on the class, in place, once, under one lock. Until then no
instance exists, so nothing can tell the two apart.

The stdlib keeps an `__init__` a class already has, so the stand-in must go first, and for a
moment the class has no `__init__` of its own. With one thread alive nothing else meets the
class in that moment (only a signal handler or a finalizer could, and gitckpt has none that
makes an instance). With more, the real `__init__` is put in place first, taken from a twin: a
dataclass of the same bases, fields and `__post_init__`, with nothing else generated. Every
thread then finds a working `__init__` at every moment, and one that arrives while the class
is made waits for the lock. A class this cannot defer (its own `__init__`, `slots`,
`init=False`) is made at once. The type checker sees `dataclasses.dataclass` itself.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from typing import TYPE_CHECKING, Any

#: One lock for every class, re-entrant: making a class makes its bases (their stand-ins).
_LOCK = threading.RLock()
#: The classes not made yet, each with its options.
_DEFERRED: dict[type, dict[str, Any]] = {}
_STANDS_IN = ("__dataclass_fields__", "__dataclass_params__")
#: The twin generates only `__init__` (with what shapes it: frozen assignment, keyword-only).
_TWIN_OFF = {"repr": False, "eq": False, "order": False, "unsafe_hash": False,
             "match_args": False}

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    def dataclass(cls=None, /, **options):
        """`dataclasses.dataclass`, deferred to the class's first use."""
        def wrap(c):
            return _defer(c, options)

        return wrap if cls is None else wrap(cls)


class _Pending:
    """Stands for `__dataclass_fields__` or `__dataclass_params__` until it is first read."""

    def __init__(self, cls: type, name: str) -> None:
        self.cls, self.name = cls, name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        return getattr(made(self.cls), self.name)


def _defer(cls: type, options: dict[str, Any]) -> type:
    if options.get("slots") or options.get("init") is False \
            or any(name in cls.__dict__ for name in ("__init__", *_STANDS_IN)):
        return _make(cls, options)

    def __init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        made(cls).__init__(self, *args, **kwargs)  # type: ignore[misc]  # cls's, not self's

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    _DEFERRED[cls] = options
    cls.__init__ = __init__  # type: ignore[misc]
    for name in _STANDS_IN:
        setattr(cls, name, _Pending(cls, name))
    return cls


def made(cls: type) -> type:
    """`cls` as `dataclasses.dataclass` makes it: made now if it was deferred and is not yet."""
    with _LOCK:
        options = _DEFERRED.get(cls)
        if options is None:
            return cls
        if threading.active_count() == 1:
            # No other thread can meet the class between the stand-in's removal and the
            # stdlib's __init__: make it in place, as the stdlib would have at import.
            del cls.__init__  # type: ignore[misc]
            _make(cls, options)
        else:
            # The twin's __init__ first: the stdlib keeps an __init__ a class has, and every
            # thread finds one at every moment.
            twin = _make(type(cls.__name__, cls.__bases__, _body(cls)), {**options, **_TWIN_OFF})
            cls.__init__ = twin.__init__  # type: ignore[misc]
            _make(cls, options)
        del _DEFERRED[cls]  # both _Pending stand-ins are replaced by now
        return cls


def _make(cls: type, options: dict[str, Any]) -> type:
    made: type = dataclasses.dataclass(**options)(cls)
    return made


def _body(cls: type) -> dict[str, Any]:
    """What a twin of `cls` is made of: its fields (their `field()`s copied: making a class
    writes to them) and its `__post_init__`, for a dataclass of the same bases whose one
    generated method is the `__init__` the stdlib makes for `cls`."""
    own = cls.__dict__
    annotations = own.get("__annotations__", {})
    body: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                            "__annotations__": dict(annotations)}
    for name in (*annotations, "__post_init__"):
        if name in own:
            value = own[name]
            body[name] = copy.copy(value) if isinstance(value, dataclasses.Field) else value
    return body
