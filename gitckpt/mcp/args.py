"""The schemas an agent reads before its first call, lean: no pydantic `title` keys, no empty
defaults, one-space descriptions (and none on single fields of output schemas), `X | None`
as an X that may be null."""

from __future__ import annotations

from typing import Any


def lean(schema: Any, *, output: bool = False) -> Any:
    """`schema` as an agent needs it, which every session pays for before its first call."""
    if isinstance(schema, list):
        return [lean(v, output=output) for v in schema]
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
        out[k] = {n: lean(p, output=output) for n, p in v.items()} if k == "properties" \
            else lean(v, output=output)
    return out
