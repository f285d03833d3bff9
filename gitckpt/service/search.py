"""What the tasks learned, asked across all of them and shown to a reviewer: the search of
every task's notes and the report of one task (Markdown for a pull request, one HTML page)."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.operations import ReportRequest, SearchRequest
from gitckpt.engine.records import parse_time, rfc3339
from gitckpt.service.workspace import Workspace

if TYPE_CHECKING:
    from gitckpt.engine.report import ReportResult
    from gitckpt.engine.search import SearchResult


def since_time(text: str | None, now: float | None = None) -> str | None:
    """`--since`: a duration back from now (7d, 12h) or a date or time (2026-11-30, ISO 8601),
    as the rfc3339 time the notes' `created_at` is compared with."""
    if text is None:
        return None
    from gitckpt.engine.compress import parse_duration

    hint = "For example --since 7d or --since 2026-11-30."
    try:
        if re.fullmatch(r"\s*[0-9]+(?:\.[0-9]+)?\s*[smhdw]?\s*", text.lower()):
            return rfc3339(max((now if now is not None else time.time())
                               - parse_duration(text), 0))
        at = parse_time(text)
        if at is None:
            raise InvalidArgument(f"--since {text[:40]!r} is neither a duration nor a date.",
                                  hint)
        return rfc3339(at)
    except (ValueError, OverflowError, OSError) as e:  # a year 0 or 10000 in UTC
        raise InvalidArgument(f"--since {text[:40]!r} is out of range ({e}).", hint) from e


def search(ws: Workspace, r: SearchRequest) -> SearchResult:
    """Every task's note fields (titles, conclusions, next actions, decisions, gotchas,
    questions, commands with their exit codes, file notes, prompts, tool commands) that hold
    each word of `query`, best first; the index is brought up to date first."""
    from gitckpt.engine import search as searching

    return searching.search(ws.timeline, r.query, task=r.task, kinds=list(r.kind) or None,
                            since=since_time(r.since), limit=r.limit, split=r.split)


def report(ws: Workspace, r: ReportRequest) -> ReportResult:
    """The active task (or `task`) as a reviewer reads it: Markdown for a pull request's
    body, or one self-contained HTML page."""
    from gitckpt.engine import report as reporting
    from gitckpt.engine.report_html import page

    tl = ws.timeline
    tid = tl.resolve(r.task)
    facts = reporting.gather(tl, tid)
    html = r.format == "html" or r.open
    return reporting.ReportResult(str(tid), "html" if html else "markdown",
                                  page(facts) if html else reporting.markdown(facts))
