"""click commands derived from the requests' declarations (core/operations.py): each input's
option or argument, its help, type, default and completion come from its field, and the
command line is read back into the request. A command module writes only what the command
does with the request it is handed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from gitckpt.cli.complete import complete_target, complete_task
from gitckpt.cli.invocation import Ctx
from gitckpt.core.decode import TEXT_FORMS
from gitckpt.core.inputs import CommandRun
from gitckpt.core.request import Param, Request, params

Q = TypeVar("Q", bound=Request[Any])
Body = Callable[[Ctx, Q], Any]

_COMPLETE = {"task": complete_task, "target": complete_target}

#: Hands a command the invocation's context (for commands not derived from a request).
pass_ctx = click.make_pass_decorator(Ctx)


class PathsAfterDashes(click.Command):
    """A command whose words after `--` are paths, kept apart from its positional targets."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1:])
        return super().parse_args(ctx, args)


def command(cls: type[Q], **settings: Any) -> Callable[[Body[Q]], click.Command]:
    """The click command of `cls`: `body(ctx, request)` runs with the invocation's context
    and the request the command line says. `settings` are click's context settings."""
    def wrap(body: Body[Q]) -> click.Command:
        def callback(**given: Any) -> Any:
            ctx = click.get_current_context()
            return body(ctx.find_object(Ctx) or Ctx(".", False), read(cls, given, ctx))

        declared = params(cls)
        kind = PathsAfterDashes if any(p.spec.after_dashes for p in declared) \
            else click.Command
        name = str(cls.command).split()[-1]
        return kind(name, callback=callback, help=cls.__doc__,
                    params=[c for p in declared for c in options(p)],
                    context_settings=settings or None)
    return wrap


def options(p: Param) -> list[click.Parameter]:
    """The click parameters of one input (none where the CLI does not take it)."""
    spec, kind = p.spec, p.kind
    if spec.cli is None or (spec.after_dashes and not spec.positional):
        return []
    complete = _COMPLETE[spec.complete] if spec.complete else None
    many = kind.json == "array" or bool(kind.alts)
    if spec.positional:
        kept: dict[str, Any] = {} if p.required else {"default": () if many else p.initial()}
        return [click.Argument([p.name], nargs=-1 if many or spec.words else 1,
                               required=p.required,
                               type=click.UNPROCESSED if spec.raw else _type(p),
                               metavar=spec.metavar, shell_complete=complete, **kept)]
    if isinstance(spec.cli, Mapping):  # one flag per value; the first carries the default
        return [click.Option([flag, p.name], flag_value=value, help=help,
                             **({"default": p.default} if i == 0 else {}))
                for i, (flag, (value, help)) in enumerate(spec.cli.items())]
    flag = p.option
    decls = [flag] if flag.startswith("--") else [flag, "--" + p.name]
    if kind.json == "boolean":
        return [click.Option([*decls, p.name], is_flag=True, default=bool(p.default),
                             help=spec.help)]
    given: dict[str, Any] = {} if p.required else {"default": () if many else p.initial()}
    out: list[click.Parameter] = [
        click.Option([*decls, p.name], multiple=many, type=_type(p), required=p.required,
                        metavar=spec.metavar, help=spec.help, show_default=spec.show_default,
                        shell_complete=complete, **given)]
    if spec.pair is not None:
        second, metavar, help = spec.pair
        out.append(click.Option([second, _paired(p)], multiple=True, type=int,
                                metavar=metavar, help=help))
    return out


def _paired(p: Param) -> str:
    return f"{p.name}__paired"


def _type(p: Param) -> click.ParamType[Any]:
    kind = p.kind
    one = kind.alts[0] if kind.alts else kind.items if kind.items is not None else kind
    if one.values:
        return click.Choice(one.values)
    if one.json == "integer":
        low, high = p.spec.minimum, p.spec.maximum
        return click.INT if low is None and high is None else click.IntRange(low, high)
    return click.STRING


def read(cls: type[Q], given: Mapping[str, Any], ctx: click.Context | None = None) -> Q:
    """The request `cls` of click's parsed values `given`."""
    values: dict[str, Any] = {}
    for p in params(cls):
        if p.spec.cli is None:
            continue
        value = given.get(p.name, p.initial())
        if p.spec.after_dashes and ctx is not None:
            value = (*(value or ()), *ctx.meta.get("paths", ()))
        if p.spec.words:
            value = " ".join(value)
        elif p.spec.pair is not None:
            value = _pairs(p, value, given.get(_paired(p), ()))
        elif p.kind.alts:  # text or texts: the texts given, or the empty text
            value = tuple(value) or p.default
        elif p.kind.json == "array":
            value = tuple(value or ())
            items = p.kind.items
            record = items.record if items is not None else None
            if record is not None:
                value = tuple(TEXT_FORMS[record](v) for v in value)
        values[p.name] = value
    request = cls(**values)
    broken = request.usage()
    if broken is not None:
        raise click.UsageError(broken.format(**{p.name: spelled(p) for p in params(cls)}))
    return request


def _pairs(p: Param, first: tuple[str, ...], second: tuple[int, ...]
           ) -> tuple[CommandRun, ...]:
    flag, _, _ = p.spec.pair or ("", "", "")
    if len(first) != len(second):
        raise click.UsageError(f"Give each {p.option} its {flag}, in the same order "
                               f"({len(first)} {p.option}, {len(second)} {flag}).")
    return tuple(CommandRun(c, e) for c, e in zip(first, second, strict=True))


def spelled(p: Param) -> str:
    """An input as the command line names it: its option, or its argument in capitals."""
    if p.spec.positional:
        return (p.spec.metavar or p.name).upper()
    if isinstance(p.spec.cli, Mapping):
        return "/".join(p.spec.cli)
    return p.option
