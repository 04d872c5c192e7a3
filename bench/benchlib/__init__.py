"""benchlib: what the scripts of bench/ share.

    common   paths (the repository, ../shared/benchmarks, ../shared/targets.csv, the default
             binary), FAMILIES (the generator's families), parse_seeds (the one seed and size
             grammar), file_sha1, the instance list, numbers and tables, the re-exec under
             Debian's python3
    mlsys    Mlsys (the binary: solve with --stats, bound, evaluate, generate, --print-config),
             read_stats, BoundCache (`mlsys bound` per binary, instance and model, in a JSON file)
    tune_*   the parts of bench/tune.py (URL masking, space and config text, the study, the
             worker, the results)

`python3 bench/benchlib stats FILE KEY...` prints fields of a --stats file and
`python3 bench/benchlib families` the families, for the shell scripts.
"""
