"""One declaration per operation's input (core/request.py, core/operations.py): the CLI's
options and help, the MCP tools' schemas and descriptions, the wire form and the spelling of a
suggested call are each what the declaration says, and each reads a request back equal to the
one it was made from."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.cli.declared import read, spelled
from gitckpt.cli.main import cli
from gitckpt.core import hints
from gitckpt.core.decode import TEXT_FORMS, decode
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.inputs import CommandRun
from gitckpt.core.operations import OPERATIONS, TOOLS, SaveRequest
from gitckpt.core.request import UNSET, Kind, Param, Request, params, schema
from gitckpt.mcp import handshake
from gitckpt.mcp.server import TOOLS as REGISTERED
from gitckpt.mcp.server import listed

COMMANDS = [cls for cls in OPERATIONS.values() if cls.command is not None]


def click_command(cls: type[Request[Any]]) -> click.Command:
    command: click.Command = cli
    for word in str(cls.command).split():
        assert isinstance(command, click.Group)
        command = command.commands[word]
    return command


# -- the CLI -------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", COMMANDS, ids=lambda c: c.op)
def test_each_command_takes_exactly_the_declared_inputs(cls):
    """Every input the CLI takes is an option or argument of the command, with the declared
    help, metavar and kind; nothing else is."""
    command = click_command(cls)
    assert command.help == cls.__doc__
    by_name: dict[str, list[click.Parameter]] = {}
    for p in command.params:
        if p.name != "help":
            by_name.setdefault(str(p.name).removesuffix("__paired"), []).append(p)
    shown = {p.name: p for p in params(cls) if p.spec.cli is not None
             and not (p.spec.after_dashes and not p.spec.positional)}
    assert set(by_name) == set(shown), cls.op
    for name, found in by_name.items():
        declared = shown[name]
        first = found[0]
        many = declared.kind.json == "array" or bool(declared.kind.alts)
        if declared.spec.positional:
            assert isinstance(first, click.Argument)
            assert first.required == declared.required
            assert (first.nargs == -1) == (many or declared.spec.words)
            continue
        assert isinstance(first, click.Option)
        if isinstance(declared.spec.cli, Mapping):  # one flag per value
            assert {o.opts[0]: (o.flag_value, o.help) for o in found} == dict(declared.spec.cli)
            continue
        assert first.opts[0] == declared.option
        assert first.help == declared.spec.help
        assert first.is_flag == (declared.kind.json == "boolean")
        assert first.multiple == (many and not first.is_flag)
        assert first.metavar == declared.spec.metavar
        assert first.required == declared.required
        if declared.kind.values or (declared.kind.items and declared.kind.items.values):
            values = declared.kind.values or declared.kind.items.values
            assert isinstance(first.type, click.Choice)
            assert tuple(first.type.choices) == values
        assert len(found) == (2 if declared.spec.pair else 1)


def _text(kind: Kind, low: int | None = 0, high: int | None = 1000) -> st.SearchStrategy[Any]:
    """Values of `kind` a command line can carry as they are: no word a shell or click would
    read as an option, none empty."""
    word = st.text(st.characters(codec="utf-8", exclude_characters="\0=+"), min_size=1,
                   max_size=12).filter(lambda s: not s.startswith("-") and s.strip() == s
                                       and s.strip())
    if kind.values:
        return st.sampled_from(kind.values)
    if kind.json == "integer":
        return st.integers(0 if low is None else low, 1000 if high is None else high)
    if kind.json == "boolean":
        return st.booleans()
    return word


def _value(p: Param) -> st.SearchStrategy[Any]:
    kind = p.kind
    if kind.alts:
        return st.one_of(_text(kind.alts[0]),
                         st.lists(_text(kind.alts[0]), min_size=1, max_size=3).map(tuple))
    if kind.json == "array":
        items = kind.items
        assert items is not None
        if items.record is CommandRun:
            one: st.SearchStrategy[Any] = st.builds(CommandRun, _text(Kind("string")),
                                                    st.integers(0, 255))
        elif items.record is not None:  # a record written as its text form (PATH=NOTE)
            one = st.builds(lambda a, b: TEXT_FORMS[items.record](f"{a}={b}"),
                            _text(Kind("string")),
                            st.sampled_from(["pending", "done"]) if "Plan" in
                            items.record.__name__ else _text(Kind("string")))
        else:
            one = _text(items)
        return st.lists(one, min_size=1 if p.required else 0, max_size=3).map(tuple)
    value = _text(kind, p.spec.minimum, p.spec.maximum)
    return st.one_of(st.none(), value) if kind.nullable else value


def _argv(cls: type[Request[Any]], request: Request[Any]) -> list[str]:
    """The command line that says `request`, written from the declaration: what a person
    would type."""
    words = str(cls.command).split()
    tail: list[str] = []
    for p in params(cls):
        value, spec = getattr(request, p.name), p.spec
        if spec.cli is None or value == p.initial():
            continue
        if spec.positional:
            if spec.words:
                words.append(value)
            elif spec.after_dashes:
                tail += list(value)
            elif isinstance(value, tuple):
                words += list(value)
            else:
                words.append(str(value))
        elif spec.after_dashes:
            tail += list(value)
        elif isinstance(spec.cli, Mapping):
            words += [f for f, (v, _) in spec.cli.items() if v == value]
        elif p.kind.json == "boolean":
            words.append(p.option)
        elif spec.pair is not None:
            for run in value:
                words += [p.option, run.command, spec.pair[0], str(run.exit_code)]
        elif isinstance(value, tuple):
            for v in value:
                text = v if isinstance(v, str) else \
                    f"{'+' if getattr(v, 'add', False) else ''}{_record_text(v)}"
                words += [p.option, text]
        else:
            words += [p.option, str(value)]
    return words + (["--", *tail] if tail else [])


def _record_text(v: Any) -> str:
    first, second = (getattr(v, f.name) for f in params(type(v))[:2])
    return f"{first}={second}"


def _requests(cls: type[Request[Any]]) -> st.SearchStrategy[Request[Any]]:
    shown = {p.name: _value(p) for p in params(cls) if p.spec.cli is not None
             and not p.spec.raw}
    made = st.fixed_dictionaries(shown).map(lambda kw: cls(**kw))
    return made.filter(lambda r: r.usage() is None)


@pytest.mark.parametrize("cls", [c for c in COMMANDS if c.op not in ("run",)],
                         ids=lambda c: c.op)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_what_a_person_types_is_read_into_the_same_request(cls, data):
    """Any request, typed as a command line, is read back by the CLI into an equal one."""
    request = data.draw(_requests(cls))
    argv = _argv(cls, request)
    with cli.make_context("gitckpt", list(argv)) as ctx:
        rest = [*(getattr(ctx, "_protected_args", None) or ctx.protected_args), *ctx.args]
        command = cli
        sub = ctx
        while isinstance(command, click.Group):
            name, command, rest = command.resolve_command(sub, rest)
            sub = command.make_context(name, rest, parent=sub)
        with sub:
            assert read(cls, sub.params, sub) == request, argv


def test_inputs_that_do_not_go_together_are_a_usage_error_spelled_as_typed():
    for argv, said in ((["blame", "a.py", "--all", "--task", "t"],
                        "--all reads every task: it takes no --task"),
                       (["save", "t", "--ran", "make"], "Give each --ran its --exit")):
        with pytest.raises(click.UsageError, match=said), \
                cli.make_context("gitckpt", argv) as ctx:
            cli.invoke(ctx)
    names = {p.name: spelled(p) for p in params(OPERATIONS["import"])}
    assert names["source"] == "--from"
    assert names["package"] == "PACKAGE"


# -- MCP -------------------------------------------------------------------------------------


def test_the_tools_are_the_declared_ones_in_order():
    assert [t.request for t in REGISTERED] == list(TOOLS)
    # the shipped list is the default one: the core tools, in the same order
    assert [t["name"] for t in json.loads(handshake.TOOLS.read_text())] == \
        [t.request.tool for t in REGISTERED if t.core]


@pytest.mark.parametrize("tool", REGISTERED, ids=lambda t: t.name)
def test_each_tools_schema_and_description_are_its_requests(tool):
    cls = tool.request
    shown = listed(tool).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert shown["description"] == " ".join(cls.summary.split())
    inputs = shown["inputSchema"]
    # (`root`, which every tool takes, is said once, in the instructions)
    assert set(inputs["properties"]) == {p.name for p in params(cls) if p.spec.mcp}
    assert inputs["properties"] == schema(cls)["properties"]
    assert inputs.get("required", []) == [p.name for p in params(cls)
                                         if p.spec.mcp and p.required]
    for p in params(cls):
        if p.spec.mcp and p.spec.described:
            assert inputs["properties"][p.name]["description"] == \
                " ".join(p.spec.described.split())


@pytest.mark.parametrize("cls", TOOLS, ids=lambda c: c.op)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_tool_call_is_read_into_the_request_its_arguments_say(cls, data):
    """Any request the tool can carry, written as its JSON arguments, reads back equal."""
    shown = {p.name: _value(p) for p in params(cls) if p.spec.mcp}
    values = data.draw(st.fixed_dictionaries(shown))
    request = cls(**values)
    if request.usage() is not None:
        return
    arguments = {k: v for k, v in request.to_wire().items() if k in shown}
    got = decode(cls, json.loads(json.dumps(arguments)), front="mcp")
    hidden = {p.name for p in params(cls) if not p.spec.mcp}
    assert {k: v for k, v in vars(got).items() if k not in hidden} == \
        {k: v for k, v in vars(request).items() if k not in hidden}
    for name in hidden:  # what the tool does not take is its own default
        p = next(q for q in params(cls) if q.name == name)
        assert getattr(got, name) == (p.initial() if p.spec.mcp_default is UNSET
                                      else p.spec.mcp_default)


def test_a_wrong_argument_is_refused_with_the_closest_and_an_example():
    with pytest.raises(InvalidArgument, match=r'has no argument "conclsion"\. Did you mean '
                                              r'"conclusion"'):
        decode(SaveRequest, {"title": "t", "conclsion": "x"}, front="mcp")
    with pytest.raises(InvalidArgument, match=r"close takes a boolean") as e:
        decode(SaveRequest, {"title": "t", "close": "yes"}, front="mcp")
    assert "ckpt_save(close=true)" in e.value.hint
    with pytest.raises(InvalidArgument, match=r"plan.0.status of ckpt_save must be one of"):
        decode(SaveRequest, {"title": "t", "plan": [{"item": "a", "status": "doing"}]},
               front="mcp")
    with pytest.raises(InvalidArgument, match="ckpt_save needs title"):
        decode(SaveRequest, {}, front="mcp")
    with pytest.raises(InvalidArgument, match='has no argument "voice"'):
        decode(OPERATIONS["resume"], {"voice": "cli"}, front="mcp")  # the front end's own


# -- between processes ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(OPERATIONS.values()), ids=lambda c: c.op)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_the_wire_form_reads_back_equal(cls, data):
    values = data.draw(st.fixed_dictionaries({p.name: _wire_value(p) for p in params(cls)}))
    request = cls(**values)
    if request.usage() is not None:
        return
    assert decode(cls, json.loads(json.dumps(request.to_wire()))) == request


def _wire_value(p: Param) -> st.SearchStrategy[Any]:
    if p.kind.record is not None:  # a host's tool call
        return st.builds(p.kind.record, st.text(max_size=8))
    if p.kind.json == "number":
        return st.floats(0, 10)
    return _value(p)


# -- the calls a hint suggests ----------------------------------------------------------------


@pytest.mark.parametrize("suggested", [
    hints.call("init", name="t", goal="g"), hints.call("save", title="t", conclusion="c"),
    hints.call("resume", format="full"), hints.call("log", before=3),
    hints.call("restore", target="2", paths=["a b"], apply=True, confirm=True, task="x"),
    hints.call("revert", target="1..2", apply=True, expect="abc"),
    hints.call("push", remote="origin", confirm=True), hints.call("fetch", task="t", as_id="u"),
    hints.call("compress", min_steps=1), hints.call("config_remote", name="origin"),
], ids=lambda c: c.op)
def test_a_suggested_command_runs_as_the_call_it_spells(suggested):
    """A hint's command line is read by the CLI into the request of the call it names."""
    cls = OPERATIONS[suggested.op]
    argv = shlex.split(suggested.spell(hints.CLI))[1:]
    with cli.make_context("gitckpt", list(argv)) as ctx:
        rest = [*(getattr(ctx, "_protected_args", None) or ctx.protected_args), *ctx.args]
        command, sub = cli, ctx
        while isinstance(command, click.Group):
            name, command, rest = command.resolve_command(sub, rest)
            sub = command.make_context(name, rest, parent=sub)
        with sub:
            got = read(cls, sub.params, sub)
    for key, value in suggested.args.items():
        assert getattr(got, key) == (tuple(value) if isinstance(value, list) else value), key
    tool = suggested.spell(hints.MCP)
    assert tool.startswith(f"{cls.tool}(") if cls.tool else tool.endswith("in a terminal")


def test_every_call_gitckpt_names_is_an_operation_with_a_command():
    """hints.call() checks its operation only when spelled: here every `call("op"` in the
    package is checked at once, so a misspelled one fails a test, not a user's error."""
    import re
    from pathlib import Path

    from gitckpt.core.operations import OPERATIONS

    package = Path(__file__).resolve().parents[2] / "gitckpt"
    named = {m for p in package.rglob("*.py")
             for m in re.findall(r"\bcall\(\s*\"([a-z_]+)\"", p.read_text())}
    assert named, "no call found: the pattern is stale"
    unknown = {n for n in named if n not in OPERATIONS or OPERATIONS[n].command is None}
    assert not unknown, unknown
