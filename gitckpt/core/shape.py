"""One shape per result: a result type's fields, and the properties it names, are both the
object it answers with (`to_dict`: the CLI's `--json` and the MCP structured content) and the
schema the MCP server publishes for it (`schema`). Nothing else spells a result's keys."""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import sys
import typing
from collections.abc import Mapping
from pathlib import PurePath
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, cast

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_ROLE = "gitckpt.shape"  # a field's metadata key: "hidden" or "merged"


#: `field(metadata=HIDDEN)`: a field the result keeps for its readers (the CLI's text, the
#: agent's) but does not answer with; a property in `derived` says what the answer needs of it.
HIDDEN: Mapping[str, Any] = {_ROLE: "hidden"}

#: `field(metadata=MERGED)`: a field whose own object's keys join the result's (a restore
#: plan inside the answer of the restore), its class named by its annotation.
MERGED: Mapping[str, Any] = {_ROLE: "merged", "of": ()}


def merged_of(*of: str) -> Mapping[str, Any]:
    """MERGED, for a class the result's module imports only for type checking (to load
    faster): `of` names it as "module:Name"."""
    return {_ROLE: "merged", "of": of}


class Shaped:
    """A result, a dataclass: its object is its fields in order, less the `hidden` ones, with
    each `merged` one's keys spread in, then each property `derived` names (which may override
    a merged key). Every value goes through `to_json`."""

    derived: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(cast("DataclassInstance", self)):  # a dataclass by contract
            role = f.metadata.get(_ROLE)
            if role == "hidden":
                continue
            value = to_json(getattr(self, f.name))
            if role == "merged":
                out.update(value)
            else:
                out[f.name] = value
        for name in self.derived:
            out[name] = to_json(getattr(self, name))
        return out


def to_json(value: Any) -> Any:
    """`value` as JSON data: a record by its own `to_dict`, a named tuple as an object, a
    sequence as a list, a path as its text, an enum by its value."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return to_dict()
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_json(v) for k, v in value._asdict().items()}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(to_json(v) for v in value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if dataclasses.is_dataclass(value):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} is not a result value")


def schema(*types: type) -> dict[str, Any]:
    """The JSON schema of the object a result of any of `types` answers with: each key's JSON
    type from its annotation (records as `object`, sequences as `array`; `X | None` may be
    null). No key is required (an answer may be an error, or a resume without a task)."""
    props: dict[str, Any] = {}
    for t in types:
        props.update(_properties(t))
    return {"type": "object", "properties": props}


def _properties(cls: type) -> dict[str, Any]:
    module = sys.modules[cls.__module__]
    props: dict[str, Any] = {}
    for f in dataclasses.fields(cast("type[DataclassInstance]", cls)):
        role = f.metadata.get(_ROLE)
        if role == "hidden":
            continue
        if role == "merged":
            for inner in _classes(f.metadata["of"], f.type, module):
                props.update(_properties(inner))
            continue
        props[f.name] = _json_type(f.type, module)
    for name in getattr(cls, "derived", ()):
        attr = getattr(cls, name)
        fget = attr.fget if isinstance(attr, property) else None
        if fget is None or "return" not in fget.__annotations__:
            raise TypeError(f"{cls.__name__}.{name} is derived but not an annotated property")
        props[name] = _json_type(fget.__annotations__["return"], module)
    return props


_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
_ARRAYS = {"list", "tuple", "set", "frozenset", "Sequence"}
_OBJECTS = {"dict", "Mapping"}


def _json_type(annotation: Any, module: ModuleType) -> dict[str, Any]:
    """{"type": ...} for an annotation (a string under `from __future__ import annotations`);
    {} where JSON cannot say it (Any, a mix of kinds)."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "Any")
    kinds = _kinds(ast.parse(text, mode="eval").body, module)
    null = "null" in kinds
    kinds.discard("null")
    if len(kinds) != 1 or None in kinds:
        return {}
    (kind,) = kinds
    return {"type": [kind, "null"] if null else kind}


def _kinds(node: ast.expr, module: ModuleType) -> set[str | None]:
    if isinstance(node, ast.Constant) and node.value is None:
        return {"null"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _kinds(node.left, module) | _kinds(node.right, module)
    if isinstance(node, ast.Subscript):
        base = _name(node.value)
        if base == "Literal":
            values = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return {_kind_of(type(v.value)) for v in values if isinstance(v, ast.Constant)}
        if base in ("Optional",):
            return _kinds(node.slice, module) | {"null"}
        return _kinds(node.value, module)
    name = _name(node)
    if name in _SCALARS:
        return {_SCALARS[name]}
    if name in _ARRAYS:
        return {"array"}
    if name in _OBJECTS:
        return {"object"}
    if name == "Any":
        return {None}
    return {_kind_of(_resolve(name, module))}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _resolve(name: str, module: ModuleType) -> Any:
    """The object `name` means in `module`; a name imported only for type checking is not
    there, and such names are records (objects) by the layers' convention."""
    return getattr(module, name, dict)


def _kind_of(t: Any) -> str | None:
    supertype = getattr(t, "__supertype__", None)  # a NewType (ObjectId)
    if supertype is not None:
        return _kind_of(supertype)
    if typing.get_origin(t) is typing.Literal:
        kinds = {_kind_of(type(a)) for a in typing.get_args(t)}
        return kinds.pop() if len(kinds) == 1 else None
    if not isinstance(t, type):
        return None
    for base, kind in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                       (PurePath, "string")):
        if issubclass(t, base):
            return kind
    if issubclass(t, tuple) and hasattr(t, "_asdict"):
        return "object"
    if issubclass(t, list | tuple | set | frozenset):
        return "array"
    return "object"  # a record, a mapping


def _classes(of: tuple[str, ...], annotation: Any, module: ModuleType) -> list[type]:
    """The classes a merged field may hold: those `of` names, else its annotation's."""
    if of:
        out = [getattr(importlib.import_module(m), n) for m, n in (o.split(":") for o in of)]
        return typing.cast("list[type]", out)
    text = annotation if isinstance(annotation, str) else annotation.__name__
    node = ast.parse(text, mode="eval").body
    names: list[str] = []

    def walk(n: ast.expr) -> None:
        if isinstance(n, ast.BinOp):
            walk(n.left)
            walk(n.right)
        elif _name(n):
            names.append(_name(n))
    walk(node)
    out = [getattr(module, n, None) for n in names if n != "None"]
    if not all(isinstance(c, type) and dataclasses.is_dataclass(c) for c in out):
        raise TypeError(f"a merged field must name dataclasses the module imports: {text}")
    return typing.cast("list[type]", out)
