"""Train the Spanish-to-English model of chapter 10 and save what the chapter loads.

    python scripts/train_translation_model.py [--epochs N] [--quick]

The paper's pipeline at the size of ``mintransformer.translation.TRANSLATION``:
1. the shipped corpus (``translation.corpus``), split by book;
2. one byte-pair vocabulary for both languages, learned on the training books only;
3. batches of about ``max_tokens`` tokens grouped by length (``translation.token_dataset``);
4. ``MinTransformer`` with the source embedding, target embedding and output projection tied;
   Adam(0.9, 0.98, 1e-9) with the paper's warm-up schedule, label smoothing 0.1
   (``recipes.compile_model``);
5. the weights of every epoch kept, and the last ``average_last`` averaged (paper, section 6.1).

It writes, into ``code/mintransformer/pretrained/`` (shipped inside the package, so that Colab
finds them): the averaged weights, the tokenizer, and a JSON record of the run (machine, versions,
wall time, settings, the losses of every epoch, and the test BLEU of the last epoch and of the
average, greedy). Training is deterministic on one machine; another CPU rounds differently and
trains a slightly different model, so the chapter's stored outputs are those of the shipped files.

Its run of 2026-11-27 (2 cores of an AMD EPYC, shared with other work; TensorFlow 2.21.0) took
67 minutes, 66 of them training (12 epochs, 3,900 steps), and printed the losses of every epoch,
then

    test BLEU, greedy: epoch 12 25.1, average of epochs 10-12 26.6
    load_pretrained_translation_model(): test BLEU 26.59, as saved

(That run saved the optimizer's state in the weights file as well; the file was then written again
from a model without an optimizer, as the script now does, and its weights checked equal.)
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import shutil
import sys
import tempfile
import time

import mintransformer  # noqa: F401  (first: it silences TensorFlow's start-up log)

import keras
import numpy as np
import tensorflow as tf
from mintransformer import recipes
from mintransformer.translation import bpe, corpus, evaluation, recipe
from mintransformer.translation.batching import token_dataset

from machine import cpu_name  # scripts/machine.py

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "code" / "mintransformer" / "pretrained"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=recipe.TRANSLATION["epochs"])
    parser.add_argument("--quick", action="store_true", help="a smoke test: 2 epochs of 2,000 verses, nothing saved")
    args = parser.parse_args()
    settings = recipe.TRANSLATION
    begin = time.perf_counter()

    keras.utils.set_random_seed(0)
    tf.config.experimental.enable_op_determinism()
    train, dev, test = corpus.split_by_book(corpus.bible_verses())
    if args.quick:
        train, dev, test, args.epochs = train[:2000], dev[:200], test[:200], 2
    started = time.perf_counter()
    tokenizer = bpe.BPE.learn([v.spanish for v in train] + [v.english for v in train], settings["vocab_size"])
    bpe_seconds = time.perf_counter() - started
    print(f"{len(train)} training verses, {len(dev)} development, {len(test)} test; "
          f"BPE of {tokenizer.vocab_size} tokens learned in {bpe_seconds:.0f} s", flush=True)

    train_ids = recipe.encode_split(tokenizer, train, settings["max_train_tokens"])
    dev_ids = recipe.encode_split(tokenizer, dev, settings["max_train_tokens"])
    print(f"kept {len(train_ids[0])} training pairs of at most {settings['max_train_tokens']} tokens; "
          f"{sum(map(len, train_ids[0]))} source and {sum(map(len, train_ids[2]))} target tokens", flush=True)
    train_ds = token_dataset(*train_ids, settings["max_tokens"], seed=0)
    dev_ds = token_dataset(*dev_ids, settings["max_tokens"], seed=0)

    keras.utils.set_random_seed(0)
    model = recipe.build_translation_model(tokenizer.vocab_size)
    recipes.compile_model(model, settings["warmup_steps"], label_smoothing=settings["label_smoothing"])
    print(f"model: {model.count_params():,} parameters", flush=True)

    checkpoints = tempfile.mkdtemp()
    save = keras.callbacks.ModelCheckpoint(os.path.join(checkpoints, "epoch-{epoch:02d}.weights.h5"),
                                           save_weights_only=True)

    class Progress(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(f"epoch {epoch + 1}: loss {logs['loss']:.3f}, val_loss {logs['val_loss']:.3f}, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)

    started = time.perf_counter()
    history = model.fit(train_ds, validation_data=dev_ds, epochs=args.epochs, callbacks=[save, Progress()],
                        shuffle=False, verbose=0)  # the batches are shuffled by token_dataset
    train_seconds = time.perf_counter() - started
    steps = int(model.optimizer.iterations.numpy())

    sources, references = [v.spanish for v in test], [v.english for v in test]
    output_length = settings["model"]["max_length"]
    last_bleu = evaluation.bleu(evaluation.translate(model, tokenizer, sources, output_length), references)
    first = max(1, args.epochs - settings["average_last"] + 1)
    recipes.average_checkpoints(model, [os.path.join(checkpoints, f"epoch-{e:02d}.weights.h5")
                                        for e in range(first, args.epochs + 1)])
    shutil.rmtree(checkpoints)
    averaged_bleu = evaluation.bleu(evaluation.translate(model, tokenizer, sources, output_length), references)
    print(f"test BLEU, greedy: epoch {args.epochs} {last_bleu.score:.1f}, "
          f"average of epochs {first}-{args.epochs} {averaged_bleu.score:.1f}", flush=True)
    if args.quick:
        return

    record = dict(
        date=datetime.date.today().isoformat(), machine=f"{os.cpu_count()} cores of {cpu_name()}",
        python=platform.python_version(), tensorflow=tf.__version__, keras=keras.__version__, numpy=np.__version__,
        settings=settings, epochs=args.epochs, steps=steps, parameters=model.count_params(),
        train_pairs=len(train_ids[0]), bpe_seconds=round(bpe_seconds, 1), train_seconds=round(train_seconds),
        total_seconds=round(time.perf_counter() - begin),
        loss=[round(x, 4) for x in history.history["loss"]], val_loss=[round(x, 4) for x in history.history["val_loss"]],
        test_bleu_greedy_last_epoch=round(last_bleu.score, 2), test_bleu_greedy_averaged=round(averaged_bleu.score, 2),
        averaged_epochs=[first, args.epochs], command=" ".join(["python"] + sys.argv),
    )
    PRETRAINED.mkdir(parents=True, exist_ok=True)
    # A model without an optimizer, so that Adam's two moments per weight are not saved too (the file
    # would be three times as large).
    shipped = recipe.build_translation_model(tokenizer.vocab_size)
    shipped.set_weights(model.get_weights())
    shipped.save_weights(PRETRAINED / recipe.WEIGHTS)
    tokenizer.save(PRETRAINED / recipe.TOKENIZER)
    (PRETRAINED / recipe.TRAINING_RECORD).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))

    loaded, loaded_tokenizer, _ = recipe.load_pretrained_translation_model()
    again = evaluation.bleu(evaluation.translate(loaded, loaded_tokenizer, sources, output_length), references)
    assert again.score == averaged_bleu.score, (again.score, averaged_bleu.score)
    print(f"load_pretrained_translation_model(): test BLEU {again.score:.2f}, as saved")


if __name__ == "__main__":
    main()
