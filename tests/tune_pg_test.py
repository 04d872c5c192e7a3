#!/usr/bin/env python3
"""Run by the GoogleTest Tuning.PostgresStudySharedByWorkersSurvivesAKill (tests/cli/tuning_test.cpp): bench/tune.py workers sharing one study in a throwaway PostgreSQL server.

    python3 tests/tune_pg_test.py --mlsys build/release/mlsys [--keep]

1. initdb + pg_ctl start a server in a temporary folder (a Unix socket only, no TCP; as root the
   server runs as the `postgres` user, or `nobody`, through runuser: PostgreSQL refuses root). It
   trusts whoever reaches its socket, so only its own user (and root) may: the socket's folder is
   0700 and the socket itself 0700 (unix_socket_permissions). Checked: those modes, no TCP
   listener, and, as root, that psql as another user (`nobody`) is refused while psql as the
   server's user is let in (a probe as `nobody` once ran COPY ... TO PROGRAM as the server's user);
2. one worker creates the study (its first trial is the base config);
3. workers A and B run against it at once; A is SIGKILLed in the middle of a trial;
4. once A's heartbeat is stale, the next worker to start a trial (B, or the restarted worker A2
   that resumes the study) marks A's trial FAIL and queues it again (RetryFailedTrialCallback);
5. `tune.py --minutes 0` writes the best configuration from the shared study; mlsys accepts it.
Checks: A, B and A2 each contributed complete trials; B ran exactly its --trials; exactly one
trial is failed (A's) and it was retried, or, on a loaded machine, also trials of live workers failed
as stale by a late heartbeat, each retried to its end; nothing is left RUNNING.
Then the server is stopped and the folder removed (--keep leaves it). Exit 77 (CTest
SKIP_RETURN_CODE) with a message when the PostgreSQL server binaries, optuna or psycopg2 are missing.
"""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNE = os.path.join(ROOT, "bench", "tune.py")
SKIP = 77
HEARTBEAT = 3  # seconds; a trial is stale after 3 heartbeats (9 s; a false alarm is tolerated, see the checks)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "bench"))
import harness  # noqa: E402  (re-exec under Debian's python3 when this one lacks the packages)
import tune_test_util  # noqa: E402


def say(msg):
    print(f"tune_pg_test: {msg}", flush=True)


def skip(why):
    say(f"SKIPPED: {why}")
    sys.exit(SKIP)


def fail(why):
    say(f"FAILED: {why}")
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


class Server:
    """A PostgreSQL server in `folder`, listening on a Unix socket in it."""

    def __init__(self, folder):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=harness.natural_key)
        if not bins:
            skip("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        self.bin = os.path.dirname(bins[-1])
        self.folder, self.data, self.port = folder, os.path.join(folder, "data"), 5432
        self.as_user = []
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            user = next((u for u in ("postgres", "nobody") if self._has_user(u)), None)
            if user is None or not shutil.which("runuser"):
                skip("running as root without a `postgres` or `nobody` user and runuser to start PostgreSQL as")
            os.chown(folder, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)
            self.as_user = ["runuser", "-u", user, "--"]
        self.user = user if self.as_user else pwd.getpwuid(os.geteuid()).pw_name
        os.chmod(folder, 0o700)  # the socket's folder: the server's user only (--auth=trust below)
        self.started = False

    @staticmethod
    def _has_user(name):
        try:
            pwd.getpwnam(name)
            return True
        except KeyError:
            return False

    def start(self):
        run(self.as_user + [os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust",
                            "-E", "UTF8", "--locale=C", "--no-sync"], cwd=self.folder)
        opts = (f"-k {self.folder} -c unix_socket_permissions=0700 -c listen_addresses='' -p {self.port} "
                "-c fsync=off")
        run(self.as_user + [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", os.path.join(self.folder, "log"),
                            "-w", "-t", "60", "-o", opts, "start"], cwd=self.folder)
        self.started = True
        run([os.path.join(self.bin, "createdb"), "-h", self.folder, "-p", str(self.port), "-U", "postgres", "tune"])
        return f"postgresql+psycopg2://postgres@/tune?host={self.folder}&port={self.port}"

    def psql(self, as_user, *sql):
        """psql as `as_user` (a runuser prefix, [] for this process) on the socket: (exit code, output)."""
        env = dict(os.environ, LC_ALL="C", PGCONNECT_TIMEOUT="20")
        cmd = as_user + [os.path.join(self.bin, "psql"), "-h", self.folder, "-p", str(self.port), "-U", "postgres",
                         "-d", "postgres", "-w", "-X", "-A", "-t"]
        for q in sql:
            cmd += ["-c", q]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd="/", env=env, timeout=60)
        return r.returncode, (r.stdout + r.stderr).strip()

    def check_private(self):
        """Only the server's user (and root) can reach the socket; no TCP listener."""
        mode = os.stat(self.folder).st_mode & 0o777
        if mode != 0o700:
            fail(f"the socket folder {self.folder} has mode {mode:04o}, not 0700: any local user can reach "
                 "a server that trusts every connection")
        sock = os.path.join(self.folder, f".s.PGSQL.{self.port}")
        mode = os.stat(sock).st_mode & 0o777
        if mode & 0o077:
            fail(f"the socket {sock} has mode {mode:04o}: group/other may connect")
        rc, out = self.psql(self.as_user, "SELECT quote_literal(current_setting('listen_addresses')) || ' ' || "
                                          "current_setting('unix_socket_permissions')")
        if rc != 0:
            fail(f"psql as the server's user {self.user} on the socket exited {rc}: {out}")
        if out != "'' 0700":
            fail(f"expected listen_addresses '' (no TCP) and unix_socket_permissions 0700, the server says {out!r}")
        say(f"ok: socket folder 0700, socket {mode:04o}, no TCP listener")
        probe = next((u for u in ("nobody", "daemon") if u != self.user and self._has_user(u)), None)
        if os.geteuid() != 0 or probe is None or not shutil.which("runuser"):
            say("note: not checking that another user is refused (needs root, runuser and a user nobody or daemon "
                f"that is not the server's user {self.user})")
            return
        rc, out = self.psql(["runuser", "-u", probe, "--"], "SELECT current_user")
        if rc == 0:
            fail(f"psql as {probe} connected to the test server as superuser: {out}")
        if "permission denied" not in out.lower():
            fail(f"psql as {probe} failed, but not for want of permission on the socket: {out}")
        why = next(ln for ln in out.splitlines() if "permission denied" in ln.lower())
        say(f"ok: psql as {probe} is refused: {why}")

    def stop(self):
        if self.started:
            subprocess.run(self.as_user + [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate",
                                           "-w", "stop"], capture_output=True, cwd=self.folder)
            self.started = False


