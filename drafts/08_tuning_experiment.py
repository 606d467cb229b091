import sys, time, json
import mintransformer as mt
import keras, numpy as np, tensorflow as tf
from mintransformer import data, recipes

name = sys.argv[1]; epochs = int(sys.argv[2])
over = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
em_epochs = json.loads(sys.argv[4]) if len(sys.argv) > 4 else [epochs]
task = recipes.TASKS[name]
for k, v in over.items():
    if k == "seed": continue
    if k in ("num_layers", "d_model", "num_heads", "dff", "dropout"):
        task["model"][k] = v
    elif k == "count":
        n = v; ml = over.get("maxlen", 12)
        task["pairs"] = (lambda n=n: data.reversal_pairs(n, max_length=ml, seed=0)) if name == "reversal" else (lambda n=n: data.date_pairs(n, seed=0))
    elif k in ("maxlen", "seed"): pass
    else:
        task[k] = v
print(task, flush=True)
SEED = over.get("seed", 0)
keras.utils.set_random_seed(SEED)
tf.config.experimental.enable_op_determinism()
tok, (train, val, test) = recipes.task_data(name)
print(len(train), len(val), len(test), flush=True)
model = recipes.build_model(name, tok)
recipes.compile_model(model, task["warmup_steps"])
tr = data.make_dataset(train, tok, 64, shuffle=True, seed=SEED)
va = data.make_dataset(val, tok, 64)
x, y = next(iter(tr))
yp = model(x); model.compute_metrics(x, y, yp); model.reset_metrics(); model.optimizer.build(model.trainable_variables)
t0 = time.time()
class CB(keras.callbacks.Callback):
    def on_epoch_end(self, e, logs):
        em = recipes.exact_match(model, tok, val, task["output_length"]) if e + 1 in em_epochs else float("nan")
        E = model.source_embedding.embedding.embeddings.numpy()
        en = np.linalg.norm(E[3:], axis=1).mean() * np.sqrt(model.d_model)
        print(e + 1, f"emb*sqrt(d) norm={en:.2f}", {k: round(v, 4) for k, v in logs.items()}, f"val_em={em:.4f}", f"{time.time()-t0:.1f}s", flush=True)
model.fit(tr, validation_data=va, epochs=epochs, verbose=0, shuffle=False, callbacks=[CB()])
t1 = time.time()
print("train s", round(t1 - t0, 1))
print("test EM", recipes.exact_match(model, tok, test, task["output_length"]), "decode s", round(time.time() - t1, 1))

preds = recipes.translate(model, tok, [s for s, _ in test], task["output_length"])
import collections
errs = [(s, t, p) for p, (s, t) in zip(preds, test) if p != t]
print("errors by source length", sorted(collections.Counter(len(s) for s, _, _ in errs).items()))
print("test by length", sorted(collections.Counter(len(s) for s, _ in test).items()))
for e in errs[:12]: print(e)
