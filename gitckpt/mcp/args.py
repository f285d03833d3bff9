"""How tool calls enter the MCP server: strict arguments with one-sentence errors, lean schemas,
and the closest tool for a misspelled name."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from gitckpt.core import shape
from gitckpt.core.errors import GitckptError, InvalidArgument

_EXAMPLE = {"string": '"text"', "boolean": "true", "integer": "3", "array": '["a", "b"]',
            "object": "{...}"}
_PYTHON = {"string": str, "boolean": bool, "integer": int, "array": list, "object": dict}


def strict(tool: str, schema: dict, arguments: dict) -> dict:
    """Strict where a mistake loses work, forgiving where it cannot: an unknown argument is
    refused with the closest real one (a misspelled `conclusion` must not save a step without
    it), a boolean must be a boolean (`"yes"` must not close a task), and a step number may
    be an integer where a string is expected."""
    props = schema.get("properties", {})
    for key in arguments:
        if key not in props:
            close = difflib.get_close_matches(key, list(props), 1, 0.5)
            guess = f' Did you mean "{close[0]}"?' if close else ""
            raise InvalidArgument(f'{tool} has no argument "{key}".{guess}',
                                  f"Its arguments are {', '.join(props)}.")
    for key, value in list(arguments.items()):
        want = props[key].get("type")
        if want == "string" and isinstance(value, int) and not isinstance(value, bool):
            arguments[key] = str(value)  # target=1 is step 1
            continue
        if want == "integer" and isinstance(value, str) and value.strip().isdigit():
            arguments[key] = int(value)  # step="3" is step 3
            continue
        kind = _PYTHON.get(want)
        if kind is None or value is None:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _wrong_type(tool, key, want, value)
    return arguments


def _wrong_type(tool: str, key: str, want: str, value: object) -> InvalidArgument:
    article = "an" if want[0] in "aeiou" else "a"
    return InvalidArgument(f"{key} takes {article} {want}, not {json.dumps(value)[:40]}.",
                           f"For example {tool}({key}={_EXAMPLE[want]}).")


def _rejected(tool: str, schema: dict, e: ValidationError) -> InvalidArgument:
    """pydantic's refusal (a missing argument, a plan entry's status) as one sentence and a
    correct example, not pydantic's text with its link."""
    err = e.errors()[0]
    loc = [str(p) for p in err["loc"]]
    top = loc[0] if loc else ""
    want = schema.get("properties", {}).get(top, {}).get("type")
    example = _EXAMPLES.get(top) or (f"{top}={_EXAMPLE[want]}" if want in _EXAMPLE else "...")
    if err["type"] == "missing":
        message = f"{tool} needs {'.'.join(loc)}."
    else:
        msg = err["msg"]
        message = f"{'.'.join(loc) or 'An argument'} of {tool} is not valid: " \
                  f"{msg[:1].lower()}{msg[1:]}."
    return InvalidArgument(message, f"For example {tool}({example}).")


# Examples of the structured arguments, which a type name alone does not explain.
_EXAMPLES = {"plan": 'plan=[{"item": "Write the parser", "status": "done"}]'}


def _lean(schema, *, output: bool = False):
    """`schema` as an agent needs it, which every session pays for before its first call:
    no pydantic `title` keys, `X | None = None` as an optional X, no empty defaults, one-space
    descriptions (and none on single fields of output schemas)."""
    if isinstance(schema, list):
        return [_lean(v, output=output) for v in schema]
    if not isinstance(schema, dict):
        return schema
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        kept = next(a for a in any_of if a != {"type": "null"})
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        if schema.get("default", 0) is None:  # an optional argument: leave it out for none
            schema = {**rest, **kept}
        elif output and set(kept) == {"type"}:  # a result field that may be null
            schema = {**rest, "type": [kept["type"], "null"]}
    out = {}
    for k, v in schema.items():
        if k == "title" and isinstance(v, str):
            continue
        if output and (k, v) in (("additionalProperties", True), ("items", {})):
            continue  # JSON Schema's defaults
        if k == "default" and v in ("", [], False, None):
            continue
        if k == "description" and isinstance(v, str):
            if output and "type" in schema:
                continue
            v = " ".join(v.split())
        out[k] = {n: _lean(p, output=output) for n, p in v.items()} if k == "properties" \
            else _lean(v, output=output)
    return out


