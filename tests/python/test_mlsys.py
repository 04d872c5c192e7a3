"""The Python module: dict round trips, evaluate against the CLI, the callback, Ctrl-C, threads."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mlsys
from conftest import EXAMPLES, example


def test_every_shared_benchmark_round_trips_through_dicts(shared_benchmarks):
    for path in shared_benchmarks:
        with open(path) as f:
            d = json.load(f)
        p = mlsys.Problem.from_dict(d)
        back = p.to_dict()
        for key in d:
            assert back[key] == d[key], f"{os.path.basename(path)}: {key} differs after the round trip"
        assert mlsys.Problem.from_dict(back).to_dict() == back
        assert p.num_ops == len(d["op_types"])


def test_a_bad_dict_names_the_field():
    with open(example("ex1.json")) as f:
        d = json.load(f)
    d["widths"][1] = -5
    with pytest.raises(mlsys.InputError, match="widths"):
        mlsys.Problem.from_dict(d)
    with pytest.raises(ValueError):  # InputError is a ValueError
        mlsys.Problem.from_dict({"widths": []})


def test_a_nan_in_a_dict_names_its_field():
    with open(example("ex1.json")) as f:
        d = json.load(f)
    d["base_costs"][0] = float("nan")
    with pytest.raises(mlsys.InputError, match=r"base_costs\[0\] is not a finite number"):
        mlsys.Problem.from_dict(d)
    p = mlsys.Problem.from_file(example("ex1.json"))
    s = mlsys.solve(p, seconds=0.2, seed=1).schedule.to_dict()
    s["subgraph_latencies"][-1] = float("inf")
    with pytest.raises(mlsys.InputError, match=r"subgraph_latencies\[%d\] is not a finite" % (len(s["subgraph_latencies"]) - 1)):
        mlsys.Schedule.from_dict(p, s)


def _variants(problem_path, schedule_path):
    """The schedule as it is, and three edits that break it in different ways."""
    with open(schedule_path) as f:
        s = json.load(f)
    yield "as is", s
    rev = {k: list(reversed(v)) for k, v in s.items()}
    yield "reversed", rev
    big = json.loads(json.dumps(s))
    big["granularities"][0] = [4096, 4096, 128]
    yield "too large", big
    short = json.loads(json.dumps(rev))
    short["granularities"][-1] = [256, 128, 1]
    for k in short:
        short[k] = short[k][1:] if len(short[k]) > 1 else short[k]
    yield "short", short


def _cases():
    names = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".schedule.json"))
    for n in names:
        problem = os.path.join(EXAMPLES, n.split(".")[0][:-1] + ".json")  # ex5b.schedule.json -> ex5.json
        for label, s in _variants(problem, os.path.join(EXAMPLES, n)):
            yield pytest.param(problem, s, id=f"{n}-{label}")


@pytest.mark.parametrize("problem_path,schedule", list(_cases()))
def test_evaluate_agrees_with_the_cli(problem_path, schedule, mlsys_bin, tmp_path):
    sp = tmp_path / "s.json"
    sp.write_text(json.dumps(schedule))
    cli = subprocess.run([mlsys_bin, "evaluate", problem_path, str(sp), "--json"], capture_output=True, text=True)
    p = mlsys.Problem.from_file(problem_path)
    if not cli.stdout.strip():  # the reader refused it (rule V1): so does the module
        assert "V1" in cli.stderr or "error" in cli.stderr
        with pytest.raises(mlsys.InputError):
            mlsys.evaluate(p, schedule)
        return
    want = json.loads(cli.stdout)
    got = mlsys.evaluate(p, schedule)
    assert got.valid == want["valid"]
    if want["valid"]:
        assert got.total == want["total_latency"]
        assert got.subgraph_latencies == [g["latency"] for g in want["subgraphs"]]
        assert got.violations == []
    else:
        assert got.total is None
        assert [(v.rule, -1 if v.subgraph is None else v.subgraph, v.reason) for v in got.violations] == [
            (v["rule"], v["subgraph"], v["reason"]) for v in want["violations"]]
        assert len(got.violations) >= 1


def test_schedule_round_trips_and_bound_is_below():
    p = mlsys.Problem.from_file(example("ex5.json"))
    r = mlsys.solve(p, seconds=0.5, threads=1)
    assert r.schedule is not None
    d = r.schedule.to_dict()
    again = mlsys.Schedule.from_dict(p, d)
    assert mlsys.evaluate(again).total == r.latency
    assert mlsys.bound(p) <= r.latency
    assert r.bound <= r.latency
    assert r.gap == pytest.approx((r.latency - r.bound) / r.latency)


def test_solves_ex5_to_the_known_best():
    r = mlsys.solve(example("ex5.json"), seconds=1, threads=1)
    assert r.latency == pytest.approx(6734.4)
    assert mlsys.evaluate(example("ex5.json"), r.schedule).valid


def test_callback_is_called_in_order_and_can_stop_the_run():
    seen = []

    def cb(imp):
        assert isinstance(imp, mlsys.Improvement)
        assert mlsys.evaluate(imp.schedule).total == imp.latency
        seen.append((imp.seconds, imp.latency, imp.found_by))

    r = mlsys.solve(example("ex5.json"), seconds=0.5, threads=1, callback=cb)
    assert len(seen) >= 2
    assert [s[1] for s in seen] == sorted((s[1] for s in seen), reverse=True)
    assert len({s[1] for s in seen}) == len(seen)  # strictly decreasing
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    assert seen[0][2] == "first"
    assert seen[-1][1] == r.latency

    calls = []
    r = mlsys.solve(example("ex5.json"), seconds=20, threads=1, callback=lambda imp: calls.append(imp) or False)
    assert len(calls) == 1
    assert r.stop_reason == "callback"
    assert r.seconds < 5


def test_a_callback_exception_stops_the_run_and_is_raised():
    def boom(imp):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        mlsys.solve(example("ex5.json"), seconds=20, threads=1, callback=boom)


def test_log_lines_go_to_the_sink():
    lines = []
    mlsys.solve(example("ex5.json"), seconds=0.3, threads=1, log=lines.append)
    assert lines and lines[0].startswith("[") and "mlsys" in lines[0]


def test_max_evals_is_a_budget_not_a_hint():
    # Each worker takes an evaluation before it prices: max_evals=1 makes one (it made 87 before).
    for threads in (1, 2):
        r = mlsys.solve(example("ex5.json"), seconds=30, threads=threads, max_evals=1)
        assert r.evaluations == 1, (threads, r.evaluations)
        assert r.stop_reason == "max_evals"


def test_two_threads():
    r = mlsys.solve(example("ex5.json"), seconds=1, threads=2)
    assert r.threads == 2
    assert r.latency == pytest.approx(6734.4)


def test_init_and_model_and_config():
    p = mlsys.Problem.from_file(example("ex5.json"))
    first = []
    init = mlsys.Schedule.from_file(p, example("ex5b.schedule.json"))
    mlsys.solve(p, seconds=0.3, threads=1, init=init, callback=lambda i: first.append(i.latency) or True)
    assert first[0] == mlsys.evaluate(init).total
    r = mlsys.solve(p, seconds=0.3, threads=1, model={"k_limit": "reduction"}, config="contest")
    assert "k_limit=reduction" in r.model
    with pytest.raises(ValueError, match="k_limit"):
        mlsys.solve(p, seconds=0.3, model={"k_limit": "sideways"})


def test_ctrl_c_returns_the_best_so_far():
    """SIGINT during solve (as Ctrl-C in a terminal or a notebook): the search stops within a
    second and solve returns its best, with stop_reason "signal"."""
    script = textwrap.dedent(f"""
        import os, signal, threading, time, mlsys
        p = mlsys.Problem.from_file({os.path.join(EXAMPLES, '..', 'generated', 'random-30.json')!r})
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        t = time.monotonic()
        r = mlsys.solve(p, seconds=60, threads=1)
        print(r.stop_reason, round(time.monotonic() - t, 2), r.latency > 0, mlsys.evaluate(r.schedule).valid)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    reason, seconds, found, valid = out.stdout.split()
    assert reason == "signal"
    assert float(seconds) < 5
    assert found == "True" and valid == "True"


