"""The attack suite's harness: the programs under attack, bounded waits, and
named checks grouped around one program each.

Every wait here is bounded: a hung program fails its check, it never hangs
the suite. Times are multiplied by SCALE (attack.py raises it for sanitizer
builds, whose programs run 2-5x slower); they are generous margins, never
the thing being measured.
"""
import os
import re
import signal
import subprocess
import threading
import time
import traceback

SCALE = 1.0
# How much a program's RSS may grow during an attack: generous for the
# allocator's caches, far below what an unbounded buffer of the attack's
# size would take. attack.py raises it under ASan (its quarantine keeps
# freed memory resident).
RSS_SLACK_KB = 48 * 1024
SANITIZED = False  # attack.py: the programs are ASan/UBSan builds


class Skipped(Exception):
    """Raised by a check that cannot run here; the message says why."""


class CheckFailed(AssertionError):
    """A check's expectation did not hold; the message says which."""


def expect(cond, message):
    if not cond:
        raise CheckFailed(message)


def seconds(t):
    """A timeout of t seconds at normal speed, scaled for slow builds."""
    return t * SCALE


def wait_until(predicate, timeout, what):
    """Polls predicate until it is true; fails with `what` after timeout s."""
    deadline = time.monotonic() + seconds(timeout)
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise CheckFailed(f"{what} (waited {seconds(timeout):.0f} s)")
        time.sleep(0.02)


