"""Batches by length (translation.batching) and batched translation (translation.evaluation)."""

import keras
import numpy as np
import pytest

import mintransformer as mt
from mintransformer import data
from mintransformer.translation import batching, evaluation


def lengths(count=3000, seed=0):
    rng = np.random.default_rng(seed)
    source = rng.integers(1, 120, count)
    return source, np.clip(source + rng.integers(-10, 11, count), 1, None)


def test_length_batches_cover_every_example_once_within_the_budget():
    source, target = lengths()
    batches = batching.length_batches(source, target, max_tokens=1000, seed=3)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(source)))
    for batch in batches:
        assert len(batch) * max(source[batch].max(), target[batch].max()) <= 1000
    # Greedy filling: a batch stops only where the next example would break the budget.
    longer = np.maximum(source, target)
    order = np.concatenate(sorted(batches, key=lambda b: (longer[b].min(), longer[b].max())))
    assert np.all(np.diff(longer[order]) >= 0)  # cut from one sorted order
    ends = sorted(batches, key=lambda b: (longer[b].min(), longer[b].max()))
    for batch, following in zip(ends, ends[1:]):  # each batch stopped where the next example broke the budget
        assert (len(batch) + 1) * longer[following].min() > 1000


def test_length_batches_pad_far_less_than_random_batches():
    source, target = lengths()
    by_length = batching.length_batches(source, target, max_tokens=1000)
    sizes = [len(b) for b in by_length]
    random = batching.random_batches(len(source), int(np.mean(sizes)))
    saved = batching.padding_fraction(by_length, source, target)
    wasted = batching.padding_fraction(random, source, target)
    assert saved < 0.1 < 0.4 < wasted, (saved, wasted)


def test_length_batches_change_with_the_seed_and_are_reproducible():
    source, target = lengths()
    a = batching.length_batches(source, target, 1000, seed=0)
    b = batching.length_batches(source, target, 1000, seed=0)
    c = batching.length_batches(source, target, 1000, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(len(x) == len(y) and np.array_equal(x, y) for x, y in zip(a, c))


def test_length_batches_refuse_what_cannot_fit():
    with pytest.raises(ValueError, match="does not fit"):
        batching.length_batches([5, 50], [5, 60], max_tokens=40)
    with pytest.raises(ValueError, match="one length each"):
        batching.length_batches([5, 50], [5], max_tokens=400)
    with pytest.raises(ValueError, match="counts of tokens"):
        batching.length_batches([5.5, 50], [5, 6], max_tokens=400)
    with pytest.raises(ValueError, match="counts of tokens"):
        batching.length_batches([5, -1], [5, 6], max_tokens=400)
    with pytest.raises(ValueError, match="no batches"):
        batching.padding_fraction([], [1], [1])


def test_token_dataset_gives_new_batches_every_pass_and_shifted_labels():
    rng = np.random.default_rng(0)
    sources = [list(rng.integers(3, 20, n)) for n in rng.integers(1, 30, 200)]
    targets = [list(rng.integers(3, 20, n)) for n in rng.integers(1, 30, 200)]
    dataset = batching.token_dataset(sources, [[data.START] + t for t in targets], [t + [data.END] for t in targets],
                                     max_tokens=120)
    first = [x[0].numpy().tolist() for (x, _), _ in dataset]
    second = [x[0].numpy().tolist() for (x, _), _ in dataset]
    assert first != second
    seen = 0
    for (source, target_in), target_out in dataset:
        assert source.shape[0] * max(source.shape[1], target_in.shape[1]) <= 120
        for row_in, row_out in zip(target_in.numpy(), target_out.numpy()):
            row_in, row_out = row_in[row_in != data.PAD], row_out[row_out != data.PAD]
            assert row_in[0] == data.START and row_out[-1] == data.END
            assert np.array_equal(row_in[1:], row_out[:-1])  # teacher forcing: shifted by one
        seen += source.shape[0]
    assert seen == 200


def test_translate_sorts_by_length_and_returns_the_callers_order():
    tokenizer = data.CharTokenizer(data.REVERSAL_ALPHABET)
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(num_layers=1, d_model=16, num_heads=2, dff=32, input_vocab_size=tokenizer.vocab_size,
                              target_vocab_size=tokenizer.vocab_size, max_length=32, dropout=0.0)
    texts = ["abcdefghij", "ab", "abc"]  # batches of max_tokens=12: ("ab", "abc") padded to 8, then one padded to 16

    def alone(text, decoder, **options):  # one text in a batch of its own, padded as translate pads it
        source = data.pad([tokenizer.encode(text)], length=8 if len(text) <= 8 else 16)
        return tokenizer.decode(decoder(model, source, tokenizer.start_id, tokenizer.end_id, 8, **options)[0])

    assert evaluation.translate(model, tokenizer, texts, 8, max_tokens=12) == [alone(t, mt.greedy_decode) for t in texts]
    assert evaluation.translate(model, tokenizer, texts, 8, beam_size=2, max_tokens=24) == [
        alone(t, mt.beam_search, beam_size=2) for t in texts]
    with pytest.raises(ValueError, match="longer than the model's max_length"):
        evaluation.translate(model, tokenizer, ["a" * 40], 8)
    with pytest.raises(TypeError, match="not one string"):
        evaluation.translate(model, tokenizer, "abc", 8)
    # A generator is a list of texts too; the paper's output length (input + 50) by default.
    assert evaluation.translate(model, tokenizer, (t for t in texts[1:]), max_tokens=12) == [
        tokenizer.decode(mt.greedy_decode(model, data.pad([tokenizer.encode(t)], length=8), tokenizer.start_id,
                                          tokenizer.end_id, 32)[0]) for t in texts[1:]]


def test_bleu_and_chrf_are_sacrebleus():
    import sacrebleu

    hypotheses, references = ["the cat sat on the mat", "a dog"], ["the cat sat on a mat", "the dog"]
    assert evaluation.bleu(hypotheses, references).score == sacrebleu.corpus_bleu(hypotheses, [references]).score
    assert evaluation.chrf(hypotheses, references).score == sacrebleu.corpus_chrf(hypotheses, [references]).score
    # sacreBLEU itself would cut the longer list short and score what is left: refused here.
    with pytest.raises(ValueError, match="one reference each"):
        evaluation.chrf(hypotheses + ["x y z"], references)
    with pytest.raises(ValueError, match="one reference each"):
        evaluation.bleu(hypotheses, references + ["x y z"])
    with pytest.raises(TypeError, match="not one string"):
        evaluation.bleu("abc", "abd")
    with pytest.raises(ValueError, match="no sentences"):
        evaluation.bleu([], [])
