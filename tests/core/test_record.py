"""A deferred dataclass (gitckpt.core.record) is the stdlib's dataclass once used: the same
fields, signature, doc, repr, equality, hash, order, frozenness and `replace`, for random class
shapes and for every class gitckpt defines; it is made only when used, once, by any thread."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import sys
import textwrap
import threading
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gitckpt
from gitckpt.core import record

TYPES = ("int", "str", "tuple[int, ...]", "list[str]")
SAMPLES = {"int": (0, 7), "str": ("", "x"), "tuple[int, ...]": ((), (1, 2)),
           "list[str]": ([], ["a"])}


@st.composite
def shapes(draw):
    """A valid class body: required fields first, then ones with a default or a factory, an
    optional `KW_ONLY` part, a ClassVar, a `field(init=False)`, a `__post_init__`."""
    names = draw(st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=5, unique=True))
    required = draw(st.integers(0, len(names)))
    fields = []
    for i, name in enumerate(names):
        kind = draw(st.sampled_from(TYPES))
        if i < required:
            fields.append((name, kind, "required"))
        else:
            fields.append((name, kind, draw(st.sampled_from(["value", "factory", "noinit"]))))
    return {"fields": fields, "frozen": draw(st.booleans()),
            "order": draw(st.booleans()), "kw_only": draw(st.booleans()),
            "kw_marker": draw(st.booleans()), "post_init": draw(st.booleans()),
            "doc": draw(st.booleans()), "base": draw(st.booleans())}


def source(shape: dict) -> str:
    opts = [f"frozen={shape['frozen']}", f"order={shape['order']}",
            f"kw_only={shape['kw_only']}"]
    lines = [f"@dataclass({', '.join(opts)})", "class Base:", "    z: int = 9", ""] \
        if shape["base"] else []
    lines += [f"@dataclass({', '.join(opts)})", f"class C({'Base' if shape['base'] else ''}):"]
    if shape["doc"]:
        lines.append('    """A documented class."""')
    lines.append("    counted: ClassVar[int] = 3")
    marker_at = len(shape["fields"]) // 2 if shape["kw_marker"] else -1
    for i, (name, kind, how) in enumerate(shape["fields"]):
        if i == marker_at:
            lines.append("    _: KW_ONLY")
        default = {"required": "", "value": f" = {SAMPLES[kind][1]!r}",
                   "factory": f" = field(default_factory={kind.split('[')[0]})",
                   "noinit": f" = field(init=False, default={SAMPLES[kind][0]!r})"}[how]
        lines.append(f"    {name}: {kind}{default}")
    if shape["post_init"]:
        lines += ["    def __post_init__(self):", "        object.__setattr__(self, 'seen', 1)"]
    return "\n".join(lines) + "\n"


def build(text: str, decorator) -> type | BaseException:
    module = types.ModuleType(f"shape_{id(text)}_{id(decorator)}")
    sys.modules[module.__name__] = module  # the stdlib reads string annotations there
    namespace = module.__dict__
    namespace.update(dataclass=decorator, field=dataclasses.field,
                     KW_ONLY=dataclasses.KW_ONLY, ClassVar=__import__("typing").ClassVar)
    try:
        exec(compile("from __future__ import annotations\n" + text, "<shape>", "exec"),
             namespace)
        cls = namespace["C"]
        record.made(cls)  # where the stdlib raises at once, a deferred class raises at use
        return cls
    except (TypeError, ValueError) as e:
        return e


def arguments(cls: type, which: int) -> tuple[list, dict]:
    args, kwargs = [], {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        kind = str(f.type)
        value = SAMPLES[kind][which] if kind in SAMPLES else which
        if f.kw_only:
            kwargs[f.name] = value
        else:
            args.append(value)
    return args, kwargs


def outcome(fn, *args):
    """What `fn` returns, or the type of what it raises."""
    try:
        return fn(*args)
    except Exception as e:
        return type(e)


def described(f: dataclasses.Field) -> tuple:
    return (f.name, str(f.type), f.default, f.default_factory, f.init, f.repr, f.compare,
            f.hash, f.kw_only)


@pytest.fixture(params=["alone", "among threads"])
def company(request, monkeypatch):
    """One thread alive or more, as the class's maker counts them: alone, a class is made in
    place; among threads, with its twin's __init__ put in first. (Counted, not started: other
    tests may leave a thread behind in this process.)"""
    alive = 1 if request.param == "alone" else 3
    monkeypatch.setattr(record.threading, "active_count", lambda: alive)
    return request.param


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=shapes())
def test_a_deferred_class_is_the_stdlibs_once_used(company, shape):
    text = source(shape)
    eager, deferred = build(text, dataclasses.dataclass), build(text, record.dataclass)
    if isinstance(eager, BaseException):
        assert type(deferred) is type(eager), text
        assert str(deferred) == str(eager), text
        return
    assert isinstance(deferred, type), (text, deferred)
    assert [described(f) for f in dataclasses.fields(deferred)] \
        == [described(f) for f in dataclasses.fields(eager)]
    assert str(inspect.signature(deferred)) == str(inspect.signature(eager))
    assert str(inspect.signature(deferred.__init__)) == str(inspect.signature(eager.__init__))
    assert deferred.__doc__ == eager.__doc__
    assert deferred.__match_args__ == eager.__match_args__
    assert repr(deferred.__dataclass_params__) == repr(eager.__dataclass_params__)
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__lt__", "__setattr__"):
        assert (name in deferred.__dict__) == (name in eager.__dict__), name
    for which in (0, 1):
        args, kwargs = arguments(eager, which)
        a, b = eager(*args, **kwargs), deferred(*args, **kwargs)
        assert repr(a).replace("shape", "") == repr(b).replace("shape", "")
        assert b == deferred(*args, **kwargs)
        assert vars(a) == vars(b)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert outcome(hash, b) == outcome(hash, deferred(*args, **kwargs))
        assert type(outcome(hash, a)) is type(outcome(hash, b))
        if shape["frozen"]:
            with pytest.raises(dataclasses.FrozenInstanceError):
                b.anything = 1
        assert vars(dataclasses.replace(b)) == vars(b)
    if shape["order"]:
        args, kwargs = arguments(eager, 0)
        x = deferred(*args, **kwargs)
        assert (x <= x)
        assert not (x < x)


def test_a_class_is_made_only_when_used():
    @record.dataclass(frozen=True)
    class Late:
        a: int
        b: list = dataclasses.field(default_factory=list)  # a Field: still deferred

    assert isinstance(Late.__dict__["__dataclass_fields__"], record._Pending)
    assert Late in record._DEFERRED
    assert Late(1).a == 1
    assert Late not in record._DEFERRED
    assert "__dataclass_fields__" in Late.__dict__
    assert Late.__init__.__qualname__.startswith(
        "test_a_class_is_made_only_when_used.<locals>.Late")


def test_reading_its_fields_makes_it_and_so_does_making_a_subclass():
    @record.dataclass
    class A:
        a: int = 1

    assert dataclasses.is_dataclass(A)
    assert A not in record._DEFERRED

    @record.dataclass
    class B:
        b: int = 1

    @record.dataclass
    class C(B):
        c: int = 2

    assert C(3, 4) == C(b=3, c=4)
    assert B not in record._DEFERRED


def test_a_plain_subclass_of_a_deferred_class_makes_its_base():
    @record.dataclass(frozen=True)
    class Host:
        name: str

    class Claude(Host):
        def shout(self) -> str:
            return self.name.upper()

    assert Claude("c").shout() == "C"
    assert Host("h") != Claude("h")


def test_what_cannot_be_deferred_is_made_at_once():
    @record.dataclass(slots=True)
    class Slotted:
        a: int

    @record.dataclass
    class Own:
        a: int

        def __init__(self) -> None:
            self.a = 5

    assert "__slots__" in Slotted.__dict__
    assert Own().a == 5
    assert Slotted not in record._DEFERRED
    assert Own not in record._DEFERRED


def test_threads_that_make_the_first_instances_at_once_all_get_them():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(20):
            @record.dataclass(frozen=True)
            class Raced:
                a: int
                b: str = "b"
                c: tuple = ()

            start, out, errors = threading.Barrier(8), [], []

            def make(i: int, start=start, out=out, errors=errors, cls=Raced) -> None:
                start.wait()
                try:
                    out.append(cls(i))
                except Exception as e:  # a thread that found no __init__ would land here
                    errors.append(e)

            threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors
            assert sorted(r.a for r in out) == list(range(8))
    finally:
        sys.setswitchinterval(old)


def gitckpt_classes():
    """Every class gitckpt decorates with `record.dataclass`, module by module."""
    for info in pkgutil.walk_packages(gitckpt.__path__, "gitckpt."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ \
                    and dataclasses.is_dataclass(value):
                yield module, value


def test_every_gitckpt_dataclass_is_what_the_stdlib_makes_of_its_source():
    """Each class's source, made again by `dataclasses.dataclass` in its module's namespace,
    has the same fields, signature and generated methods (compared by their code)."""
    checked = 0
    for module, cls in gitckpt_classes():
        try:
            text = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        namespace = {**vars(module), "dataclass": dataclasses.dataclass}
        exec(compile(text, module.__file__ or "<gitckpt>", "exec"), namespace)
        eager = namespace[cls.__name__]
        assert [described(f) for f in dataclasses.fields(cls)] \
            == [described(f) for f in dataclasses.fields(eager)], cls
        assert str(inspect.signature(cls)) == str(inspect.signature(eager)), cls
        assert cls.__doc__ == eager.__doc__, cls
        for name, made in vars(eager).items():
            if inspect.isfunction(made) and name.startswith("__"):
                mine = cls.__dict__[name]
                assert mine.__code__.co_code == made.__code__.co_code, (cls, name)
                assert mine.__qualname__ == made.__qualname__, (cls, name)
        checked += 1
    assert checked > 90


def test_a_thread_that_arrives_while_a_class_is_made_gets_a_whole_instance(monkeypatch):
    """With threads alive, the stand-in stays until the class is whole: no thread gets an
    instance without its repr, or one whose frozen fields it can assign."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    names = [f"f{i}" for i in range(40)]  # a long making window
    half_made = []
    try:
        for _ in range(60):
            body = {"__annotations__": {n: "int" for n in names}, **dict.fromkeys(names, 0)}
            cls = record.dataclass(frozen=True)(type("Wide", (), body))
            start = threading.Barrier(6)

            def make(k: int, cls=cls, start=start) -> None:
                start.wait()
                for _ in range(k * 20):  # arrivals spread over the making
                    pass
                o = cls()
                try:
                    o.f0 = 1
                    frozen = False
                except dataclasses.FrozenInstanceError:
                    frozen = True
                if not repr(o).startswith("Wide(") or not frozen:
                    half_made.append(repr(o)[:30])

            threads = [threading.Thread(target=make, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(old)
    assert not half_made, half_made[:3]


@pytest.mark.usefixtures("company")
@pytest.mark.parametrize("shape", ["default before required", "mutable default",
                                   "frozen from mutable"])
def test_a_class_whose_making_fails_refuses_every_later_use(shape):
    """The first use raises the stdlib's own error; every use after it a TypeError that says
    so, never an empty instance or a class half made."""
    if shape == "default before required":
        @record.dataclass
        class Bad:
            x: int = 1
            y: int
        args: tuple = (1, 2)
    elif shape == "mutable default":
        @record.dataclass
        class Bad:  # type: ignore[no-redef]
            x: list = []  # noqa: RUF012
        args = ([1],)
    else:
        @record.dataclass
        class Base:
            x: int

        @record.dataclass(frozen=True)
        class Bad(Base):  # type: ignore[no-redef]
            y: int
        args = (1, 2)
    with pytest.raises((TypeError, ValueError)) as first:
        Bad(*args)
    assert "making it failed" not in str(first.value)  # the stdlib's own message
    for attempt in (lambda: Bad(*args), Bad, lambda: record.made(Bad),
                    lambda: dataclasses.fields(Bad), lambda: dataclasses.is_dataclass(Bad)):
        with pytest.raises(TypeError, match="is not a dataclass: making it failed"):
            attempt()


@pytest.mark.usefixtures("company")
def test_a_use_from_inside_its_own_making_is_refused_not_recursed():
    """A signal handler in the thread that makes a class, using it then, gets a TypeError
    (it once recursed forever); the class is whole afterwards. A tracer stands in for the
    handler, at the first line where the class is being made and its stand-in still there."""
    @record.dataclass
    class Inner:
        a: int = 1

    tried: list[str] = []

    def inside(frame, event, arg):
        if event == "line" and not tried and Inner in record._MAKING \
                and "__init__" in Inner.__dict__:
            tried.append("")
            try:
                Inner()
                tried[0] = "made an instance"
            except TypeError as e:
                tried[0] = str(e)
        return inside

    sys.settrace(lambda frame, event, arg: inside if frame.f_code is record.made.__code__
                 else None)
    try:
        Inner()
    finally:
        sys.settrace(None)
    assert tried
    assert "is being made a dataclass in this thread" in tried[0]
    assert Inner(2) == Inner(2)
    assert repr(Inner()) == "test_a_use_from_inside_its_own_making_is_refused_not_recursed." \
        "<locals>.Inner(a=1)"


def test_a_subclass_made_at_once_reads_a_base_another_thread_is_making_whole():
    """A subclass that cannot be deferred takes the lock, so it never inherits from a base
    half made by another thread (it once got the base's fields before its repr)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    names = [f"f{i}" for i in range(40)]
    wrong = []
    try:
        for _ in range(300):
            body = {"__annotations__": {n: "int" for n in names}, **dict.fromkeys(names, 0)}
            base = record.dataclass(type("Base", (), body))
            go = threading.Event()

            def subclass(base=base, go=go) -> None:
                go.wait()
                while not isinstance(base.__dict__.get("__dataclass_fields__"), dict):
                    pass  # the base is being made: its fields are in, maybe not its repr
                sub = record.dataclass(repr=False, eq=False, slots=True)(type("E", (base,), {}))
                if not repr(sub()).startswith("E(f0=0"):
                    wrong.append(repr(sub())[:30])

            other = threading.Thread(target=subclass)
            other.start()
            go.set()
            base()
            other.join()
    finally:
        sys.setswitchinterval(old)
    assert not wrong, wrong[:3]


def test_what_a_twin_cannot_copy_is_made_at_once():
    import abc
    from typing import Generic, TypeVar

    T = TypeVar("T")

    class Plugin:
        def __init_subclass__(cls, /, kind: str = "", **kw) -> None:
            super().__init_subclass__(**kw)
            cls.kind = kind

    class Named:
        def __set_name__(self, owner, name) -> None:
            self.owner = owner

        def __get__(self, obj, owner=None):
            return 7

    @record.dataclass
    class Boxed(Generic[T]):
        item: T

    @record.dataclass
    class Shape(abc.ABC):
        sides: int

    @record.dataclass
    class Zip(Plugin, kind="zip"):
        level: int = 1

    @record.dataclass
    class Described:
        value: int = Named()  # type: ignore[assignment]

    for cls in (Boxed, Shape, Zip, Described):
        assert cls not in record._DEFERRED, cls
        assert "__dataclass_fields__" in cls.__dict__
        assert not isinstance(cls.__dict__["__dataclass_fields__"], record._Pending)
    assert Boxed[int](3).item == 3
    assert Zip().kind == "zip"
