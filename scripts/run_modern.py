"""Run chapter 13's grid, the 2017 block against the modern one, and write the results file it loads.

    python scripts/run_modern.py --workers 16 --seeds 10   # every variant, 10 seeds, on 16 cores
    python scripts/run_modern.py --tasks reversal          # only the reversal variants, merged into the file
    python scripts/run_modern.py --variants rope --seeds 2 --first-seed 10   # seeds 10 and 11 added
    python scripts/run_modern.py --steps 20 --seeds 2 --eval-limit 50 --out /tmp/tiny.json   # a smoke test

``modern.run`` trains each variant of ``mintransformer.recipes.modern.VARIANTS`` from each seed and
scores it on held-out problems, in ``--workers`` processes of one thread each, as
``scripts/run_ablations.py`` does for chapter 11 (one thread per run is the fastest use of the
cores). It needs no network. The file (``code/mintransformer/results/modern.json`` unless
``--out``) keeps every run, each variant's summary over its seeds, the budgets, and under ``made``
one entry per invocation: date, versions, processor, workers, wall time, variants and seeds. Runs
of other variants or seeds already in the file stay when ``--tasks`` or ``--variants`` is given;
a variant and seed run again replace the stored run. Chapter 13 pairs runs by seed: add seeds to a
variant only together with its reference's, on a machine that repeats the stored runs of a seed
exactly.
"""

import argparse
import concurrent.futures
import datetime
import json
import multiprocessing
import pathlib
import platform
import sys
import time

from machine import cpu_name  # scripts/machine.py
from run_ablations import _one_thread  # scripts/run_ablations.py: one thread per worker

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "code" / "mintransformer" / "results" / "modern.json"


def _train_and_score(job):
    from mintransformer.recipes import modern  # noqa: PLC0415  (TensorFlow starts in the worker)

    modern.set_determinism()
    return modern.run(**job)


def _printed(r):
    longer = f", longer: {r['exact_long']:.3f} ({r['cross_entropy_long']:.3f})" if "exact_long" in r else ""
    print(f"{r['name']:>20} seed {r['seed']}: exact match {r['exact']:.3f}, cross-entropy {r['cross_entropy']:.4f}"
          f"{longer}; {r['seconds']:.0f} s of training", flush=True)
    return r


def _versions():
    import keras  # noqa: PLC0415
    import numpy  # noqa: PLC0415
    import tensorflow  # noqa: PLC0415

    return dict(python=platform.python_version(), tensorflow=tensorflow.__version__, keras=keras.__version__,
                numpy=numpy.__version__)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="*", choices=("addition", "reversal"), help="tasks to run (default: both)")
    parser.add_argument("--variants", nargs="*", help="variants to run (default: all of the tasks')")
    parser.add_argument("--seeds", type=int, default=10, help="how many seeds (default 10)")
    parser.add_argument("--first-seed", type=int, default=0, help="the seeds are FIRST, FIRST+1, ... (default 0)")
    parser.add_argument("--steps", type=int, default=None, help="updates per run (default: the task's budget)")
    parser.add_argument("--eval-limit", type=int, default=None,
                        help="score only the first EVAL_LIMIT held-out problems of each set (a smoke test)")
    parser.add_argument("--workers", type=int, default=2, help="processes side by side (default 2)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "code"))
    from mintransformer.recipes import modern  # noqa: PLC0415

    order = list(modern.VARIANTS)
    names = args.variants or [n for n in order if not args.tasks or modern.VARIANTS[n][0] in args.tasks]
    if set(names) - set(order):
        parser.error(f"unknown variants {sorted(set(names) - set(order))}; known: {order}")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    # The reversal runs, the longest, first, so that the workers finish together.
    jobs = [dict(name=n, seed=s, steps=args.steps, eval_limit=args.eval_limit)
            for n in sorted(names, key=lambda n: modern.VARIANTS[n][0] != "reversal") for s in seeds]

    start = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=spawn, initializer=_one_thread) as pool:
        runs = [_printed(r) for r in pool.map(_train_and_score, jobs)]
    wall = time.perf_counter() - start

    previous = json.loads(args.out.read_text()) if args.out.exists() and (args.tasks or args.variants) else None
    done = {(r["name"], r["seed"]) for r in runs}
    kept = [r for r in previous["runs"] if (r["name"], r["seed"]) not in done] if previous else []
    everything = sorted(kept + runs, key=lambda r: (order.index(r["name"]), r["seed"]))
    made = dict(date=datetime.date.today().isoformat(), processor=cpu_name(), workers=args.workers, **_versions(),
                wall_seconds=round(wall), variants=names, seeds=args.seeds, first_seed=args.first_seed,
                steps=args.steps, **({} if args.eval_limit is None else dict(eval_limit=args.eval_limit)))
    results = dict(made=(previous["made"] if previous else []) + [made],
                   budget=dict(addition=modern.BUDGET, reversal=modern.REVERSAL_BUDGET),
                   runs=everything, summary=modern.summarize(everything))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{len(runs)} runs of {len(names)} variants, {wall / 60:.1f} min on {args.workers} workers: {args.out}")


if __name__ == "__main__":
    main()
