#!/usr/bin/python3
"""deploy/local/run.sh as a user runs it: it starts the stack, prints the sample
and waits; Ctrl-C (SIGINT to the whole process group, as a terminal sends it)
or SIGTERM stops it with one line and exit 0, and afterwards no process it
started is left (the old version left a `sleep 3600` behind). Also: when a
service dies on its own, run.sh says so, stops the rest and exits non-zero.
And REFRESH=replay: the replay server and the refresher start too, a refreshed
price reaches the sample answer with its source and age, and Ctrl-C stops all.

usage: run_sh_test.py BUILD_DIR
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.path.abspath(sys.argv[1])
# run.sh keeps each stack's logs in a new directory under TMPDIR for the user
# to read; the test's go into one directory removed when it ends.
LOGS = tempfile.TemporaryDirectory(prefix="run-sh-test.")
passed = failed = 0
T0 = time.monotonic()


def check(name, ok, detail=""):
    global passed, failed
    stamp = f"{time.monotonic() - T0:6.1f}s"
    if ok:
        passed += 1
        print("PASS ", stamp, name)
    else:
        failed += 1
        print("FAIL ", stamp, name, detail)


def session_processes(sid):
    """(pid, command) of every live process in session `sid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            state, session = fields[0], int(fields[3])
            if session == sid and state != "Z":
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found.append((int(entry), f.read().replace(b"\0", b" ").decode().strip()))
        except (OSError, ValueError):
            continue
    return found


def check_nothing_left(sid, name):
    """Checks that session `sid` empties within 5 s; kills what is left."""
    left = []
    for _ in range(50):
        left = session_processes(sid)
        if not left:
            break
        time.sleep(0.1)
    check(name, not left, left)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)


def start(marker="Press Ctrl-C to stop.", **extra_env):
    env = dict(os.environ, BUILD_DIR=BUILD_DIR, PORTS="ephemeral", TMPDIR=LOGS.name, **extra_env)
    # A session of its own, as a terminal would give it; SIGINT not ignored.
    proc = subprocess.Popen(["bash", os.path.join(ROOT, "deploy/local/run.sh")], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    ready = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if marker in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(600):
        proc.kill()
        raise SystemExit("run.sh did not get ready:\n" + "".join(lines[-40:]))
    return proc, lines


def stop_and_check(sig, label, marker="Press Ctrl-C to stop."):
    """Signals run.sh once `marker` is printed: by default when it waits;
    "GPU Advisor is running" signals it while its sample answer is asked."""
    early = marker != "Press Ctrl-C to stop."
    proc, lines = start(marker)
    sid = proc.pid  # session leader
    if not early:
        check(f"{label}: run.sh printed a sample recommendation",
              any(line.startswith("1 ") for line in lines), "".join(lines[-30:]))
    before = session_processes(sid)
    check(f"{label}: the four services run in run.sh's session",
          sum(1 for _, cmd in before if "_server" in cmd) == 4, before)
    mark = len(lines)
    if sig == signal.SIGINT:
        # A terminal's Ctrl-C signals the whole foreground process group:
        # run.sh and every service it started, at once.
        os.killpg(sid, sig)
    else:
        proc.send_signal(sig)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        code = None
    check(f"{label}: run.sh exits 0", code == 0, f"exit {code}")
    time.sleep(0.2)  # the reader thread's last lines
    after = [line.strip() for line in lines[mark:] if line.strip()]
    if early:  # the sample answer being printed finishes first
        check(f"{label}: the last line says it stopped", after and "stopped" in after[-1]
              and not any("exited on its own" in line for line in after), after[-3:])
    else:
        check(f"{label}: one clean line after the signal", len(after) == 1 and "stopped" in after[0]
              and "exited on its own" not in after[0], after)
    check_nothing_left(sid, f"{label}: no process left behind")
    check(f"{label}: says it stopped", any("stopped" in line for line in lines))


stop_and_check(signal.SIGINT, "Ctrl-C")
stop_and_check(signal.SIGTERM, "SIGTERM")
# A SIGTERM that comes before run.sh waits (while its sample answer is asked)
# stops it too, instead of leaving it waiting on services that still run.
stop_and_check(signal.SIGTERM, "SIGTERM while starting", marker="GPU Advisor is running")

# A service that dies on its own ends run.sh with an error, the rest stopped.
proc, lines = start()
sid = proc.pid
gateway = [pid for pid, cmd in session_processes(sid) if "gateway_server" in cmd]
check("crash: gateway found", len(gateway) == 1, session_processes(sid))
for pid in gateway:
    os.kill(pid, signal.SIGKILL)
try:
    code = proc.wait(60)
except subprocess.TimeoutExpired:
    proc.kill()
    code = None
time.sleep(0.5)
check("crash: run.sh exits non-zero", code not in (0, None), f"exit {code}")
check("crash: says a service exited", any("exited on its own" in line for line in lines), "".join(lines[-5:]))
left = session_processes(sid)
check("crash: no process left behind", not left, left)
for pid, _ in left:
    os.kill(pid, signal.SIGKILL)

# REFRESH=replay: the replay server and the refresher start with the stack; the
# refreshed Azure price reaches an answer, named by its source and age in the
# PRICED column; Ctrl-C stops all six processes.
proc, lines = start(REFRESH="replay")
sid = proc.pid
running = session_processes(sid)
check("replay: the replay server and the refresher run in run.sh's session",
      any("replay_server.py" in cmd for _, cmd in running)
      and any("services/refresher/refresher" in cmd for _, cmd in running), running)
text = "".join(lines)
after = text.split("A refreshed price (source azure-retail, replayed)", 1)
rows = [line for line in after[-1].splitlines() if line.startswith("1 ")] if len(after) == 2 else []
check("replay: the sample answer's rank 1 is priced by azure-retail, with its age",
      len(rows) == 1 and " azure " in rows[0] and re.search(r" azure-retail [0-9]+[smhd] ", rows[0]),
      "".join(lines[-30:]))
os.killpg(sid, signal.SIGINT)
try:
    code = proc.wait(60)
except subprocess.TimeoutExpired:
    code = None
check("replay: run.sh exits 0 on Ctrl-C", code == 0, f"exit {code}")
check_nothing_left(sid, "replay: no process left behind (replay server and refresher included)")

print(f"run_sh: {passed} passed, {failed} failed")
LOGS.cleanup()
sys.exit(1 if failed else 0)
