"""bench/tune.py: the results of a study (the chosen config written, the pictures, the validation)."""
import concurrent.futures
import datetime
import importlib.util
import os
import shutil
import sys
import tempfile
import textwrap

from .common import file_sha1, fmt, geomean, median, write_csv
from .tune_common import RunError, TuneError, list_instances, log, optuna, seeds_of
from .tune_space import config_text, get_path, resolved_config, resolved_config_text, yaml_scalar
from .tune_worker import score_run


def trial_counts(study):
    counts = {}
    for t in study.get_trials(deepcopy=False):
        counts[t.state.name] = counts.get(t.state.name, 0) + 1
    return counts


def write_config(args, study, setup, ml, chosen):
    """--out: the base config's text with the chosen trial's values (as it ran them), a header
    saying which trial, why, and its score. mlsys must accept it as it is. chosen: {"trial",
    "params", "why"} (tune_race.choose)."""
    t = chosen["trial"]
    base_trial = [b for b in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
                  if b.user_attrs.get("base_config")]
    counts = trial_counts(study)
    resolved = resolved_config_text(ml, setup["base_yaml"])
    defaults = {k: yaml_scalar(get_path(resolved, k.split("."))) for k in setup["space"]}
    why = textwrap.wrap(f"Chosen: {chosen['why']}.", width=96)
    header = (f"# mlsys search config tuned by bench/tune.py (Optuna TPE), {datetime.date.today()}.\n"
              f"# Study {args.study!r}: trial {t.number} of {sum(counts.values())} "
              f"({', '.join(f'{v} {k.lower()}' for k, v in sorted(counts.items()))}).\n"
              f"# Training: {len(setup['instances'])} instances x seeds {setup['seeds']}, --seconds {setup['seconds']:g} "
              f"--threads {setup['threads']}; geometric mean of latency / lower bound {t.value:.5f}"
              + (f" (base config {base_trial[0].value:.5f})" if base_trial else "") + ".\n"
              + "".join(f"# {line}\n" for line in why) +
              f"# Base: {setup['base_name']}; the tuned keys say so. A complete config: mlsys solve -c FILE.\n")
    text = config_text(setup["base_yaml"], chosen["params"], header, defaults)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    try:
        resolved_config(ml, tmp)  # mlsys must accept it as is
    except TuneError:
        os.remove(tmp)
        raise
    os.replace(tmp, args.out)
    log(f"wrote {args.out} (trial {t.number}, training score {t.value:.5f})")


def pictures(study, workdir):
    if importlib.util.find_spec("matplotlib") is None:
        log(f"no pictures: {sys.executable} cannot import matplotlib (apt-get install python3-matplotlib python3-sklearn)")
        return
    import matplotlib
    matplotlib.use("Agg")
    from optuna.visualization import matplotlib as ovm
    jobs = [("history.png", ovm.plot_optimization_history), ("intermediate.png", ovm.plot_intermediate_values),
            ("importance.png", ovm.plot_param_importances)]
    for name, plot in jobs:
        path = os.path.join(workdir, name)
        try:
            ax = plot(study)
            fig = ax.figure if hasattr(ax, "figure") else ax.flat[0].figure
            fig.set_size_inches(10, 6)
            fig.savefig(path, dpi=110, bbox_inches="tight")
            matplotlib.pyplot.close(fig)
            log(f"wrote {path}")
        except Exception as e:  # importances need scikit-learn and two complete trials
            log(f"no {name}: {type(e).__name__}: {e}")


def validate(args, ml, setup, best_yaml, workdir):
    """Runs the base config and the best one on every --valid instance x --valid-seeds; the table."""
    insts = list_instances(args.valid, "--valid")
    overlap = [n for n, p in insts.items() if file_sha1(p) in set(setup["instances"].values())]
    if overlap:
        log(f"warning: {len(overlap)} validation instances are also training instances: {', '.join(overlap[:5])}")
    seeds = seeds_of(args.valid_seeds, "--valid-seeds")
    base_yaml = os.path.join(workdir, "base.yaml")
    with open(base_yaml, "w") as f:
        f.write(setup["base_yaml"])
    configs = {"default": base_yaml, "best": best_yaml}
    jobs = [(label, name, s) for name in insts for s in seeds for label in configs]
    scratch = tempfile.mkdtemp(prefix="valid-", dir=workdir)
    log(f"validation: {len(insts)} instances x {len(seeds)} seeds x 2 configs, --seconds {setup['seconds']:g} "
        f"--threads {setup['threads']}, {args.jobs} at a time (about "
        f"{len(jobs) * setup['seconds'] / args.jobs / 60:.1f} min)")

    def one(job):
        label, name, seed = job
        try:
            return job, score_run(ml, insts[name], configs[label], setup["seconds"], setup["threads"], seed, scratch,
                                  getattr(args, "init_dir", None))
        except RunError as e:
            return job, {"error": str(e)}

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for (label, name, seed), r in ex.map(one, jobs):
            rows.append({"config": label, "instance": name, "seed": seed, **r})
            if "error" in r:
                log(f"validation run failed: {r['error']}")
    shutil.rmtree(scratch, ignore_errors=True)
    write_csv(os.path.join(workdir, "validation.csv"),
                      ["config", "instance", "seed", "latency", "lower_bound", "ratio", "wall_s", "error"], rows)
    per = {}
    for r in rows:
        if "ratio" in r:
            per.setdefault(r["instance"], {}).setdefault(r["config"], []).append(r["ratio"])
    lines = [f"Validation on {args.valid}: median over seeds {seeds} of latency / lower bound "
             f"(--seconds {setup['seconds']:g} --threads {setup['threads']}); best/default below 1 is better.", "",
             f"| instance | default ({setup['base_name']}) | best ({os.path.basename(args.out)}) | best/default |",
             "|---|--:|--:|--:|"]
    dcol, bcol, rcol = [], [], []
    for name in insts:
        d, b = median(per.get(name, {}).get("default", [])), median(per.get(name, {}).get("best", []))
        ratio = b / d if d and b else None
        dcol.append(d), bcol.append(b), rcol.append(ratio)
        lines.append(f"| {name} | {fmt(d, 5)} | {fmt(b, 5)} | {fmt(ratio, 5)} |")
    g = geomean(rcol)
    lines.append(f"| geometric mean | {fmt(geomean(dcol), 5)} | {fmt(geomean(bcol), 5)} "
                 f"| {fmt(g, 5)} |")
    failed = sum("error" in r for r in rows)
    if g is not None:
        verdict = ("better than" if g < 1 - 1e-9 else "worse than" if g > 1 + 1e-9 else "the same as")
        lines += ["", f"The tuned config is {verdict} the default on the validation set: geometric mean of "
                      f"best/default {g:.5f} ({(g - 1) * 100:+.2f}%), better on {sum(r < 1 - 1e-9 for r in rcol if r)}, "
                      f"worse on {sum(r > 1 + 1e-9 for r in rcol if r)} of {len(insts)} instances."]
    if failed:
        lines.append(f"{failed} validation runs failed (see validation.csv).")
    md = "\n".join(lines) + "\n"
    with open(os.path.join(workdir, "validation.md"), "w") as f:
        f.write(md)
    return md, failed

