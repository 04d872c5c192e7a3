"""The mlsys binary as the bench scripts drive it: one class for solve (with --stats), bound,
evaluate, generate and --print-config, the --stats reader, and a cache of `mlsys bound`."""
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .common import BUILD_HINT, fnum, file_sha1, stem


class MlsysError(Exception):
    """The binary is missing, or a command of it failed (the message says which and why)."""


def read_stats(path):
    """(stats dict, None) of a `solve --stats` file, or (None, why) when it is missing or unreadable."""
    try:
        with open(path) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"
    if not isinstance(st, dict):
        return None, "not a JSON object"
    return st, None


def seconds_arg(s):
    """A --seconds value as mlsys reads it (2, 0.5, 1e-05)."""
    short = f"{s:g}"
    return short if float(short) == float(s) else repr(float(s))


class Evaluation:
    """`mlsys evaluate --json` of one schedule: valid (the JSON says so and the exit code is 0),
    latency (total_latency), rule and reason (of an invalid one), warnings (their number), rc,
    doc (the parsed JSON, {} if none) and error (why the JSON could not be had, else None)."""

    def __init__(self, valid, latency, rule="", reason="", warnings=0, rc=None, doc=None, error=None):
        self.valid, self.latency, self.rule, self.reason = valid, latency, rule, reason
        self.warnings, self.rc, self.doc, self.error = warnings, rc, doc or {}, error


class SolveResult:
    """One `mlsys solve`: cmd, rc, wall_s, killed (SIGTERM sent at kill_at), first_seen_s (when the
    output first appeared, with polling), stats (the --stats dict or None), stats_error, stdout and
    stderr (the log's text when the output went to a log)."""

    def __init__(self, cmd):
        self.cmd, self.rc, self.wall_s, self.killed, self.first_seen_s = cmd, None, None, False, None
        self.stats, self.stats_error, self.stdout, self.stderr = None, None, "", ""

    def stat(self, key):
        return (self.stats or {}).get(key)

    @property
    def latency(self):
        return fnum(self.stat("best_latency"))

    @property
    def lower_bound(self):
        return fnum(self.stat("lower_bound"))

    def last_error_line(self):
        return (self.stderr.strip().splitlines() or ["no message"])[-1]


