"""bench/tune.py: the search space file, the values at each key's resolution, and the config text
(the base config with tuned values)."""
import math
import os
import re
import tempfile

from .common import fnum
from .mlsys import MlsysError
from .tune_common import TuneError, yaml


def resolved_config(ml, cfg_path):
    """The config as mlsys reads it (every key), or TuneError with mlsys's message."""
    try:
        return yaml.safe_load(ml.print_config(cfg_path)) or {}
    except MlsysError as e:
        raise TuneError(f"mlsys rejects {cfg_path}: {e}") from None


def resolved_config_text(ml, text):
    """resolved_config of a config given as text."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        return resolved_config(ml, f.name)
    finally:
        os.remove(f.name)


def get_path(d, path):
    for part in path:
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def load_space(path, resolved):
    """The space file as {key: spec}; every key must be a key mlsys knows (from --print-config)."""
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except OSError as e:
        raise TuneError(f"--space {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise TuneError(f"--space {path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict) or not raw:
        raise TuneError(f"--space {path}: expected a mapping of config keys to {{type, range, log, choices}}")
    space = {}
    for key, spec in raw.items():
        where = f"--space {path}: {key}"
        if not isinstance(spec, dict):
            raise TuneError(f"{where}: expected a mapping like {{type: float, range: [0.1, 1], log: true}}")
        unknown = set(spec) - {"type", "range", "log", "choices"}
        if unknown:
            raise TuneError(f"{where}: unknown field {sorted(unknown)[0]!r} (known: type, range, log, choices)")
        current = get_path(resolved, str(key).split("."))
        if current is None or isinstance(current, dict):
            raise TuneError(f"{where}: not a key of the search config (see `mlsys solve --print-config`)")
        kind = spec.get("type")
        if kind in ("float", "int"):
            rng = spec.get("range")
            if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) and
                                                                    not isinstance(x, bool) for x in rng)):
                raise TuneError(f"{where}: range must be [low, high] (two numbers)")
            if kind == "int" and not all(isinstance(x, int) for x in rng):
                raise TuneError(f"{where}: an int key needs integer bounds, got {rng}")
            lo, hi = rng
            log_scale = spec.get("log", False)
            if not isinstance(log_scale, bool):
                raise TuneError(f"{where}: log must be true or false")
            if not lo < hi:
                raise TuneError(f"{where}: range low {lo} must be below high {hi}")
            if log_scale and lo <= 0:
                raise TuneError(f"{where}: a log scale needs low > 0, got {lo}")
            if "choices" in spec:
                raise TuneError(f"{where}: choices are for type categorical")
            space[key] = {"type": kind, "low": lo, "high": hi, "log": log_scale}
        elif kind == "categorical":
            ch = spec.get("choices")
            if not (isinstance(ch, list) and len(ch) >= 2 and all(isinstance(c, (str, int, float, bool)) for c in ch)):
                raise TuneError(f"{where}: choices must be a list of at least two numbers, names or true/false")
            if "range" in spec or "log" in spec:
                raise TuneError(f"{where}: a categorical key takes choices, not range/log")
            space[key] = {"type": "categorical", "choices": ch}
        else:
            raise TuneError(f"{where}: type must be float, int or categorical, got {kind!r}")
    return space


def default_params(space, resolved):
    """The base config's values of the space's keys (the first trial), and the keys outside their range."""
    params, outside = {}, []
    for key, spec in space.items():
        v = get_path(resolved, key.split("."))
        if spec["type"] == "categorical":
            match = [c for c in spec["choices"] if str(c).lower() == str(v).lower()]
            if match:
                params[key] = match[0]
            else:
                outside.append(f"{key}={v}")
            continue
        x = fnum(v)
        if x is None or not spec["low"] <= x <= spec["high"]:
            outside.append(f"{key}={v}")
            continue
        params[key] = int(x) if spec["type"] == "int" else x
    return params, outside


# ---------------------------------------------------------------- values at the key's resolution

LOG_DIGITS = 3  # significant digits of a log-scaled key (float or int): 0.00123, 138000
LINEAR_STEPS = 100  # a linear float moves in the power of ten that gives 100 to 999 steps over its range


def resolution(spec):
    """How finely a key of the space is set: ("digits", N) significant digits, ("step", S), or None."""
    if spec["type"] not in ("float", "int"):
        return None
    if spec["log"]:
        return ("digits", LOG_DIGITS)
    if spec["type"] == "int":
        return ("step", 1)
    return ("step", 10.0 ** math.floor(math.log10((spec["high"] - spec["low"]) / LINEAR_STEPS)))


def round_value(v, spec):
    """v at the key's resolution, inside its range; an int key's value stays an int."""
    res = resolution(spec)
    if res is None or isinstance(v, bool):
        return v
    kind, n = res
    if kind == "digits":
        r = float(f"{v:.{n}g}")
    else:
        decimals = max(0, -math.floor(math.log10(n) + 1e-9))  # step 0.001: 3 (and no 0.30000000000000004)
        r = round(round(v / n) * n, decimals)
    r = min(max(r, spec["low"]), spec["high"])
    return int(round(r)) if spec["type"] == "int" else float(r)


def suggest(trial, key, spec, base_values=None):
    """The trial's value of `key`, sampled and put at the key's resolution (round_value); a value
    equal to the base config's (base_values: {key: value}) stays as it is, so the first trial
    (the base config) runs exactly the base config."""
    if spec["type"] == "categorical":
        return trial.suggest_categorical(key, spec["choices"])
    if spec["type"] == "float":
        v = trial.suggest_float(key, spec["low"], spec["high"], log=spec["log"])
    else:
        v = trial.suggest_int(key, spec["low"], spec["high"], log=spec["log"])
    if base_values and key in base_values and v == base_values[key]:
        return v
    return round_value(v, spec)


def evaluated_params(trial, space):
    """The values `trial` ran with: its user attribute `evaluated` (set by Worker.objective), else
    its params as they were given (the base config) or rounded (a study of an older tune.py)."""
    ev = trial.user_attrs.get("evaluated")
    if isinstance(ev, dict) and set(ev) == set(trial.params):
        return dict(ev)
    if trial.user_attrs.get("base_config"):
        return dict(trial.params)
    return {k: round_value(v, space[k]) if k in space else v for k, v in trial.params.items()}


# ---------------------------------------------------------------- the config text


def yaml_scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        s = repr(v)
        if "e" in s and "." not in s.split("e")[0]:  # 1e-05 is a string to YAML 1.1 readers; 1.0e-05 is not
            m, e = s.split("e")
            s = f"{m}.0e{e}"
        return s
    return str(v)


def merged_config(base_text, params):
    """The base config (a dict) with `params` set."""
    cfg = yaml.safe_load(base_text) or {}
    for key, v in params.items():
        d = cfg
        *parents, leaf = key.split(".")
        for p in parents:
            d = d.setdefault(p, {})
        d[leaf] = v
    return cfg


def normalised(x):
    """For comparing configs parsed by different YAML readers: numbers as floats."""
    if isinstance(x, dict):
        return {k: normalised(v) for k, v in x.items()}
    if isinstance(x, list):
        return [normalised(v) for v in x]
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if isinstance(x, str) and fnum(x) is not None:
        return float(x)
    return x


def config_text(base_text, params, header="", defaults=None):
    """The base config's text with the tuned values put in place (its comments kept, each tuned
    line marked); falls back to a plain YAML dump when the base is laid out in a way this line
    editor does not follow (the result is checked against the structured merge either way)."""
    want = merged_config(base_text, params)
    lines, stack, done = base_text.splitlines(), [], set()
    while header and lines and lines[0].startswith("#"):  # the base's own title gives way to the header
        lines.pop(0)
    rx = re.compile(r"^(\s*)([A-Za-z0-9_.-]+):(\s*)([^#]*?)(\s*#.*)?$")
    out = []
    for line in lines:
        m = rx.match(line)
        if not m or line.lstrip().startswith("#"):
            out.append(line)
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group(2)))
        key = ".".join(k for _, k in stack)
        if key in params and m.group(4):
            note = f"tuned (default {defaults[key]})" if defaults and key in defaults else "tuned"
            comment = (m.group(5) or "").strip()
            comment = f"# {note}; {comment[1:].strip()}" if comment else f"# {note}"
            line = f"{m.group(1)}{m.group(2)}:{m.group(3) or ' '}{yaml_scalar(params[key])}  {comment}"
            done.add(key)
        out.append(line)
    text = "\n".join(out) + "\n"
    try:
        same = done == set(params) and normalised(yaml.safe_load(text)) == normalised(want)
    except yaml.YAMLError:
        same = False
    if not same:
        text = yaml.safe_dump(want, sort_keys=False, default_flow_style=None)
    return header + text