def main():
    ap = tune_test_util.arg_parser(__doc__)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (server stopped)")
    args = ap.parse_args()
    why = tune_test_util.missing_packages(sys.executable)
    if why:
        skip(why)
    import optuna

    top = tempfile.mkdtemp(prefix="mlsys-tune-pg-", dir="/tmp" if os.path.isdir("/tmp") else None)  # short socket path
    pg_dir, work = os.path.join(top, "pg"), os.path.join(top, "work")
    os.makedirs(pg_dir), os.makedirs(os.path.join(work, "train")), os.makedirs(os.path.join(work, "valid"))
    os.chmod(top, 0o755)
    server = Server(pg_dir)
    procs = []
    try:
        url = server.start()
        say(f"server up: {url}")
        server.check_private()
        for folder, fam, size, seed in (("train", "random", 12, 1), ("train", "mixer", 10, 4), ("valid", "random", 12, 9)):
            run([args.mlsys, "generate", "--family", fam, "--size", str(size), "--seed", str(seed),
                 "--output", os.path.join(work, folder, f"{fam}-{seed}.json")])
        common = ["--storage", url, "--study", "pg-test", "--train", os.path.join(work, "train"),
                  "--mlsys", args.mlsys, "--heartbeat", str(HEARTBEAT), "--pruner", "none"]  # every trial completes

        def worker(trials, extra=()):
            env = dict(os.environ, TMPDIR=work)  # the scratch folder of the killed worker goes with the rest
            return subprocess.Popen([sys.executable, TUNE, "worker", "--trials", str(trials)] + common + list(extra), env=env)

        # The study: created by a first worker with its setup (0.4 s runs, 1 thread, 1 seed).
        w0 = worker(1, ["--seconds", "0.4", "--threads", "1"])
        if w0.wait(timeout=120) != 0:
            fail(f"the first worker exited {w0.returncode}")
        storage = optuna.storages.RDBStorage(url)
        study = optuna.load_study(study_name="pg-test", storage=storage)

        def trials():
            return study.get_trials(deepcopy=False)

        host = socket.gethostname()
        a, b = worker(1000), worker(6)
        procs += [a, b]
        a_id, killed = f"{host}:{a.pid}", None
        deadline = time.time() + 120
        while killed is None and time.time() < deadline:
            ts = trials()
            a_done = [t for t in ts if t.user_attrs.get("worker") == a_id and t.state.name == "COMPLETE"]
            a_running = [t for t in ts if t.user_attrs.get("worker") == a_id and t.state.name == "RUNNING"]
            if a_done and a_running:
                time.sleep(0.2)  # inside a solve
                a.send_signal(signal.SIGKILL)
                a.wait()
                # The trial A was in when it died, read after the kill: the one seen running may
                # have completed during the sleep (a loaded machine) and A started the next.
                dead = [t for t in trials() if t.user_attrs.get("worker") == a_id and t.state.name == "RUNNING"]
                if len(dead) != 1:
                    fail(f"worker A was killed with {len(dead)} trials running (between two trials?)")
                killed = dead[0].number
            elif a.poll() is not None:
                fail(f"worker A exited {a.returncode} before it could be killed")
            else:
                time.sleep(0.05)
        if killed is None:
            fail("worker A never had a trial running after a complete one within 120 s")
        killed_at = time.time()
        say(f"killed worker A ({a_id}) during trial {killed}")
        if b.wait(timeout=300) != 0:
            fail(f"worker B exited {b.returncode}")
        time.sleep(max(0.0, killed_at + 3 * HEARTBEAT + 1 - time.time()))  # A's heartbeat is stale now
        a2 = worker(3)
        procs.append(a2)
        if a2.wait(timeout=300) != 0:
            fail(f"the restarted worker exited {a2.returncode}")

        ts = trials()
        by_worker = {}
        for t in ts:
            by_worker.setdefault(t.user_attrs.get("worker"), []).append(t)
        b_id, a2_id = f"{host}:{b.pid}", f"{host}:{a2.pid}"
        states = {t.number: t.state.name for t in ts}
        say("trials: " + ", ".join(f"{n}:{s.lower()}" for n, s in sorted(states.items())))
        for label, wid in (("A", a_id), ("B", b_id), ("restarted A", a2_id)):
            if not any(t.state.name == "COMPLETE" for t in by_worker.get(wid, [])):
                fail(f"worker {label} ({wid}) contributed no complete trial")
        b_finished = [t for t in by_worker[b_id] if t.state.is_finished() and t.state.name != "FAIL"]
        if len(b_finished) != 6:
            fail(f"worker B ran --trials 6 but the study holds {len(b_finished)} finished trials of it")
        left = [t for t in ts if not t.state.is_finished()]
        if left:
            fail("trials left unfinished: " + ", ".join(f"{t.number} {t.state.name}" for t in left))
        if states[killed] != "FAIL":
            fail(f"the killed trial {killed} is {states[killed]}, not FAIL (stale heartbeat not detected)")
        # Every FAIL is a trial failed as stale, run again exactly once to its end: the killed one,
        # and any a live worker lost to a late heartbeat (a false alarm: a heartbeat thread starved
        # for 3 heartbeats on a loaded 2-core machine, seen under ctest -j; the worker logs it and
        # goes on). Any other FAIL (a failed solve) is an error.
        for t in (t for t in ts if t.state.name == "FAIL"):
            retried = [r for r in ts if r.system_attrs.get("failed_trial") == t.number]
            if len(retried) != 1 or retried[0].state.name not in ("COMPLETE", "PRUNED"):
                fail(f"trial {t.number} ({t.user_attrs.get('worker')}) failed and was not run again to its end: "
                     f"{[(r.number, r.state.name) for r in retried]}")
            if t.number != killed:
                if t.user_attrs.get("worker") == a_id:
                    fail(f"worker A's trial {t.number} failed, but A was killed in trial {killed}")
                say(f"note: trial {t.number} of a live worker ({t.user_attrs.get('worker')}) was failed as stale "
                    f"(a late heartbeat) and ran again as trial {retried[0].number}")
        retried = [t for t in ts if t.system_attrs.get("failed_trial") == killed]
        say(f"ok: A {len(by_worker[a_id])}, B {len(by_worker[b_id])}, restarted A {len(by_worker[a2_id])} trials; "
            f"trial {killed} failed and was retried as trial {retried[0].number}")

        # The best of the shared study as a config mlsys accepts, validated on a held-out instance.
        best = os.path.join(work, "best.yaml")
        r = subprocess.run([sys.executable, TUNE, "--minutes", "0", "--storage", url, "--study", "pg-test",
                            "--valid", os.path.join(work, "valid"), "--valid-seeds", "1", "--mlsys", args.mlsys,
                            "--out", best], capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or "geometric mean" not in r.stdout:
            fail(f"tune.py --minutes 0 exited {r.returncode}:\n{r.stdout}{r.stderr}")
        run([args.mlsys, "solve", "--print-config", "-c", best])
        say("ok: tune.py --minutes 0 wrote a config mlsys accepts and printed the validation table")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        server.stop()
        if args.keep:
            say(f"kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)
    say("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
