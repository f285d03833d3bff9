"""One declaration per operation's input: a request is a frozen dataclass whose fields say once
what each input is (`arg`); the CLI's options and help, the MCP tool's input schema and
description, the spelling of a suggested call, and the wire form between processes are all
derived from it. `core/decode.py` reads a request back from JSON through the same declaration.

Standard library only, and nothing of gitckpt's: every layer and every client may import it.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Literal, TypeVar

#: A field's metadata key for its Spec.
_KEY = "gitckpt.arg"


class _Unset(enum.Enum):
    UNSET = "unset"


#: A Spec's `mcp_default` when the MCP tool's default is the field's own.
UNSET = _Unset.UNSET

R = TypeVar("R")


class Opening(enum.Enum):
    """How a request's workspace is opened from the folder it names."""

    #: The store of the folder or of a folder above it, and (as git does from any subfolder)
    #: the nearest folder at or above it with an active task of that store.
    FIND = "find"
    #: The store found, without looking above for an active task (switch, settings).
    STORE = "store"
    #: This folder's own store, never a parent's: the request makes a task here.
    HERE = "here"
    #: The folder's own store even where it records another folder or holds planted links:
    #: a check and repair of it (doctor).
    ADOPT = "adopt"
    #: This folder's own store, made for another folder, taken over (adopt).
    TAKE = "take"


@dataclasses.dataclass(frozen=True)
class Spec:
    """What one input is, for every front end.

    `help` is the CLI's help for it; `brief` the MCP schema's description (None: the help;
    "": none, for inputs the server's instructions explain once). `cli` is the option (""
    for `--` and the name with `-`), a mapping of flags to the (value, help) each sets, or
    None where the CLI does not take it; `positional` makes it an argument. `pair` is a second
    option whose values pair with this one's, position by position (`--ran CMD` with
    `--exit N`): (its flag, its metavar, its help). `path` says what a path names: "file" a
    path of the caller's file system, "workspace" one inside the workspace; either is read
    from the caller's folder (the CLI's `-C`). `after_dashes`: the CLI takes it only from
    the words after `--`."""

    help: str = ""
    brief: str | None = None
    cli: str | Mapping[str, tuple[str, str]] | None = ""
    positional: bool = False
    metavar: str | None = None
    mcp: bool = True
    minimum: int | None = None
    maximum: int | None = None
    complete: Literal["task", "target"] | None = None
    path: Literal["file", "workspace"] | None = None
    show_default: bool = False
    pair: tuple[str, str, str] | None = None
    after_dashes: bool = False
    words: bool = False  # a CLI argument of one or more words, joined by spaces
    raw: bool = False  # a CLI argument of every word after it, options included (run's CMD)
    enum_shown: bool = True  # the schema lists the values (else the description says some)
    mcp_default: Any = UNSET  # where the MCP tool's default is its own
    example: str | None = None  # an MCP value an error's hint shows, where the type cannot

    @property
    def described(self) -> str:
        return self.help if self.brief is None else self.brief


def arg(help: str = "", *, default: Any = dataclasses.MISSING,
        factory: Any = dataclasses.MISSING, **spec: Any) -> Any:
    """A request field: `dataclasses.field` with its Spec."""
    meta = {_KEY: Spec(help, **spec)}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class Kind:
    """A field's type as JSON sees it: a scalar (`json` string, integer, number, boolean), an
    enumeration of strings (`values`), an array of `items`, an object of a record class
    (`record`) or of strings (`json` object, no record), or one of `alts`."""

    json: str
    nullable: bool = False
    values: tuple[str, ...] = ()
    items: Kind | None = None
    record: type | None = None
    alts: tuple[Kind, ...] = ()


_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def kind_of(annotation: Any) -> Kind:
    """The Kind of a resolved annotation; TypeError for one JSON cannot carry."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        nullable = len(kept) < len(args)
        if len(kept) == 1:
            return dataclasses.replace(kind_of(kept[0]), nullable=nullable)
        return Kind("any", nullable, alts=tuple(kind_of(a) for a in kept))
    if annotation in _SCALARS:
        return Kind(_SCALARS[annotation])
    if origin is Literal:
        if not all(isinstance(a, str) for a in args):
            raise TypeError(f"only string literals are inputs: {annotation!r}")
        return Kind("string", values=tuple(args))
    if origin in (tuple, list) and args:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise TypeError(f"a tuple input is tuple[X, ...]: {annotation!r}")
        return Kind("array", items=kind_of(args[0]))
    if origin is dict and args == (str, str):
        return Kind("object")
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return Kind("object", record=annotation)
    raise TypeError(f"{annotation!r} is not an input type")


@dataclasses.dataclass(frozen=True)
class Param:
    """One declared input: its name, Kind, Spec and default (`required` has none)."""

    name: str
    kind: Kind
    spec: Spec
    default: Any
    factory: Any

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING and self.factory is dataclasses.MISSING

    def initial(self) -> Any:
        """The value the field takes when it is not given."""
        if self.factory is not dataclasses.MISSING:
            return self.factory()
        return None if self.default is dataclasses.MISSING else self.default

    @property
    def option(self) -> str:
        """The CLI's option for it: `--` and the name with `-` unless the spec names one."""
        cli = self.spec.cli
        return cli if isinstance(cli, str) and cli else "--" + self.name.replace("_", "-")


