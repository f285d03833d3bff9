"""`gitckpt demo`: a short agent session played in a throwaway git repository."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gitckpt.core import operations as ops
from gitckpt.core.decode import plan_entry, plan_update
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.shape import Shaped
from gitckpt.service.dispatch import call

_IDENTITY = {"GIT_AUTHOR_NAME": "Demo User", "GIT_AUTHOR_EMAIL": "demo@example.com",
             "GIT_COMMITTER_NAME": "Demo User", "GIT_COMMITTER_EMAIL": "demo@example.com"}


def git_env() -> dict[str, str]:
    """The environment for a git command line: no inherited GIT_* variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args],
                         env={**git_env(), **_IDENTITY}, capture_output=True, text=True,
                         check=True)
    return out.stdout


@dataclass(frozen=True)
class DemoResult(Shaped):
    folder: str
    task: str
    handoff: str
    restore: str
    git_log: str

    @property
    def text(self) -> str:
        rule = "-" * 72
        return (f"gitckpt demo: an agent works on a small project in {self.folder}\n"
                f"(a fresh git repository; it did init, two saves with edits between them, "
                f"then a shell command broke greet.py and README.md was edited)\n\n"
                f"{rule}\n$ gitckpt resume\n{rule}\n{self.handoff}\n"
                f"{rule}\n$ gitckpt restore 2 --apply -- greet.py\n{rule}\n{self.restore}\n"
                f"{rule}\n$ git log --notes=checkpoints refs/checkpoints/{self.task}/head\n"
                f"{rule}\n{self.git_log}\n{rule}\n"
                f"Look around: cd {self.folder} && gitckpt log && git status\n")



def run_demo(where: str | None = None) -> DemoResult:
    if where:
        root = Path(where).expanduser().resolve()
        try:
            if root.exists() and (not root.is_dir() or any(root.iterdir())):
                raise InvalidArgument(f"{root} is not an empty folder.",
                                      "Pass a new or empty folder.")
            root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InvalidArgument(f"Cannot use {root}: {e.strerror}.",
                                  "Pass a new folder in a writable place.") from e
    else:
        root = Path(tempfile.mkdtemp(prefix="gitckpt-demo-"))
    git(root, "init", "-q", "-b", "main")
    (root / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
    (root / "README.md").write_text("# greeter\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first commit")
    (root / ".env").write_text("API_TOKEN=not-a-real-token\n")  # left out: sensitive

    plan = tuple(map(plan_entry, ("Capitalise names", "Add tests", "Document usage")))
    init = call(root, ops.InitRequest("Polish the greeter", "friendlier greetings, with tests",
                                      plan=plan))
    (root / "greet.py").write_text(
        'def greet(name):\n    return "Hello, " + name.capitalize() + "!"\n')
    call(root, ops.SaveRequest(
        "Capitalise names", "greet() capitalises and punctuates", "add tests for empty names",
        plan=tuple(map(plan_update, ("Capitalise names=done", "Add tests=in_progress")))))
    (root / "test_greet.py").write_text(
        "from greet import greet\n\n\ndef test_greet():\n"
        '    assert greet("ada") == "Hello, Ada!"\n')
    call(root, ops.SaveRequest(
        "Add tests", "one test covers the happy path", "document usage in README.md",
        verified=("pytest: 1 passed",), open_questions=("What should greet('') return?",),
        plan=(plan_update("Add tests=done"),)))
    with open(root / "README.md", "a") as f:
        f.write("\nUsage: `greet('ada')`\n")  # an edit the agent has not saved yet
    subprocess.run(["sh", "-c", "echo 'def greet(name): return None' > greet.py"], cwd=root,
                   check=True)  # a shell command gone wrong

    handoff = call(root, ops.ResumeRequest()).text
    preview = call(root, ops.RestoreRequest("2", paths=("greet.py",)))
    done = call(root, ops.RestoreRequest("2", apply=True, paths=("greet.py",),
                                         expect=preview.plan.id))
    restore = (f"The preview listed: modify {', '.join(preview.plan.names('modify'))}; "
               f"README.md was left as it is.\nRestored greet.py from step 2. Safety copy "
               f"{(done.safety or '')[:12]}: `gitckpt restore {(done.safety or '')[:12]} "
               "--apply --yes` undoes it.\n")
    log = git(root, "log", "--notes=checkpoints", f"refs/checkpoints/{init.save.task}/head")
    return DemoResult(str(root), init.save.task, handoff, restore, log)
