"""Score the shipped translation model on the whole test books, with beam search too, and save it.

    python scripts/evaluate_translation_model.py [--dev-every N] [--alphas 0.6 1.0 1.4]

Beam search on the 960 test verses takes about 11 minutes on two CPU cores, too long for chapter
10, which decodes a subset live. This script does what the chapter cannot, as the paper does it
(section 6.1): beam search with k = 4, with the paper's length penalty alpha = 0.6, and with the
alpha chosen on the development book (Acts, every ``--dev-every``-th verse, to save time), never
on the test books. It writes ``code/mintransformer/pretrained/translation_evaluation.json``: the
machine, versions and times, sacreBLEU's BLEU and chrF (with their signatures) of greedy decoding
and of both beam searches on the test books, the development scores behind the choice of alpha,
a paired bootstrap of the chosen beam against greedy, and every test output, so that the chapter
recomputes each score from the outputs and checks that decoding a sample again gives them.
"""

import argparse
import datetime
import json
import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from machine import cpu_name  # noqa: E402

OUTPUT = (pathlib.Path(__file__).resolve().parents[1] / "code" / "mintransformer" / "pretrained"
          / "translation_evaluation.json")
BEAM_SIZE = 4


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev-every", type=int, default=4)
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.6, 1.0, 1.4])
    parser.add_argument("--test-every", type=int, default=1, help="every N-th test verse (a quick check)")
    parser.add_argument("--output", type=pathlib.Path, default=OUTPUT)
    args = parser.parse_args()

    import keras
    import numpy as np
    import sacrebleu
    import tensorflow as tf

    from mintransformer.translation import analysis, corpus, evaluation, recipe

    started = time.perf_counter()
    train, dev, test = corpus.split_by_book(corpus.bible_verses())
    model, tokenizer, _ = recipe.load_pretrained_translation_model()
    dev, test = dev[::args.dev_every], test[::args.test_every]
    sources, references = [v.spanish for v in test], [v.english for v in test]

    def run(texts, **kw):
        t = time.perf_counter()
        outputs = evaluation.translate(model, tokenizer, texts, **kw)
        return outputs, round(time.perf_counter() - t, 1)

    def scores(outputs, refs, seconds):
        b, c = evaluation.bleu(outputs, refs), evaluation.chrf(outputs, refs)
        return dict(bleu=round(b.score, 2), chrf=round(c.score, 2), brevity_penalty=round(b.bp, 4),
                    length_ratio=round(b.sys_len / b.ref_len, 4), seconds=seconds)

    development = {}
    for alpha in args.alphas:
        outputs, seconds = run([v.spanish for v in dev], beam_size=BEAM_SIZE, alpha=alpha)
        development[str(alpha)] = scores(outputs, [v.english for v in dev], seconds)
        print(f"development ({len(dev)} verses of Acts), beam {BEAM_SIZE}, alpha {alpha}:",
              development[str(alpha)], flush=True)
    chosen = max(args.alphas, key=lambda a: development[str(a)]["bleu"])

    results, outputs = {}, {}
    systems = [("greedy", dict())] + [(f"beam{BEAM_SIZE}_alpha{a}", dict(beam_size=BEAM_SIZE, alpha=a))
                                      for a in sorted({0.6, chosen})]
    for name, kw in systems:
        outputs[name], seconds = run(sources, **kw)
        results[name] = scores(outputs[name], references, seconds)
        print(f"test ({len(test)} verses), {name}:", results[name], flush=True)
    def signature(metric):  # what evaluation.bleu and evaluation.chrf use: sacreBLEU's defaults
        metric.corpus_score(outputs["greedy"], [references])
        return str(metric.get_signature())

    best = f"beam{BEAM_SIZE}_alpha{chosen}"
    bootstrap = {k: round(v, 3) for k, v in
                 analysis.paired_bootstrap(outputs["greedy"], outputs[best], references).items()}
    print(f"paired bootstrap, {best} against greedy:", bootstrap)

    record = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{cpu_name()}",
        "python": platform.python_version(), "tensorflow": tf.__version__, "keras": keras.__version__,
        "numpy": np.__version__, "sacrebleu": sacrebleu.__version__,
        "bleu_signature": signature(sacrebleu.metrics.BLEU()), "chrf_signature": signature(sacrebleu.metrics.CHRF()),
        "beam_size": BEAM_SIZE, "test_every": args.test_every, "development_verses": len(dev), "development_every": args.dev_every,
        "development": development, "chosen_alpha": chosen, "test_verses": len(test),
        "test": results, "bootstrap_best_vs_greedy": bootstrap,
        "total_seconds": round(time.perf_counter() - started),
        "command": "python scripts/evaluate_translation_model.py",
        "outputs": outputs,
    }
    args.output.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print("wrote", args.output, f"({record['total_seconds']} s)")


if __name__ == "__main__":
    main()
