"""Text for people of a revert: the files by what happens to them, the patch, what next."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from gitckpt.cli.render import group, undo_command

if TYPE_CHECKING:
    from gitckpt.service.results import RevertResult


def render_revert(r: RevertResult, again: list[str], paths: tuple[str, ...]) -> str:
    rp = r.plan
    t = rp.target
    head = f"{rp.label} of task {t.task}"
    if t.record.note.title and rp.label == t.label:
        head += f": {t.record.note.title}"
    where = f" (only {', '.join(rp.plan.paths)})" if rp.plan.paths else ""
    c = rp.counts
    changes = c["create"] + c["modify"] + c["delete"] + c["mode"]
    verb = "Reverted" if r.applied else "Revert"
    lines = [f"{verb} {head}{where} in {r.workspace}: {changes} clean, {c['conflict']} "
             f"conflict, {c['already']} already, {c['unrestorable']} unrestorable", ""]
    clean = ([f"{p}  (create)" for p in rp.create] + [f"{p}  (modify)" for p in rp.modify]
             + [f"{p}  (delete)" for p in rp.delete] + [f"{p}  (mode)" for p in rp.mode])
    conflicts = [x.path + ("" if x.why == "content" else f"  ({x.why})") for x in rp.conflicts]
    for kind, rows in (("clean", clean), ("conflict", conflicts), ("already", list(rp.already)),
                       ("unrestorable", [f"{u.path}  ({u.reason})"
                                         for u in rp.plan.unrestorable]),
                       ("blocked", [f"{b.path}  ({b.reason})" for b in r.blocked])):
        lines += group(kind, rows, kind)
    if len(lines) > 2:
        lines.append("")
    if r.patch:
        lines += [r.patch.rstrip("\n"), ""]
    if r.applied and r.safety is None:
        lines.append("Nothing was written: the workspace already lacks that change, or what "
                     "would change is left out now.")
    elif r.applied and r.safety is not None:
        if rp.choice and rp.conflicts:
            lines.append(f"Conflicting files settled with --conflicts={rp.choice}.")
        lines.append(f"Safety copy: {r.safety}")
        lines.append(f"Undo with: {undo_command(again, r.safety)}")
    elif rp.conflicts and not rp.choice:
        cmd = shlex.join([*again, "--patch", *(["--", *paths] if paths else [])])
        lines.append(f"Nothing was changed. See the conflicts with: {cmd}; then apply with "
                     "--conflicts=markers, ours or theirs.")
    elif _writes(r):
        cmd = shlex.join([*again, "--apply", "--expect", rp.id,
                          *(["--yes"] if r.needs_confirm else []),
                          *(["--", *paths] if paths else [])])
        lines.append(f"Nothing was changed. Apply with: {cmd}")
    elif rp.plan.unrestorable:
        lines.append("Nothing can be written: the files that change are left out now.")
    else:
        lines.append("Nothing to do: the workspace already lacks that change.")
    return "\n".join(lines) + "\n"


def _writes(r: RevertResult) -> bool:
    """True if the plan writes anything (conflicting files settled by a choice included)."""
    return bool(r.plan.plan.actions)
