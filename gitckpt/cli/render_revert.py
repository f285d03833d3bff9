"""Text for people of a revert: the files by what happens to them, the patch, what next."""

from __future__ import annotations

import shlex

from gitckpt.cli.render import group, undo_command


def render_revert(r, again: list[str], paths: tuple[str, ...]) -> str:
    d = r.to_dict()
    t = d["target"]
    head = f"{d['label']} of task {t['task']}"
    if t.get("title") and d["label"] == t["label"]:
        head += f": {t['title']}"
    where = f" (only {', '.join(d['paths'])})" if d["paths"] else ""
    c = d["counts"]
    changes = c["create"] + c["modify"] + c["delete"] + c["mode"]
    verb = "Reverted" if r.applied else "Revert"
    lines = [f"{verb} {head}{where} in {d['workspace']}: {changes} clean, {c['conflict']} "
             f"conflict, {c['already']} already, {c['unrestorable']} unrestorable", ""]
    clean = ([f"{p}  (create)" for p in d["create"]] + [f"{p}  (modify)" for p in d["modify"]]
             + [f"{p}  (delete)" for p in d["delete"]] + [f"{p}  (mode)" for p in d["mode"]])
    conflicts = [x["path"] + ("" if x["why"] == "content" else f"  ({x['why']})")
                 for x in d["conflicts"]]
    for kind, rows in (("clean", clean), ("conflict", conflicts), ("already", d["already"]),
                       ("unrestorable", [f"{u['path']}  ({u['reason']})"
                                         for u in d["unrestorable"]]),
                       ("blocked", [f"{b['path']}  ({b['reason']})" for b in d["blocked"]])):
        lines += group(kind, rows, kind)
    if len(lines) > 2:
        lines.append("")
    if r.patch:
        lines += [r.patch.rstrip("\n"), ""]
    if r.applied and r.safety is None:
        lines.append("Nothing was written: the workspace already lacks that change, or what "
                     "would change is left out now.")
    elif r.applied:
        if d["choice"] and d["conflicts"]:
            lines.append(f"Conflicting files settled with --conflicts={d['choice']}.")
        lines.append(f"Safety copy: {r.safety}")
        lines.append(f"Undo with: {undo_command(again, r.safety)}")
    elif d["conflicts"] and not d["choice"]:
        cmd = shlex.join([*again, "--patch", *(["--", *paths] if paths else [])])
        lines.append(f"Nothing was changed. See the conflicts with: {cmd}; then apply with "
                     "--conflicts=markers, ours or theirs.")
    elif _writes(r):
        cmd = shlex.join([*again, "--apply", "--expect", d["plan_id"],
                          *(["--yes"] if r.needs_confirm else []),
                          *(["--", *paths] if paths else [])])
        lines.append(f"Nothing was changed. Apply with: {cmd}")
    elif d["unrestorable"]:
        lines.append("Nothing can be written: the files that change are left out now.")
    else:
        lines.append("Nothing to do: the workspace already lacks that change.")
    return "\n".join(lines) + "\n"


def _writes(r) -> bool:
    """True if the plan writes anything (conflicting files settled by a choice included)."""
    return bool(r.plan.plan.actions)
