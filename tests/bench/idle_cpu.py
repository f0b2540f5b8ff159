#!/usr/bin/env python3
"""CPU the desktop app uses while nothing generates, per page, offscreen.

  python3 tests/bench/idle_cpu.py [--app build/bin/weir] [--pages chat,monitor]
                                  [--seconds 30] [--settle 15] [--model FILE]
                                  [--display offscreen|xvfb]

For each page: starts the app on a fresh data folder (WEIR_DATA_DIR) with
WEIR_START_PAGE=<page>, offscreen (QT_QPA_PLATFORM=offscreen, Qt Quick's
software path) or on a private Xvfb display (xcb with Mesa's llvmpipe, as a
desktop without a GPU draws it, where each frame costs more), waits --settle seconds
for the model to load and the window to settle, then reads the process's
user+system time from /proc/PID/stat at the start and the end of --seconds
and prints one JSON object: per page, the CPU used as a percentage of one
core over that span (100 = one core busy all the time).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces: fields start after its ')'.
        fields = f.read().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / TICKS


class Xvfb:
    """A private X display for the run (Xvfb -displayfd picks a free number)."""

    def __enter__(self):
        read, write = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                                     pass_fds=(write,), stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise SystemExit("Xvfb did not start")
        self.display = ":" + number
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait()


def measure(app, page, model, settle, seconds, display):
    if display == "xvfb":
        with Xvfb() as x:
            return run_app(app, page, model, settle, seconds, {"QT_QPA_PLATFORM": "xcb", "DISPLAY": x.display})
    return run_app(app, page, model, settle, seconds, {"QT_QPA_PLATFORM": "offscreen"})


def run_app(app, page, model, settle, seconds, platform):
    with tempfile.TemporaryDirectory(prefix="weir-idle-") as data:
        env = dict(os.environ, WEIR_DATA_DIR=data, WEIR_START_PAGE=page, **platform)
        cmd = [app] + (["--model", model] if model else [])
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(settle)
            if proc.poll() is not None:
                raise SystemExit(f"{app} exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
            start_cpu, start_wall = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(seconds)
            used, wall = cpu_seconds(proc.pid) - start_cpu, time.monotonic() - start_wall
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return {"cpu_seconds": round(used, 3), "wall_seconds": round(wall, 2),
            "percent_of_one_core": round(100.0 * used / wall, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", default=os.path.join(ROOT, "build", "bin", "weir"))
    parser.add_argument("--pages", default="chat,monitor")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=15.0)
    parser.add_argument("--model", default="", help="GGUF to load (default: the app's default model)")
    parser.add_argument("--display", choices=["offscreen", "xvfb"], default="offscreen")
    args = parser.parse_args()
    if not os.access(args.app, os.X_OK):
        sys.exit(f"no app at {args.app}: build the 'weir' target first")
    if args.seconds <= 0 or args.settle < 0:
        sys.exit("--seconds must be positive and --settle not negative")
    pages = [p for p in args.pages.split(",") if p]
    result = {"app": args.app, "display": args.display, "seconds": args.seconds, "settle": args.settle,
              "pages": {page: measure(args.app, page, args.model, args.settle, args.seconds, args.display)
                        for page in pages}}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
