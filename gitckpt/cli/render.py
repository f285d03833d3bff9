"""Text rendering of service results for the CLI (the `--json` output is `to_dict()`)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from gitckpt.core.hints import BLANK, CLI, call

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gitckpt.core.values import Skipped
    from gitckpt.engine.compress import CompressResult
    from gitckpt.engine.doctor import DoctorResult
    from gitckpt.engine.records import DriftResult, SaveResult, TaskInfo
    from gitckpt.service.results import (
        DiffResult,
        InitResult,
        LogResult,
        RestoreResult,
        ScopeResult,
        TasksResult,
    )
    from gitckpt.transfer.migrate import MigrateResult
    from gitckpt.transfer.package import ExportResult, ImportResult


def _cmd(op: str, **args: object) -> str:
    """The command that comes next, as core/hints spells every suggestion."""
    return call(op, **args).spell(CLI)


def _skipped_lines(skipped: Sequence[Skipped], new: Sequence[str] | None = None) -> str:
    """The files a snapshot left out that the step before did not (`new`; all by default),
    said once each, and how to keep one (every save repeated the same list)."""
    if new is not None:
        fresh = set(new)
        skipped = [s for s in skipped if s.path in fresh]
    if not skipped:
        return ""
    shown = ", ".join(f"{s.path} ({s.reason})" for s in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    keep = shlex.quote("!" + skipped[0].path)
    return (f"Left out {len(skipped)} file(s): {shown}{more}. To keep one: "
            f"echo {keep} >> .ckptignore (gitckpt scope {shlex.quote(skipped[0].path)} "
            "says why it is out).\n")


def render_init(r: InitResult) -> str:
    s = r.save
    out = f"Started task {s.task} ({r.name}); step 0 is {s.commit[:7]}, now active.\n"
    where = f"refs/checkpoints/{s.task}/ in this repository (git log " \
        f"refs/checkpoints/{s.task}/head)" if r.store == "git" else \
        f"the store {r.location} (git --git-dir={r.location} log refs/checkpoints/{s.task}/head)"
    out += f"Its checkpoints are kept under {where}.\n"
    if r.suspended:
        out += (f"Task {r.suspended}, active until now, is suspended; "
                f"{_cmd('switch', task=r.suspended)} makes it active again.\n")
    out += _skipped_lines(s.skipped)
    if s.redacted:
        out += f"Redacted {s.redacted} secret value(s) from the text.\n"
    step = _cmd("save", title=BLANK, conclusion=BLANK, next=BLANK)
    return out + f"Save each finished step: {step}\n"


def render_save(r: SaveResult) -> str:
    if r.idempotent:
        return (f"Nothing new since step {r.step} of {r.task} (same title, conclusion, next, "
                f"verified and files); no commit written.\n")
    ch = r.changes
    out = (f"Saved step {r.step} of {r.task} as {r.commit[:7]}: {len(ch.added)} added, "
           f"{len(ch.modified)} modified, {len(ch.deleted)} deleted.\n")
    out += _skipped_lines(r.skipped, r.newly_skipped)
    if r.redacted:
        out += f"Redacted {r.redacted} secret value(s) from the text.\n"
    if r.closed:
        out += f"Task {r.task} is closed; it is read-only from now on.\n"
    return out


def render_log(r: LogResult) -> str:
    """Newest first; the drifts after a step are listed above it, indented."""
    out = [f"{r.info.id}  {r.info.meta.name}  ({r.info.status})"]
    for s in reversed(r.steps):
        for d in reversed(r.after.get(s.n, [])):
            n = d.note
            paths = d.changed.paths()
            shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
            # (`run`'s drift holds the edits made before the command ran, not its own)
            trigger = "before a run" if n.trigger == "run" else n.trigger
            what = n.title if n.kind == "restore" else (
                f"drift ({trigger}{', partial' if n.partial else ''}"
                f"{': ' + str(n.tool.get('name')) if n.tool else ''})")
            out.append(f"       {d.commit[:7]}  {n.created_at}  {what}: "
                       f"{len(paths)} file(s)" + (f" ({shown})" if shown else ""))
        n = s.note
        out.append(f"  {n.step:>3}  {s.commit[:7]}  {n.created_at}  {n.title}"
                   + ("  [closed]" if n.closed else ""))
        if n.conclusion:
            out.append(f"                 conclusion: {n.conclusion}")
        if n.next:
            out.append(f"                 next: {n.next}")
        if r.full:
            out += [f"                 {label}: {v}" for label, values in (
                ("verified", n.verified), ("decision", n.decisions),
                ("open", n.open_questions)) for v in values]
    if r.more:
        out.append(f"  ... {r.more} older step(s): {_cmd('log', before=r.steps[0].n)}"
                   if r.steps else f"  ... {r.more} older step(s)")
    return "\n".join(out) + "\n"


def render_scope(r: ScopeResult) -> str:
    """One line per path: in or out, the reason, the rule, the path (as git check-ignore -v)."""
    lines = []
    for d in r.paths:
        lines.append(f"{'in ' if d.in_scope else 'out'}  {d.reason:<12}  {d.path}"
                     + (f"  ({d.rule})" if d.rule else ""))
    return "\n".join(lines) + "\n"


def render_tasks(r: TasksResult) -> str:
    if not r.tasks:
        return f"No tasks yet. Start one with {_cmd('init', name=BLANK, goal=BLANK)}.\n"
    width = max(len(t.id) for t in r.tasks)
    out = [f"  {'TASK':<{width}}  {'STATUS':<9}  {'STEPS':>5}  {'LAST ACTIVITY':<20}  NAME"]
    for t in r.tasks:
        mark = "*" if t.status == "active" else " "
        out.append(f"{mark} {t.id:<{width}}  {t.status:<9}  {t.head.n:>5}  "
                   f"{t.summary.last_activity:<20}  {t.meta.name}")
    return "\n".join(out) + "\n"


# Each kind's colour as click.style(fg=...) writes it (green 32, yellow 33, red 31, cyan 36,
# magenta 35, blue 34), without importing click: `gitckpt save` renders without it.
_STYLE = {"create": 32, "modify": 33, "delete": 31, "mode": 36, "unrestorable": 35,
          "kept": 34, "blocked": 35, "clean": 32, "conflict": 31, "already": 34}
_SHOWN = 25  # paths listed per group; --json has them all


def group(kind: str, rows: list[str], verb: str) -> list[str]:
    """Paths of one kind, each tagged with `verb` in its colour; _SHOWN at most."""
    if not rows:
        return []
    tag = f"\x1b[{_STYLE[kind]}m{verb:<12}\x1b[0m"
    out = [f"  {tag}{row}" for row in rows[:_SHOWN]]
    if len(rows) > _SHOWN:
        out.append(f"  {'':<12}... and {len(rows) - _SHOWN} more (--json lists all)")
    return out


def _counts(c: dict[str, int], done: bool) -> str:
    verbs = (("create", "created", "to create"), ("modify", "modified", "to modify"),
             ("delete", "deleted", "to delete"), ("mode", "mode changed", "mode changes"))
    parts = [f"{c[k]} {past if done else future}" for k, past, future in verbs if c[k]]
    return ", ".join(parts) or "no file changes"


def undo_command(again: list[str], safety: str) -> str:
    """The command that restores an apply's safety copy, runnable as printed: the same `-C`
    and `--task` as the apply (`again`: gitckpt [-C ROOT] VERB TARGET [--task ID] ...), and
    `--yes` (the undo rewrites as many files as the apply did)."""
    at = 3 if again[1:2] == ["-C"] else 1
    rest = again[at + 2:]
    task = rest[rest.index("--task"):][:2] if "--task" in rest else []
    return shlex.join([*again[:at], "restore", str(safety)[:12], *task, "--apply", "--yes"])


def render_restore(r: RestoreResult, again: list[str], paths: tuple[str, ...]) -> str:
    """The plan (counts, then paths by action), the patch if asked, and what to do next."""
    p = r.plan
    t = p.target
    head = f"{t.label} ({t.commit[:7]}) of task {t.task}"
    if t.record.note.title:
        head += f": {t.record.note.title}"
    where = f" (only {', '.join(p.paths)})" if p.paths else ""
    counts = p.counts
    lines = [f"{'Restored' if r.applied else 'Restore'} {head}{where} in {r.workspace}: "
             f"{_counts(counts, r.applied)}",
             f"  {counts['unrestorable']} unrestorable, {counts['kept']} kept", ""]
    lines += group("create", p.create, "create")
    lines += group("modify", p.modify, "modify")
    lines += group("delete", p.delete, "delete")
    lines += group("mode", p.mode, "mode")
    lines += group("unrestorable", [f"{u.path}  ({u.reason})" for u in p.unrestorable],
                   "cannot")
    lines += group("kept", [f"{k.path}  ({k.reason})" for k in p.kept], "kept")
    lines += group("blocked", [f"{b.path}  ({b.reason})" for b in r.blocked], "not written")
    if len(lines) > 3:
        lines.append("")
    if r.patch:
        lines.append(r.patch.rstrip("\n"))
        lines.append("")
    if r.applied and r.safety is None:
        lines.append("The workspace already matches; nothing was written.")
    elif r.applied and r.safety is not None:  # (not None: the branch above took that)
        covers = (f" (holds {', '.join(p.paths)} exactly as they were; other files as "
                  "last seen)") if p.paths else ""
        lines.append(f"Safety copy: {r.safety}{covers}")
        lines.append(f"Undo with: {undo_command(again, r.safety)}")
        if r.blocked:
            lines.append("Some paths were not written (above); everything else was restored.")
    elif any(counts[k] for k in ("create", "modify", "delete", "mode")):
        # --expect: the apply refuses any other plan (the files moved since this preview)
        cmd = shlex.join([*again, "--apply", "--expect", r.plan.id,
                          *(["--yes"] if r.needs_confirm else []),
                          *(["--", *paths] if paths else [])])
        if r.needs_confirm:
            lines.append("This restore deletes or rewrites many files: check the workspace "
                         "path above; the apply needs --yes.")
        lines.append(f"Nothing was changed. Apply with: {cmd}")
    else:
        lines.append("The workspace already matches; nothing to restore.")
    return "\n".join(lines) + "\n"


_MARK = {"added": "A", "modified": "M", "deleted": "D", "mode": "m", "type": "T"}


def render_diff(r: DiffResult) -> str:
    def name(side: dict[str, Any]) -> str:
        label: str = side["label"]
        return label + (f" ({side['commit'][:7]})" if side.get("commit") else "")
    lines = [f"{name(r.base)} -> {name(r.target)}: {len(r.files)} files, "
             f"+{r.additions} -{r.deletions}"]
    width = max((len(f.path) for f in r.files), default=0)
    for f in r.files:
        counts = "binary" if f.additions is None else f"+{f.additions} -{f.deletions}"
        if f.status == "mode":
            counts = f"mode {f.old.mode:o} -> {f.new.mode:o}" if f.old and f.new else ""
        lines.append(f"  {_MARK[f.status]}  {f.path:<{width}}  {counts}")
    if r.patch:
        lines += ["", r.patch.rstrip("\n")]
    return "\n".join(lines) + "\n"


def render_capture(r: DriftResult) -> str:
    if not r.recorded:
        return f"No change since {r.commit[:7]} (task {r.task}); nothing recorded.\n"
    ch = r.changes
    partial = " (partial: files were still changing)" if r.partial else ""
    return (f"Recorded drift {r.commit[:7]} after step {r.after_step} of {r.task}{partial}: "
            f"{len(ch.added)} added, {len(ch.modified)} modified, {len(ch.deleted)} deleted.\n")


def render_switch(t: TaskInfo) -> str:
    return f"Task {t.id} ({t.meta.name}) is active again, at step {t.head.n}.\n"


def render_export(r: ExportResult) -> str:
    return (f"Exported task {r.task} ({r.steps} steps, {r.objects} objects, "
            f"{r.bytes / 2**20:.1f} MiB) to {r.path}\n"
            f"Continue elsewhere with: {_cmd('import', package=str(r.path))}\n")


def render_import(r: ImportResult) -> str:
    if r.dry_run:
        return (f"The package holds task {r.task} ({r.name}): {r.steps} steps, {r.objects} "
                "objects; every check passed. Nothing was written; import it with the same "
                "command without --dry-run.\n")
    renamed = f" (as {r.task})" if r.task != r.source_task else ""
    out = (f"Imported task {r.source_task}{renamed}: {r.steps} steps, {r.objects} objects "
           f"({r.new_objects} new). It is the active task; run {_cmd('resume')}.\n")
    return out + ("" if r.checkout is None else "Its head's files:\n" +
                  render_restore(r.checkout, [], ()))


def render_compress(r: CompressResult) -> str:
    verb = "Would drop" if r.dry_run else "Dropped"
    chains = r.eligible if r.dry_run else r.dropped
    packed = (f"Packed {r.packed_objects} loose object(s) and {r.packed_refs} loose ref(s) "
              "of the checkpoints.\n") if r.packed_objects or r.packed_refs else ""
    if not chains and not r.transcripts:
        return f"{packed}Nothing to drop: {r.why_nothing}.\n"
    lines = [f"{verb} {len(chains)} drift chain(s), {sum(c.drifts for c in chains)} drift(s):"]
    lines += [f"  {c.task} after step {c.after_step}: {c.drifts} drift(s), newest {c.newest}"
              for c in chains[:20]]
    if r.transcripts:
        lines.append(f"{verb} the kept transcripts of {r.transcripts} old step(s).")
    if r.bytes_freed:
        lines.append(f"Freed {r.bytes_freed / 2**20:.1f} MiB.")
    if r.bytes_freeable:
        lines.append(f"{r.bytes_freeable / 2**20:.1f} MiB of objects are only reachable from "
                     f"these drifts{'' if r.dry_run else '; your own git gc reclaims them'}.")
    lines.append(f"Kept {len(r.kept)} chain(s); steps are never touched.")
    return packed + "\n".join(lines) + "\n"


def render_doctor(r: DoctorResult) -> str:
    lines = [f"Store {r.store} ({r.kind}, {r.tasks} task(s)); checked "
             f"{', '.join(r.checked)}; watcher {r.watch}."]
    if r.loose is not None:
        lines.append(f"Objects: {r.loose:,} loose, {r.packs} pack(s); the checkpoints' own "
                     f"are packed each time {r.pack_at:,} more pile up (and by "
                     "`gitckpt compress`).")
    for f in r.findings:
        mark = "fixed" if f.fixed else "!"
        lines += [f"  {mark} [{f.check}] {f.problem}", f"      fix: {f.fix}"]
    lines.append("No problems found." if not r.findings else
                 "Everything found was fixed." if r.healthy else
                 "Problems found; see the fixes above.")
    return "\n".join(lines) + "\n"


def render_migrate(r: MigrateResult) -> str:
    lines = [f"Imported from {r.source} ({r.path}):"]
    for t in r.tasks:
        skipped = f"; {len(t.skipped)} file(s) left out" if t.skipped else ""
        lines.append(f"  {t.task}  {t.steps} steps  {t.name}{skipped}")
    if r.active:
        lines.append(f"Task {r.active} is active; `{_cmd('resume')}` says where it stands.")
    return "\n".join(lines) + "\n"