_PARAMS: dict[type, tuple[Param, ...]] = {}


def params(cls: type) -> tuple[Param, ...]:
    """The declared inputs of a request or record class, in order (read once a class)."""
    found = _PARAMS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = tuple(Param(f.name, kind_of(hints[f.name]), f.metadata.get(_KEY) or Spec(),
                            f.default, f.default_factory)
                      for f in dataclasses.fields(cls))
        _PARAMS[cls] = found
    return found


class Request(Generic[R]):
    """An operation's input; a subclass is a frozen dataclass of `arg` fields whose result
    type is R. Its class docstring is the CLI command's help; `summary` the MCP tool's
    description. A list given for an array field is kept as a tuple, and a field of a text or
    texts given one text in a list keeps the text."""

    #: The operation's name (what a suggested `Call` names), its CLI command's words (None:
    #: no command), its MCP tool (None: no tool) and the arguments a suggested call of the
    #: tool always carries.
    op: ClassVar[str]
    command: ClassVar[str | None] = None
    tool: ClassVar[str | None] = None
    tool_args: ClassVar[Mapping[str, object]] = {}
    summary: ClassVar[str] = ""
    opening: ClassVar[Opening] = Opening.FIND

    def __post_init__(self) -> None:
        for p in params(type(self)):
            value = getattr(self, p.name)
            if isinstance(value, list) and (p.kind.json == "array" or p.kind.alts):
                value = tuple(value)
                object.__setattr__(self, p.name, value)
            if p.kind.alts and isinstance(value, tuple) and len(value) == 1:
                object.__setattr__(self, p.name, value[0])  # one of a text or texts: the text

    def opened(self) -> Opening:
        """How this request's workspace is opened (a request may choose by its values)."""
        return self.opening

    def store_folder(self) -> str | None:
        """Where a plain folder's new store goes, if the request says (init --store)."""
        return None

    def usage(self) -> str | None:
        """Why these inputs do not go together (one needs another, two exclude each other),
        or None: a template naming each input as `{name}`, which each front end spells as
        its users write it (`--as`, `as_id`)."""
        return None

    def to_wire(self) -> dict[str, Any]:
        """The request as JSON data: each field by its name (`core/decode.py` reads it)."""
        return {p.name: to_json(getattr(self, p.name)) for p in params(type(self))}


def to_json(value: Any) -> Any:
    """An input value as JSON data: records by their fields, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {p.name: to_json(getattr(value, p.name)) for p in params(type(value))}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def schema(cls: type, front: Literal["mcp", "wire"] = "mcp") -> dict[str, Any]:
    """The JSON schema of `cls`'s input as `front` takes it: for MCP, the fields the tool
    exposes, each with its description and any default that is not empty."""
    props: dict[str, Any] = {}
    required = []
    for p in params(cls):
        if front == "mcp" and not p.spec.mcp:
            continue
        one = _schema_of(p.kind, p.spec.enum_shown)
        if front == "mcp" and p.spec.described:
            one["description"] = " ".join(p.spec.described.split())
        if p.spec.minimum is not None:
            one["minimum"] = p.spec.minimum
        if p.spec.maximum is not None:
            one["maximum"] = p.spec.maximum
        default = p.spec.mcp_default if front == "mcp" and \
            p.spec.mcp_default is not UNSET else p.default
        if default not in (dataclasses.MISSING, None, "", False, ()):
            one["default"] = default
        props[p.name] = one
        if p.required:
            required.append(p.name)
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def _schema_of(kind: Kind, enum: bool = True) -> dict[str, Any]:
    if kind.alts:
        return {"anyOf": [_schema_of(k, enum) for k in kind.alts]}
    if kind.record is not None:
        return schema(kind.record)
    out: dict[str, Any] = {"type": kind.json}
    if kind.values and enum:
        out["enum"] = list(kind.values)
    if kind.items is not None:
        out["items"] = _schema_of(kind.items, enum)
    if kind.json == "object":
        out["additionalProperties"] = {"type": "string"}
    return out
