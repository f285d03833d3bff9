"""The stdlib's dataclass, made on a class's first use, so a process pays only for the
classes it uses.

Python 3.11 compiles each dataclass's `__init__`, `__repr__` and `__eq__` (and a frozen one's
`__setattr__`, `__delattr__` and `__hash__`) when its module is imported: about 0.5 ms a class.
A hook's modules define 33, and it makes instances of 15. So `dataclass` here leaves the class
as written, with three stand-ins: `__init__`, `__dataclass_fields__` and
`__dataclass_params__`. The first of them to be used makes the class: an instance made, or
`dataclasses.fields`, `is_dataclass`, `replace`, or a dataclass subclass being made. Making
runs `dataclasses.dataclass` on the class, in place, once, under one lock; a class whose making
fails (an invalid one, an interrupt) refuses every later use with a TypeError.

The stdlib keeps an `__init__` a class already has. With one thread alive the stand-in is
deleted first and the class made as at import (only a signal handler, a finalizer or a thread
`threading` does not count could meet it in that moment; gitckpt has none that makes an
instance). With more, the stand-in stays while the stdlib makes the class, so a thread that
arrives waits for the lock, and the real `__init__`, taken from a twin (a dataclass of the same
bases, fields and `__post_init__`, with nothing else generated), replaces it last.

This is for gitckpt's own classes, not a drop-in for any dataclass. Before its first use a
class reads as written: a `field()` default is the Field, there is no `__match_args__`, and
`inspect.signature` sees the stand-in. An instance made without `__init__` (unpickled) or by a
subclass whose own `__init__` skips the base's would belong to an unmade class; gitckpt does
neither. A class a twin cannot copy is made at once: `slots`, `init=False`, its own `__init__`,
a metaclass (an ABC's), a `Generic` base, a base's `__init_subclass__`, a descriptor default.
The type checker sees `dataclasses.dataclass` itself.
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
#: The classes whose making failed, each with why.
_FAILED: dict[type, str] = {}
#: The classes being made now (by the thread that holds the lock).
_MAKING: set[type] = set()
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
    if not _deferrable(cls, options):
        with _LOCK:  # a deferred base another thread is making is read whole
            return _make(cls, options)

    def __init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        made(cls).__init__(self, *args, **kwargs)  # type: ignore[misc]  # cls's, not self's

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    _DEFERRED[cls] = options
    cls.__init__ = __init__  # type: ignore[misc]
    for name in _STANDS_IN:
        setattr(cls, name, _Pending(cls, name))
    return cls


def _deferrable(cls: type, options: dict[str, Any]) -> bool:
    """Whether `cls` is a plain class a twin can copy: no `slots` or `init=False`, no
    `__init__` or stand-in of its own, no metaclass (an ABC's would refuse the first instance
    before the stand-in runs), no `Generic` base, no base's `__init_subclass__` or a
    descriptor's `__set_name__` (a twin would call them again), no field default that is
    a descriptor."""
    own = cls.__dict__
    if options.get("slots") or options.get("init") is False or type(cls) is not type \
            or "__orig_bases__" in own or any(n in own for n in ("__init__", *_STANDS_IN)):
        return False
    if any("__init_subclass__" in base.__dict__ for base in cls.__mro__[1:-1]):
        return False
    for name in own.get("__annotations__", {}):
        value = own.get(name)
        if isinstance(value, dataclasses.Field):  # (a Field passes __set_name__ on)
            value = value.default
        if hasattr(type(value), "__set_name__"):
            return False
    return True


def made(cls: type) -> type:
    """`cls` as `dataclasses.dataclass` makes it: made now if it was deferred and is not yet.
    TypeError if making it failed before (the stdlib's own error was raised then), or if it
    is used from inside its own making (a signal handler in the thread that makes it)."""
    with _LOCK:
        if cls in _MAKING:
            raise TypeError(f"{cls.__qualname__} is being made a dataclass in this thread")
        options = _DEFERRED.get(cls)
        if options is None:
            if cls in _FAILED:
                raise TypeError(f"{cls.__qualname__} is not a dataclass: making it failed "
                                f"({_FAILED[cls]})")
            return cls
        stand_in = cls.__dict__["__init__"]
        try:
            _MAKING.add(cls)
            if threading.active_count() == 1:
                # No other thread can meet the class between the stand-in's removal and
                # the stdlib's __init__: made in place, as the stdlib would at import.
                del cls.__init__  # type: ignore[misc]
                _make(cls, options)
            else:
                # The stand-in stays while the stdlib makes the class (it keeps an __init__
                # a class has), so a thread that arrives waits for the lock; the twin's
                # __init__ replaces it last.
                twin = _make(type(cls.__name__, cls.__bases__, _body(cls)),
                             {**options, **_TWIN_OFF})
                documented = bool(cls.__doc__)
                _make(cls, options)
                cls.__init__ = twin.__init__  # type: ignore[misc]
                if not documented:  # the stdlib's doc is the signature the stand-in hid
                    cls.__doc__ = twin.__doc__
            del _DEFERRED[cls]
        except BaseException as e:
            # Half made (an invalid class, an interrupt): the stand-ins go back, and every
            # later use is refused here.
            _DEFERRED.pop(cls, None)
            _FAILED[cls] = f"{type(e).__name__}: {e}"
            cls.__init__ = stand_in  # type: ignore[misc]
            for name in _STANDS_IN:
                setattr(cls, name, _Pending(cls, name))
            raise
        finally:
            _MAKING.discard(cls)
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
