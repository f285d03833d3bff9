"""The requests of reading the history: diff, why, blame, explain, search, report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gitckpt.core.ops.fields import KINDS, Kind, task
from gitckpt.core.request import Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from gitckpt.engine.contains import ExplainResult  # noqa: F401
    from gitckpt.engine.report import ReportResult  # noqa: F401
    from gitckpt.engine.search import SearchResult  # noqa: F401
    from gitckpt.engine.why import WhyResult  # noqa: F401
    from gitckpt.service import results  # noqa: F401


@dataclass(frozen=True)
class DiffRequest(Request["results.DiffResult"]):
    """What changed from BASE to TARGET (default: the live workspace) [-- PATH...].

    Each is a step number, head, tip, a commit id prefix, a ref, or `live`."""

    op = "diff"
    command = "diff"
    tool = "ckpt_diff"
    summary = "Paths changed between two points, with line counts. Read-only."

    base: str = arg(brief="Step number, commit id or 'live'.", positional=True,
                    complete="target")
    target: str = arg(brief="", positional=True, complete="target",
                      default="live")
    paths: tuple[str, ...] = arg(brief="", metavar="PATH", path="workspace",
                                 after_dashes=True, default=())
    patch: bool = arg("Print the unified patch, not only the paths.", brief="",
                      default=False)
    task: str | None = task("Count step numbers in this task.")


@dataclass(frozen=True)
class WhyRequest(Request["WhyResult"]):
    """Why these lines are here: the step or drift that last changed each, the tool call and
    the prompt behind it, the step that saved it and the newest command run on a tree that
    holds it. Renames are followed; a restored or reverted line keeps its first origin."""

    op = "why"
    command = "why"
    tool = "ckpt_why"
    summary = "Who wrote these lines and why: the call, prompt, step and checks. Read-only."

    path: str = arg(brief="PATH[:LINE[-LINE]]", positional=True, metavar="PATH[:LINE[-LINE]]",
                    path="workspace")
    task: str | None = task("Read this task's checkpoints (default: active).")
    #: the most lines answered for at once (the MCP tool's; a whole large file is megabytes)
    limit: int | None = arg(cli=None, mcp=False, mcp_default=200, default=None)


@dataclass(frozen=True)
class BlameRequest(Request["WhyResult"]):
    """`git blame` over the task's checkpoints: one line each, the checkpoint that wrote it."""

    op = "blame"
    command = "blame"

    path: str = arg(positional=True, path="workspace")
    task: str | None = task("Read this task's checkpoints (default: active).")
    all_tasks: bool = arg("Every task of this workspace that holds the file: each line's "
                          "earliest checkpoint in any of them, with its task.", cli="--all",
                          default=False)

    def usage(self) -> str | None:
        return "{all_tasks} reads every task: it takes no {task}." \
            if self.all_tasks and self.task else None


@dataclass(frozen=True)
class ExplainRequest(Request["ExplainResult"]):
    """What COMMIT (default HEAD) holds of the agents' work: for each file it changed, the
    task checkpoint where that exact content first appeared, the step that saved it, the
    prompt behind it and what was run on it. Found by content: no hook is needed."""

    op = "explain"
    command = "explain"

    commit: str = arg(positional=True, default="HEAD")


@dataclass(frozen=True)
class SearchRequest(Request["SearchResult"]):
    """Was this tried before? Every task's notes (fetched and imported ones too): titles,
    conclusions, next actions, decisions, gotchas, questions, commands with their exit codes,
    file notes, prompts and tool commands; each word of QUERY must occur ("quoted phrase",
    prefix*), best first (BM25). Words are runs of letters and digits: parse_config is
    `parse config`."""

    op = "search"
    command = "search"
    tool = "ckpt_search"
    summary = "Was it tried before? Every task's notes, best first. Read-only."

    query: str = arg(brief="", positional=True, words=True)
    task: str | None = task("Only this task's notes.")
    kind: tuple[Kind, ...] = arg(
        f"Only fields of this kind; repeatable ({', '.join(KINDS)}).",
        brief="decision, command, ...", metavar="KIND", enum_shown=False, default=())
    since: str | None = arg("Only checkpoints since then: a duration (7d, 12h) or a date.",
                            brief="7d, a date", metavar="WHEN", default=None)
    limit: int = arg("At most this many hits.", mcp=False, minimum=1, maximum=1000,
                     show_default=True, mcp_default=10, default=20)
    split: bool = arg("Let camelCase identifiers match by their parts (parseConfig: parse, "
                      "config).", mcp=False, default=False)


@dataclass(frozen=True)
class ReportRequest(Request["ReportResult"]):
    """A task (default: active) as a reviewer reads it: goal, plan, steps and their
    conclusions, verification bound to trees, decisions, open questions, files changed,
    prompts and tokens. `gitckpt report | gh pr create --body-file -`."""

    op = "report"
    command = "report"

    task: str | None = arg(positional=True, complete="task", default=None)
    format: Literal["markdown", "html"] = arg(
        cli={"--markdown": ("markdown", "Markdown for a pull request's body (default), on "
                                        "stdout."),
             "--html": ("html", "One self-contained HTML page.")}, default="markdown")
    output: str | None = arg("Write it to FILE (a new file, or a file it replaces; never "
                             "inside .git/ or the store); `-` or none: stdout.", cli="-o",
                             metavar="FILE", path="file", default=None)
    open: bool = arg("Open the HTML report in the browser (written to the temporary folder "
                     "without -o).", default=False)
