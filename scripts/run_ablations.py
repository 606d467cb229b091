"""Run chapter 11's grid of ablations and write the results file that the chapter loads.

    python scripts/run_ablations.py                    # every variant, 3 seeds
    python scripts/run_ablations.py --rows A norm      # only these rows, merged into the file
    python scripts/run_ablations.py --variants cooldown --seeds 2 --first-seed 3   # seeds 3 and 4 added
    python scripts/run_ablations.py --steps 20 --seeds 1 --eval-limit 50 --out /tmp/tiny.json   # a smoke test

Each variant of ``mintransformer.recipes.ablations.VARIANTS`` is trained from each seed by
``ablations.run`` and scored on held-out data. Runs go to ``--workers`` processes of one thread
each (on 2 cores, two one-thread runs side by side finish sooner than one two-thread run after
the other). The file, ``code/mintransformer/results/ablations.json`` by default, holds every
run, the summary per variant (mean, standard deviation, min, max over seeds), and under ``made``
the versions, processor, seeds and wall time of each invocation; with ``--rows`` or ``--variants`` the
runs already in the file are kept, except those of the variants and seeds run again. Chapter 11
pairs runs by seed: add seeds to a variant together with its reference's (``--first-seed``), on a
machine that repeats the stored runs of a seed exactly, or the pairs are pairs in name only.
"""

import argparse
import concurrent.futures
import datetime
import json
import multiprocessing
import os
import pathlib
import platform
import sys
import time

from machine import cpu_name  # scripts/machine.py

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "code" / "mintransformer" / "results" / "ablations.json"


def _one_thread():
    """Runs in each worker before TensorFlow is imported there."""
    os.environ.update(OMP_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1")


def _work(job):
    name, seed, steps, eval_limit = job
    from mintransformer.recipes import ablations  # noqa: PLC0415  (TensorFlow starts in the worker)

    ablations.set_determinism()
    return ablations.run(name, seed, steps=steps, eval_limit=eval_limit)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="*", help="table rows to run (default: all)")
    parser.add_argument("--variants", nargs="*", help="variants to run (default: all of the rows)")
    parser.add_argument("--seeds", type=int, default=3, help="how many seeds (default 3)")
    parser.add_argument("--first-seed", type=int, default=0, help="the seeds are FIRST, FIRST+1, ... (default 0)")
    parser.add_argument("--steps", type=int, default=None, help="updates per run (default: the variants' own)")
    parser.add_argument("--workers", type=int, default=2, help="processes side by side (default 2)")
    parser.add_argument("--eval-limit", type=int, default=None,
                        help="score only the first N held-out pairs of each split: smoke tests only (default: all)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "code"))
    from mintransformer.recipes import ablations  # noqa: PLC0415

    names = args.variants or [n for n, (row, _, _) in ablations.VARIANTS.items()
                              if not args.rows or row in args.rows]
    unknown = set(names) - set(ablations.VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; known: {list(ablations.VARIANTS)}")
    # The longest runs first, so that the workers finish together.
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    jobs = sorted(((n, s, args.steps, args.eval_limit) for n in names for s in seeds),
                  key=lambda job: -ablations.config(job[0])["model"]["num_layers"])

    start = time.perf_counter()
    runs = []
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=context, initializer=_one_thread) as pool:
        for result in pool.map(_work, jobs):
            runs.append(result)
            extra = f", longer strings {result['exact_long']:.3f}" if "exact_long" in result else ""
            print(f"{result['name']:>20} seed {result['seed']}: exact match {result['exact']:.3f}{extra}, "
                  f"perplexity {result['perplexity']:.3f}, {result['seconds']:.0f} s", flush=True)
    wall = time.perf_counter() - start

    kept, made = [], []
    if args.out.exists() and (args.rows or args.variants):
        previous = json.loads(args.out.read_text())
        kept = [r for r in previous["runs"] if r["name"] not in names or r["seed"] not in seeds]
        remaining = {(r["name"], r["seed"]) for r in kept}
        made = [m for m in previous["made"] if any(
            (n, s) in remaining for n in m["variants"]
            for s in range(m.get("first_seed", 0), m.get("first_seed", 0) + m["seeds"]))]
    import keras  # noqa: PLC0415
    import numpy  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415

    everything = kept + runs
    everything.sort(key=lambda r: (list(ablations.VARIANTS).index(r["name"]), r["seed"]))
    results = dict(
        made=made + [dict(
            date=datetime.date.today().isoformat(), processor=cpu_name(), workers=args.workers,
            python=platform.python_version(), tensorflow=tf.__version__, keras=keras.__version__,
            numpy=numpy.__version__, wall_seconds=round(wall), variants=names, seeds=args.seeds,
            first_seed=args.first_seed, **({} if args.eval_limit is None else dict(eval_limit=args.eval_limit)))],
        base=ablations.BASE, runs=everything, summary=ablations.summarize(everything),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{len(runs)} runs of {len(names)} variants in {wall / 60:.1f} min of wall time "
          f"({args.workers} workers); wrote {args.out}")


if __name__ == "__main__":
    main()