def test_bound_keeps_its_budget_and_answers_ctrl_c(mlsys_bin):
    """bound(seconds=S) as `mlsys bound -s S` (the same value at the default), and Ctrl-C stops a long
    bound at once with KeyboardInterrupt (issue 51: it ran 97 s and ignored SIGINT)."""
    p = example("ex5.json")
    cli = subprocess.run([mlsys_bin, "bound", p, "--json"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert mlsys.bound(p) == json.loads(cli.stdout)["lower_bound"]
    with pytest.raises(ValueError, match="seconds"):
        mlsys.bound(p, seconds=0)
    script = textwrap.dedent("""
        import json, os, signal, subprocess, sys, tempfile, threading, time, mlsys
        path = os.path.join(tempfile.mkdtemp(), "big.json")
        subprocess.run([sys.argv[1], "generate", "-f", "random", "-n", "10000", "--seed", "7", "-o", path], check=True)
        t = time.monotonic()
        mlsys.bound(path, seconds=0.3)
        budget = time.monotonic() - t
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        t = time.monotonic()
        try:
            mlsys.bound(path, seconds=600)
            print("no-interrupt", budget, time.monotonic() - t)
        except KeyboardInterrupt:
            print("interrupted", budget, time.monotonic() - t)
    """)
    out = subprocess.run([sys.executable, "-c", script, mlsys_bin], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    what, budget, after = out.stdout.split()
    assert float(budget) < 5  # 0.3 s and the reading (a loose ceiling: the machine may be loaded)
    assert what == "interrupted", out.stdout  # a whole bound of this graph takes tens of seconds
    assert float(after) < 5, out.stdout


@pytest.mark.parametrize("kw", [{"seconds": 0}, {"seconds": -1}, {"seconds": float("nan")}, {"threads": -1},
                                {"max_evals": 0}, {"target": float("inf")}, {"target": 0}, {"stall_seconds": 0}])
def test_bad_solve_arguments_name_themselves(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        mlsys.solve(example("ex5.json"), **kw)


def test_a_schedule_is_read_again_for_another_problem_object():
    p1 = mlsys.Problem.from_file(example("ex5.json"))
    p2 = mlsys.Problem.from_file(example("ex5.json"))
    s = mlsys.Schedule.from_file(p1, example("ex5b.schedule.json"))
    assert mlsys.evaluate(p2, s).total == mlsys.evaluate(s).total == mlsys.evaluate(p1, s).total
    first = []
    mlsys.solve(p2, seconds=0.2, threads=1, init=s, callback=lambda i: first.append(i.latency) or True)
    assert first[0] == mlsys.evaluate(s).total
    # Against a problem whose ids it does not fit (one op: ex5's first): the reader's error.
    one = {"widths": [128] * 4, "heights": [128] * 4, "inputs": [[0, 1]], "outputs": [[3]], "base_costs": [2000],
           "op_types": ["MatMul"], "fast_memory_capacity": 45000, "slow_memory_bandwidth": 10,
           "native_granularity": [128, 128]}
    with pytest.raises(mlsys.InputError):
        mlsys.evaluate(mlsys.Problem.from_dict(one), s)


def test_model_applies_over_the_configs_model(tmp_path):
    cfg = tmp_path / "chains.yaml"
    cfg.write_text("model:\n  matmul_chains: reject\n")
    r = mlsys.solve(example("ex5.json"), seconds=0.2, threads=1, config=str(cfg), model={"k_limit": "reduction"})
    assert "matmul_chains=reject" in r.model and "k_limit=reduction" in r.model, r.model


def test_a_bound_above_a_valid_schedule_is_reported_not_claimed(monkeypatch):
    """The self-check (issue 50): a wrong argument planted through the test seam makes the bound
    rise above valid schedules; the result carries bound_violation, the bound is dropped and the
    run never claims optimality. Without the seam, bound_violation is None."""
    honest = mlsys.solve(example("ex5.json"), seconds=0.3, threads=1)
    assert honest.bound_violation is None
    monkeypatch.setenv("MLSYS_TEST_PLANT_PART_SCALE", "3")
    lines = []
    r = mlsys.solve(example("ex5.json"), seconds=0.5, threads=1, log=lines.append)
    v = r.bound_violation
    assert v is not None and v["bound"] > v["latency"]
    assert "part-floors" in v["argument"]
    assert os.path.exists(v["file"])
    os.remove(v["file"])
    assert not r.optimal and r.bound == 0 and r.stop_reason != "optimal"
    assert any("internal error: lower bound" in l for l in lines)