def _inline(schema, defs: dict):
    """`schema` with each `{"$ref": "#/$defs/X"}` replaced by X itself (some clients do not
    follow references, and one use of a shape costs less inline)."""
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/") and ref[8:] in defs:
        return _inline(defs[ref[8:]], defs)
    return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}


def lean_schemas(server: MCPServer) -> None:
    for tool in server._tool_manager.list_tools():
        tool.parameters = _lean(_inline(tool.parameters, tool.parameters.get("$defs", {})))
        tool.description = " ".join((tool.description or "").split())
        meta = tool.fn_metadata
        if meta.output_schema is not None:
            object.__setattr__(meta, "output_schema", _lean(meta.output_schema, output=True))


def publish_outputs(server: MCPServer, outputs: dict[str, tuple[type, ...]]) -> None:
    """Each tool's output schema, derived from the result types it answers with: the keys
    their `to_dict()` writes, so the schema cannot drift from the structured content. (The
    tools return a CallToolResult, for which the SDK derives none; clients such as the
    Python SDK's validate the structured content against it.)"""
    tools = {t.name: t for t in server._tool_manager.list_tools()}
    if set(tools) != set(outputs):
        raise RuntimeError(f"tools without result types: {sorted(set(tools) ^ set(outputs))}")
    for name, types in outputs.items():
        object.__setattr__(tools[name].fn_metadata, "output_schema",
                           _lean(shape.schema(*types), output=True))


def annotate(server: MCPServer, table: dict[str, tuple[bool, bool, bool, bool]]) -> None:
    """Each tool's annotations from `table` (read_only, destructive, idempotent, open_world),
    only the hints that differ from the spec's defaults: a read-only tool says nothing of
    destruction or idempotence, which the spec defines for tools that write."""
    tools = {t.name: t for t in server._tool_manager.list_tools()}
    if set(tools) != set(table):
        raise RuntimeError(f"tools without annotations: {sorted(set(tools) ^ set(table))}")
    for name, (read_only, destructive, idempotent, open_world) in table.items():
        writes = not read_only
        tools[name].annotations = ToolAnnotations(
            read_only_hint=True if read_only else None,
            destructive_hint=False if writes and not destructive else None,
            idempotent_hint=True if writes and idempotent else None,
            open_world_hint=False if not open_world else None)


def check_calls(server: MCPServer, on_error: Callable[[GitckptError], object]) -> None:
    """Every call's name and arguments are checked before the SDK sees them; a refusal is
    `on_error(InvalidArgument)`: an unknown tool gets the closest real one and the list, an
    argument the checks above or pydantic reject gets one sentence and an example. (The SDK
    refuses these inside its tool manager, so the check is installed there.)"""
    manager = server._tool_manager
    original = manager.call_tool

    async def call_tool(name, arguments, context, convert_result=False):
        tool = manager.get_tool(name)
        try:
            if tool is None:
                names = sorted(t.name for t in manager.list_tools())
                close = difflib.get_close_matches(name, names, 1, 0.5)
                guess = f' Did you mean "{close[0]}"?' if close else ""
                raise InvalidArgument(f"Unknown tool {name!r}.{guess}",
                                      f"gitckpt's tools are {', '.join(names)}; start with "
                                      "ckpt_resume.")
            arguments = strict(name, tool.parameters, dict(arguments or {}))
            try:
                return await original(name, arguments, context, convert_result=convert_result)
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    raise _rejected(name, tool.parameters, e.__cause__) from e
                raise
        except InvalidArgument as e:
            return on_error(e)

    manager.call_tool = call_tool
