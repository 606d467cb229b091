import tempfile, time
import mintransformer as mt
from mintransformer import recipes
import numpy as np, keras, tensorflow as tf
tok, (train, val, test) = recipes.task_data("dates")
model = recipes.build_model("dates", tok)
model((np.ones((1, 4), "int32"), np.ones((1, 4), "int32")))
model.load_weights("/tmp/ch9/dev_date.weights.h5")
OUT = recipes.TASKS["dates"]["output_length"]

class DateNormalizer(tf.Module):
    def __init__(self, model, tokenizer, output_length):
        super().__init__()
        self.model, self.output_length = model, output_length
        self.start_id, self.end_id, self.pad_id = tokenizer.start_id, tokenizer.end_id, tokenizer.pad_id
        chars = list(tokenizer.alphabet)
        self.char_to_id = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant([ord(c) for c in chars], tf.int32),
                tf.constant([tokenizer.token_to_id[c] for c in chars], tf.int32)),
            default_value=tokenizer.pad_id)
        # id -> text; specials print as nothing
        self.id_to_text = tf.constant([t if i > tokenizer.end_id else "" for i, t in enumerate(tokenizer.id_to_token)])
        banned = np.zeros(tokenizer.vocab_size, "float32")
        banned[[tokenizer.pad_id, tokenizer.start_id]] = -1e9
        self.banned = tf.constant(banned)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, texts):
        codes = tf.strings.unicode_decode(texts, "UTF-8")  # ragged (B, None)
        source = self.char_to_id.lookup(codes).to_tensor(default_value=self.pad_id)  # (B, S)
        batch = tf.shape(source)[0]
        caches = self.model.start_cache(source, self.output_length)
        token = tf.fill([batch, 1], self.start_id)
        done = tf.zeros([batch], tf.bool)
        outputs = []
        for t in range(self.output_length):
            logits, caches = self.model.decode_step(token, t, caches, source)  # (B, V)
            next_id = tf.argmax(logits + self.banned, axis=-1, output_type=tf.int32)  # (B,)
            outputs.append(tf.where(done, self.pad_id, next_id))
            done = done | tf.equal(next_id, self.end_id)
            token = next_id[:, None]
        ids = tf.stack(outputs, axis=1)  # (B, L)
        finished = tf.cumsum(tf.cast(tf.equal(ids, self.end_id), tf.int32), axis=1) > 0
        text = tf.gather(self.id_to_text, tf.where(finished, self.pad_id, ids))
        return tf.strings.reduce_join(text, axis=1)

m = DateNormalizer(model, tok, OUT)
texts = ["Friday, 13 October 2023", "march 3rd, 98", "Tuesday, 17 March 1998", "12/25/49", "2001/9/11"]
t=time.time(); print(m(tf.constant(texts)).numpy(), time.time()-t)
d = tempfile.mkdtemp()
t=time.time(); tf.saved_model.save(m, d); print("save", time.time()-t)
t=time.time(); r = tf.saved_model.load(d); print("load", time.time()-t)
t=time.time(); out = [s.decode() for s in r(tf.constant(texts)).numpy()]; print(out, time.time()-t)
print(recipes.translate(model, tok, texts, OUT))
assert out == recipes.translate(model, tok, texts, OUT)