class Program:
    """A program under attack: its stdout and stderr collected line by line
    by two threads, its fds and RSS read from /proc."""

    def __init__(self, argv, stdin=False, stdout=None, preexec_fn=None):
        """stdout: a file descriptor to give the program instead of a pipe
        collected here (a check that closes the program's stdout itself)."""
        self.argv = argv
        self.proc = subprocess.Popen(
            argv, preexec_fn=preexec_fn,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        self.out_lines, self.err_lines = [], []
        self._lock = threading.Lock()
        self._readers = [self._collect(self.proc.stderr, self.err_lines)]
        if stdout is None:
            self._readers.append(self._collect(self.proc.stdout, self.out_lines))

    def _collect(self, pipe, lines):
        def run():
            for line in iter(pipe.readline, b""):
                with self._lock:
                    lines.append(line)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def stdout(self):
        with self._lock:
            return list(self.out_lines)

    def stderr(self):
        with self._lock:
            return list(self.err_lines)

    def wait_line(self, stream, pattern, timeout=10):
        """The first match of pattern in a line of stream ('out' or 'err')."""
        found = []

        def seen():
            lines = self.stdout() if stream == "out" else self.stderr()
            for line in lines:
                m = re.search(pattern, line.decode(errors="replace"))
                if m:
                    found.append(m)
                    return True
            expect(self.alive(), f"{self.argv[0]} exited ({self.proc.returncode}) "
                                 f"before printing /{pattern}/; stderr: {self.stderr()[-5:]}")
            return False
        wait_until(seen, timeout, f"{self.argv[0]} printed no line matching /{pattern}/")
        return found[0]

    def alive(self):
        return self.proc.poll() is None

    def expect_alive(self, after):
        rc = self.proc.poll()
        expect(rc is None, f"the program died after {after}: {describe_exit(rc)}; "
                           f"last stderr: {self.stderr()[-3:]}")

    def fd_count(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise CheckFailed("no VmRSS in /proc/PID/status")

    def wait_exit(self, timeout):
        """The exit status, or a failure if the program is still running."""
        try:
            rc = self.proc.wait(timeout=seconds(timeout))
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"{self.argv[0]} still running {seconds(timeout):.0f} s later (a hang)")
        for t in self._readers:
            t.join(seconds(5))
        return rc

    def stop(self, sig=signal.SIGINT, timeout=15):
        """Signals the program and waits; kills it if it does not end."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.wait_exit(timeout)
        except CheckFailed:
            self.kill()
            raise

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def tool_help(tool, command):
    """What `tool command --help` prints: which options a program has."""
    return subprocess.run([tool, command, "--help"], capture_output=True, text=True,
                          timeout=seconds(10)).stdout


def describe_exit(rc):
    if rc is None:
        return "still running"
    if rc < 0:
        return f"killed by {signal.Signals(-rc).name}"
    return f"exit code {rc}"


def expect_bounded(prog, before_fds, before_rss, what, fd_slack=2):
    """After an attack: the fd count back near where it was (closes are
    processed asynchronously, so poll) and RSS within RSS_SLACK_KB."""
    wait_until(lambda: prog.fd_count() <= before_fds + fd_slack, 10,
               f"fd count did not come back after {what}: {before_fds} before, "
               f"{prog.fd_count()} now")
    rss = prog.rss_kb()
    expect(rss - before_rss <= RSS_SLACK_KB,
           f"RSS grew by {(rss - before_rss) // 1024} MB during {what} "
           f"({before_rss // 1024} -> {rss // 1024} MB; bound {RSS_SLACK_KB // 1024} MB)")


class Check:
    def __init__(self, name, fn, limit):
        self.name, self.fn, self.limit = name, fn, limit


class Group:
    """Checks against one program: start() launches it, each check attacks
    it, healthy() runs after every check (alive and answering), stop() ends
    it and is a check of its own (a clean shutdown)."""

    name = "group"

    def __init__(self):
        self.checks = []
        self.programs = []

    def spawn(self, argv, **kwargs):
        prog = Program(argv, **kwargs)
        self.programs.append(prog)
        return prog

    def check(self, name, limit=30):
        """Registers fn as check `<group>.<name>`; limit bounds it in seconds
        (scaled)."""
        def register(fn):
            self.checks.append(Check(f"{self.name}.{name}", fn, limit))
            return fn
        return register

    def start(self):
        pass

    def healthy(self, after):
        pass

    def stop(self):
        pass

    def stop_quietly(self):
        for prog in self.programs:
            prog.kill()


class Report:
    """Collects outcomes and prints one line per check, whole, as it ends."""

    def __init__(self):
        self._lock = threading.Lock()
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def add(self, outcome, name, detail="", took=None):
        with self._lock:
            self.counts[outcome] += 1
            when = f" ({took:.1f} s)" if took is not None else ""
            print(f"{outcome:5} {name}{when}{': ' + detail if detail else ''}", flush=True)

    def failed(self):
        return self.counts["FAIL"]


def _bounded(fn, limit):
    """Runs fn in a thread for at most limit s: (error or None, finished)."""
    result = []

    def run():
        try:
            fn()
            result.append(None)
        except CheckFailed as e:
            result.append(str(e))
        except Skipped as e:
            result.append(e)
        except Exception:  # an unexpected error in an attack is a failure too
            result.append(traceback.format_exc(limit=3).strip().replace("\n", " | "))
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds(limit))
    if t.is_alive():
        return f"did not finish within {seconds(limit):.0f} s (hung)", False
    return result[0], True


def _record(report, check, error, took):
    if isinstance(error, Skipped):
        report.add("SKIP", check.name, str(error))
    elif error:
        report.add("FAIL", check.name, error, took)
    else:
        report.add("PASS", check.name, took=took)


def run_group(group, report, selected):
    checks = [c for c in group.checks if selected(c.name)]
    if not checks:
        return
    error, _ = _bounded(group.start, 30)
    if error:
        report.add("FAIL", f"{group.name}.start", error)
        group.stop_quietly()
        return
    for i, check in enumerate(checks):
        begin = time.monotonic()

        def attack_then_health(check=check):
            check.fn()
            group.healthy(after=check.name)
        error, finished = _bounded(attack_then_health, check.limit)
        _record(report, check, error, time.monotonic() - begin)
        if not finished:
            for rest in checks[i + 1:]:
                report.add("FAIL", rest.name, f"not run: {check.name} hung")
            break
    begin = time.monotonic()
    error, _ = _bounded(group.stop, 30)
    _record(report, Check(f"{group.name}.shutdown", group.stop, 30), error,
            time.monotonic() - begin)
    group.stop_quietly()
