"""gitckpt's operations as the in-process benchmarks call them: `service.save(root, "title",
conclusion=...)` opens the workspace at `root` and performs the save request made of the
arguments (core/operations.py), through the same dispatch the per-user service uses."""

from __future__ import annotations

import os
import time
from typing import Any


class _Service:
    def __getattr__(self, op: str) -> Any:
        from gitckpt.core.decode import decode
        from gitckpt.core.operations import OPERATIONS
        from gitckpt.core.request import params, to_json
        from gitckpt.service.dispatch import call

        cls = OPERATIONS[op.rstrip("_")]

        def perform(root: Any, *args: Any, **fields: Any) -> Any:
            given = {**dict(zip((p.name for p in params(cls)), args, strict=False)), **fields}
            data = to_json({k: os.fspath(v) if isinstance(v, os.PathLike) else v
                            for k, v in given.items()})
            return call(root, decode(cls, data), clock=time.time)
        return perform

    @staticmethod
    def open_timeline(root: Any) -> Any:
        from gitckpt.service.workspace import open_workspace

        return open_workspace(root).timeline

    @staticmethod
    def watch(root: Any, **kw: Any) -> Any:
        from gitckpt.core.operations import WatchRequest
        from gitckpt.service import api
        from gitckpt.service.workspace import open_workspace

        return api.watch(open_workspace(root), WatchRequest(kw.pop("task", None)), **kw)

    @staticmethod
    def capture(root: Any, **kw: Any) -> Any:
        from gitckpt.core.operations import CaptureRequest
        from gitckpt.service.dispatch import call

        return call(root, CaptureRequest(kw.get("task")), clock=time.time)


service = _Service()
