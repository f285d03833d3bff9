"""The drift watcher measured from outside: a real `gitckpt watch` process on a workspace.

Figures: the time from the last write of a burst of 1,000 file writes to the drift commit
existing (the quiet period plus one incremental snapshot), and the watcher's CPU and memory
while idle and through the burst, read from /proc (Linux).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

QUIET = 2.0
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_mib(pid: int, key: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def drift_tip(root: Path) -> str | None:
    out = subprocess.run(["git", "-C", str(root), "for-each-ref", "--format=%(objectname)",
                          "refs/checkpoints/*/drifts/*"], capture_output=True, text=True)
    return out.stdout.strip() or None


def bench_watch(root: Path, files: list[Path], env: dict, bursts: int = 3) -> dict[str, float]:
    """Start `gitckpt watch` on `root` (which has an active task), measure, stop it."""
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "-C", str(root), "watch"],
                            env={**env, "GITCKPT_QUIET": str(QUIET)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready = proc.stderr.readline()  # "Watching ... (events); Ctrl-C stops."
        if "events" not in ready:
            raise RuntimeError(f"watcher did not start on events: {ready!r}")
        time.sleep(QUIET + 1)
        idle_cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(10)
        idle = {"idle_cpu_pct": 100 * (cpu_seconds(proc.pid) - idle_cpu0)
                / (time.monotonic() - t0), "idle_rss": rss_mib(proc.pid)}
        latencies, burst_cpu = [], []
        for b in range(bursts):
            before, cpu0 = drift_tip(root), cpu_seconds(proc.pid)
            for f in files[:1000]:
                with open(f, "a") as fh:
                    fh.write(f"burst {b}\n")
            last_write = time.monotonic()
            while drift_tip(root) == before:
                if time.monotonic() - last_write > 60:
                    raise RuntimeError("no drift within 60 s of the burst")
                time.sleep(0.01)
            latencies.append(time.monotonic() - last_write)
            time.sleep(0.5)
            burst_cpu.append(cpu_seconds(proc.pid) - cpu0)
        latencies.sort()
        burst_cpu.sort()
        return {**idle, "latency": latencies[len(latencies) // 2] * 1000,
                "burst_cpu": burst_cpu[len(burst_cpu) // 2] * 1000,
                "peak_rss": rss_mib(proc.pid, "VmHWM")}
    finally:
        proc.terminate()
        proc.wait(10)