class Mlsys:
    """The binary under test. `model` is a list of KEY=VALUE passed as --model to solve, evaluate
    and bound. MlsysError when `path` is not an executable (unless check=False)."""

    def __init__(self, path, model=None, check=True):
        if check and not (path and os.path.isfile(path) and os.access(path, os.X_OK)):
            raise MlsysError(f"{path}: not an executable ({BUILD_HINT})")
        self.path = os.path.abspath(path) if path else path
        self.model = list(model or [])
        self._help, self._version, self._sha1 = {}, None, None

    def _text(self, args, timeout=30):
        try:
            return subprocess.run([self.path] + args, capture_output=True, text=True, timeout=timeout).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    @property
    def version(self):
        """The first line of `mlsys --version` ("?" if none)."""
        if self._version is None:
            self._version = (self._text(["--version"]).strip().splitlines() or ["?"])[0]
        return self._version

    @property
    def sha1(self):
        if self._sha1 is None:
            self._sha1 = file_sha1(self.path)
        return self._sha1

    def supports(self, flag, command="solve"):
        """Whether `mlsys COMMAND --help` lists `flag` (older binaries lack --stats, --trace ...)."""
        if command not in self._help:
            self._help[command] = self._text([command, "--help"])
        return flag in self._help[command]

    def model_args(self):
        return [a for kv in self.model for a in ("--model", kv)]

    # ------------------------------------------------------------ solve

    def solve_cmd(self, inst, out, seconds=None, threads=None, seed=None, config=None, stats=None, trace=None,
                  quiet=True, exact=False, extra=()):
        cmd = [self.path, "solve", inst, out]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        if quiet:
            cmd.append("-q")
        if threads is not None:
            cmd += ["--threads", str(threads)]
        if seconds:
            cmd += ["--seconds", seconds_arg(seconds)]
        if config:
            cmd += ["--config", config]
        if stats:
            cmd += ["--stats", stats]
        if trace:
            cmd += ["--trace", trace]
        if exact:
            cmd.append("--exact")
        return cmd + list(extra) + self.model_args()

    def solve(self, inst, out, *, kill_at=None, poll=None, on_poll=None, log=None, log_cmd=False, **opts):
        """Runs `mlsys solve INST OUT` with solve_cmd's options (seconds, threads, seed, config,
        stats, trace, quiet, exact, extra); the stale output, stats and trace are removed first.
        kill_at: SIGTERM after that many seconds (mlsys writes its best and exits), SIGKILL 2 s
        later. poll: wake every `poll` seconds, note when OUT first appears (first_seen_s) and call
        on_poll(seconds since the start). log: a file for stdout and stderr (with the command line
        first when log_cmd); without it they are captured. Returns a SolveResult, stats read."""
        cmd = self.solve_cmd(inst, out, **opts)
        for stale in (out, opts.get("stats"), opts.get("trace")):
            if stale and os.path.exists(stale):
                os.remove(stale)
        res = SolveResult(cmd)
        with contextlib.ExitStack() as files:
            fo = files.enter_context(open(log, "w") if log else tempfile.TemporaryFile("w+"))
            fe = fo if log else files.enter_context(tempfile.TemporaryFile("w+"))
            if log_cmd:
                fo.write(" ".join(cmd) + "\n")
                fo.flush()
            t0 = time.monotonic()
            p = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)

            def reap():  # an exception (Ctrl-C) while it runs leaves no orphan solve behind
                if p.poll() is None:
                    p.kill()
                    p.wait()

            files.callback(reap)
            termed_at, killed_hard = None, False
            while True:
                now = time.monotonic() - t0
                if killed_hard or (termed_at is None and kill_at is None):
                    wait = None
                else:
                    wait = max(0.0, (kill_at if termed_at is None else termed_at + 2) - now)
                if poll is not None:
                    wait = poll if wait is None else min(wait, poll)
                try:
                    res.rc = p.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic() - t0
                if poll is not None:
                    if res.first_seen_s is None and os.path.exists(out):
                        res.first_seen_s = now
                    if on_poll is not None:
                        on_poll(now)
                if termed_at is None and kill_at is not None and now >= kill_at:
                    p.send_signal(signal.SIGTERM)
                    res.killed, termed_at = True, now
                elif termed_at is not None and not killed_hard and now >= termed_at + 2:
                    p.kill()
                    killed_hard = True
            res.wall_s = time.monotonic() - t0
            if poll is not None and res.first_seen_s is None and os.path.exists(out):
                res.first_seen_s = res.wall_s  # appeared during the last poll interval
            if not log:
                fo.seek(0), fe.seek(0)
                res.stdout, res.stderr = fo.read(), fe.read()
        if log:
            with open(log, errors="replace") as f:
                res.stderr = f.read()
        if opts.get("stats"):
            res.stats, res.stats_error = read_stats(opts["stats"])
        return res

    # ------------------------------------------------------------ the other commands

    def bound(self, inst, timeout=300, extra=()):
        """`mlsys bound --json` of a problem (with the model options and `extra` arguments): the lower
        bound, or None."""
        try:
            r = subprocess.run([self.path, "bound", "--json", inst] + self.model_args() + list(extra), capture_output=True,
                               text=True, timeout=timeout)
            return fnum(json.loads(r.stdout).get("lower_bound")) if r.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError, AttributeError):
            return None

    def evaluate(self, inst, sol, timeout=300):
        """`mlsys evaluate --json` of a schedule file (with the model options): an Evaluation."""
        if not os.path.exists(sol):
            return Evaluation(False, None, "missing", "no output file")
        try:
            r = subprocess.run([self.path, "evaluate", inst, sol, "--json"] + self.model_args(), capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Evaluation(False, None, "timeout", f"evaluate did not end within {timeout:g} s",
                              error="TimeoutExpired")
        if not r.stdout.strip():
            return Evaluation(False, None, "?", (r.stderr.strip().splitlines() or [""])[-1], 0, r.returncode)
        try:
            j = json.loads(r.stdout)
            if not isinstance(j, dict):
                raise ValueError("not an object")
            return Evaluation(bool(j.get("valid")) and r.returncode == 0, fnum(j.get("total_latency")),
                              j.get("rule", ""), j.get("reason", ""), len(j.get("warnings", [])), r.returncode, j)
        except ValueError:
            # Not parseable (e.g. an unescaped character): fall back to the fields we need.
            valid = re.search(r'"valid":\s*true', r.stdout) is not None and r.returncode == 0
            m = re.search(r'"total_latency":\s*([0-9.eE+-]+)', r.stdout)
            why = (r.stderr.strip().splitlines() or [""])[-1]
            return Evaluation(valid, fnum(m.group(1)) if m else None, "" if valid else "?", why, 0, r.returncode,
                              error="ValueError")

    def generate(self, family, size, seed, out, timeout=600):
        """`mlsys generate --family F --size N --seed S -o OUT`; MlsysError with its message on failure."""
        args = ["--family", family, "--size", str(size), "--seed", str(seed)]
        try:
            r = subprocess.run([self.path, "generate"] + args + ["-o", out], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MlsysError(f"mlsys generate {' '.join(args)} did not end within {timeout:g} s") from None
        if r.returncode != 0:
            raise MlsysError(f"mlsys generate {' '.join(args)} failed (exit {r.returncode}): {r.stderr.strip()}")

    def print_config(self, config=None):
        """`mlsys solve --print-config [-c CONFIG]`: the resolved config as YAML text; MlsysError with
        mlsys's message when it rejects the config."""
        r = subprocess.run([self.path, "solve", "--print-config"] + (["-c", config] if config else []),
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise MlsysError(r.stderr.strip())
        return r.stdout


class BoundCache:
    """`mlsys bound` per (binary SHA-1, instance SHA-1, model options), kept in a JSON file so that
    a bound is computed once per binary and instance. Safe across threads; a cache file that cannot
    be read or written only costs the recomputation."""

    def __init__(self, path):
        self.path, self.lock, self.warned = path, threading.Lock(), False

    def _load(self):
        try:
            with open(self.path) as f:
                d = json.load(f)
            return d.get("bounds", {}) if isinstance(d, dict) else {}
        except (OSError, ValueError):
            return {}

    def bound(self, ml, inst):
        key = f"{ml.sha1} {file_sha1(inst)} {' '.join(ml.model) or 'default'}"
        with self.lock:
            hit = self._load().get(key)
        if isinstance(hit, dict) and fnum(hit.get("bound")) is not None:
            return fnum(hit["bound"])
        value = ml.bound(inst)
        if value is None:
            return None
        with self.lock:
            bounds = self._load()  # (another run may have added some meanwhile)
            bounds[key] = {"bound": value, "instance": stem(inst), "binary": ml.version,
                           "model": " ".join(ml.model) or "default"}
            try:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                tmp = f"{self.path}.{os.getpid()}.tmp"
                with open(tmp, "w") as f:
                    json.dump({"format": 1, "about": "mlsys bound per 'binary-sha1 instance-sha1 model'",
                               "bounds": bounds}, f, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except OSError as e:
                if not self.warned:
                    self.warned = True
                    print(f"note: cannot write the bound cache {self.path} ({e.strerror}); bounds are recomputed",
                          file=sys.stderr, flush=True)
        return value
