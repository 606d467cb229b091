"""translation.analysis: the helpers of chapter 10's analyses, on small cases worked by hand."""

import collections

import numpy as np
import pytest
import sacrebleu

from mintransformer.translation import analysis, bpe

TRAIN = ["el perro come pan.", "el gato come pescado.", "the dog eats bread.", "the cat eats fish."]


@pytest.fixture(scope="module")
def tokenizer():
    return bpe.learn_bpe(TRAIN, 300)


def test_words_keep_case_and_split_punctuation():
    assert analysis.words("Y dijo Dios: Sea la luz.") == ["Y", "dijo", "Dios", ":", "Sea", "la", "luz", "."]
    assert analysis.words("¿Quién?  año 12") == ["¿", "Quién", "?", "año", "12"]
    assert analysis.words("") == []


def test_segment_three_ways(tokenizer):
    text = "el perro come"
    assert analysis.segment(text, "characters") == list(text)
    assert analysis.segment(text, "words") == ["el", "perro", "come"]
    subwords = analysis.segment(text, "subwords", tokenizer)
    assert "".join(subwords) == text and subwords == tokenizer.tokens(text)
    with pytest.raises(ValueError, match="need a tokenizer"):
        analysis.segment(text, "subwords")
    with pytest.raises(ValueError, match="unit must be one of"):
        analysis.segment(text, "bytes")


def test_segmentation_table_counts_unseen_units(tokenizer):
    test = ["el perro come queso.", "the cat eats ½"]  # "queso" and "½" never seen in training
    rows = {row["unit"]: row for row in analysis.segmentation_table(tokenizer, TRAIN, test)}
    assert list(rows) == ["characters", "words", "subwords"]
    # Words: 5 + 4 = 9 occurrences, "queso" and "½" unseen; 9 types of which 2 unseen.
    assert rows["words"]["per_text"] == 4.5
    assert rows["words"]["unseen"] == pytest.approx(2 / 9) and rows["words"]["unseen_types"] == pytest.approx(2 / 9)
    assert rows["words"]["vocabulary"] == len({w for t in TRAIN for w in analysis.words(t)})
    # Characters: "q", "u" (of "queso") and "½" never occur in training.
    characters = collections.Counter("".join(test))
    known = set("".join(TRAIN))
    assert rows["characters"]["unseen"] == pytest.approx(sum(n for c, n in characters.items() if c not in known)
                                                         / sum(characters.values()))
    assert rows["characters"]["vocabulary"] == len(known)
    assert sorted(set(characters) - known) == ["q", "u", "½"]
    # Subwords: the new characters become byte tokens (1, 1 and 2 bytes of UTF-8), nothing else does.
    ids = [tokenizer.encode(t) for t in test]
    bytes_used = sum(3 <= i < 259 for row in ids for i in row)
    assert bytes_used == sum(len(c.encode()) for c in "".join(test) if c not in known) == 1 + 1 + 2
    assert rows["subwords"]["unseen"] == pytest.approx(bytes_used / sum(map(len, ids)))
    assert rows["subwords"]["vocabulary"] == tokenizer.vocab_size
    assert rows["subwords"]["per_text"] == pytest.approx(np.mean([len(i) for i in ids]))
    clean = {row["unit"]: row for row in analysis.segmentation_table(tokenizer, TRAIN, ["el gato come pan."])}
    assert clean["subwords"]["unseen"] == clean["words"]["unseen"] == clean["characters"]["unseen"] == 0
    with pytest.raises(TypeError, match="lists of strings"):
        analysis.segmentation_table(tokenizer, TRAIN, "el gato")


def test_bleu_by_length_is_sacrebleu_on_each_bucket():
    hypotheses = ["the cat eats fish", "a dog", "the dog eats the bread today", "fish"]
    references = ["the cat eats fish", "the dog", "the dog eats bread today", "the fish"]
    lengths = [4, 2, 6, 1]
    rows = analysis.bleu_by_length(hypotheses, references, lengths, [0, 3, 5, 10, 20])
    assert [(r["low"], r["high"], r["count"]) for r in rows] == [(0, 3, 2), (3, 5, 1), (5, 10, 1)]  # 10-20 empty
    expected = sacrebleu.corpus_bleu(["a dog", "fish"], [["the dog", "the fish"]]).score
    assert rows[0]["bleu"].score == pytest.approx(expected)
    assert rows[1]["bleu"].score == pytest.approx(100.0)
    with pytest.raises(ValueError, match="one of each per sentence"):
        analysis.bleu_by_length(hypotheses, references, lengths[:3], [0, 10])
    with pytest.raises(ValueError, match="edges must increase"):
        analysis.bleu_by_length(hypotheses, references, lengths, [0, 5, 5])


def test_sentence_bleus_and_largest_gains():
    references = ["the cat eats fish today", "the dog sleeps in the house", "he went home", "I am"]
    first = ["the cat eats fish today", "a dog sleeps", "he went to his home", "I am"]
    second = ["the cat eats a fish today", "the dog sleeps in the house", "he went home", "I am"]
    scores = analysis.sentence_bleus(second, references)
    assert scores[1] == pytest.approx(100.0)
    assert scores[0] == pytest.approx(sacrebleu.sentence_bleu(second[0], [references[0]]).score)
    gains = analysis.sentence_bleus(second, references) - analysis.sentence_bleus(first, references)
    assert analysis.largest_gains(first, second, references) == [int(i) for i in np.argsort(-gains)[:2]]
    assert analysis.largest_gains(first, second, references, count=1) == [int(np.argmax(gains))]
    assert analysis.largest_gains(second, first, references) == [0]  # the only sentence where first wins
    with pytest.raises(ValueError, match="hypotheses for"):
        analysis.sentence_bleus(first[:2], references)


def test_rare_words():
    train = ["Y Moisés dijo a Aarón", "Moisés subió al monte", "y dijo y"]
    assert analysis.rare_words(train, "Moisés y Mardoqueo dijo a Ester") == ["Mardoqueo", "Ester"]
    assert analysis.rare_words(train, "Moisés y Aarón y Ester", max_count=1) == ["Aarón", "Ester"]
    assert analysis.rare_words(train, "Moisés vio zarzas y Ester", capitalized=True) == ["Ester"]
    counts = analysis.word_counts(train)
    assert counts["Moisés"] == 2 and analysis.rare_words(counts, "Mardoqueo, Mardoqueo") == ["Mardoqueo"]
    with pytest.raises(TypeError, match="not one string"):
        analysis.word_counts("Moisés")


def test_paired_bootstrap_agrees_with_sacrebleu_and_sees_a_clear_difference():
    references = [f"the man number {i} went to the city of david and sat down" for i in range(30)]
    good = [r.replace("sat down", "sat") for r in references]
    bad = [" ".join(r.split()[:5]) for r in references]
    whole = analysis._corpus_bleu(analysis._bleu_statistics(good, references))
    assert whole == pytest.approx(sacrebleu.corpus_bleu(good, [references]).score)
    result = analysis.paired_bootstrap(bad, good, references, samples=200)
    expected = sacrebleu.corpus_bleu(good, [references]).score - sacrebleu.corpus_bleu(bad, [references]).score
    assert result["difference"] == pytest.approx(expected)
    assert result["wins"] == 1.0 and 0 < result["low"] <= result["high"]
    same = analysis.paired_bootstrap(good, good, references, samples=50)
    assert same == dict(difference=0.0, low=0.0, high=0.0, wins=0.0)
    again = analysis.paired_bootstrap(bad, good, references, samples=200)
    assert again == result  # seeded
    with pytest.raises(ValueError, match="one output of each system per reference"):
        analysis.paired_bootstrap(bad[:3], good, references)


def test_sequence_log_probs_is_the_teacher_forced_sum(tokenizer):
    import keras
    from keras import ops

    from mintransformer.translation import recipe

    keras.utils.set_random_seed(0)
    model = recipe.build_translation_model(tokenizer.vocab_size, num_layers=1, d_model=16, num_heads=2, dff=32,
                                           max_length=32, dropout=0.0)
    sources, outputs = ["el perro come", "el gato come pan."], ["the dog eats", "the cat"]
    log_probs, lengths = analysis.sequence_log_probs(model, tokenizer, sources, outputs, batch_size=1)
    for source, output, got, length in zip(sources, outputs, log_probs, lengths):
        target = tokenizer.encode(output) + [tokenizer.end_id]
        logits = ops.convert_to_numpy(model((np.array([tokenizer.encode(source)]),
                                             np.array([[tokenizer.start_id] + target[:-1]])), training=False))[0]
        logits = logits.astype("float64")
        log_softmax = logits - logits.max(-1, keepdims=True)
        log_softmax -= np.log(np.exp(log_softmax).sum(-1, keepdims=True))
        assert length == len(target)
        assert got == pytest.approx(sum(log_softmax[t, y] for t, y in enumerate(target)), abs=1e-4)
    batched, _ = analysis.sequence_log_probs(model, tokenizer, sources, outputs)  # padded together
    assert np.allclose(batched, log_probs, atol=1e-4)
    with pytest.raises(ValueError, match="sources for"):
        analysis.sequence_log_probs(model, tokenizer, sources, outputs[:1])
    long = " ".join(["the dog eats"] * 20)  # more than max_length = 32 tokens: cut, no <end>
    cut, length = analysis.sequence_log_probs(model, tokenizer, sources[:1], [long])
    assert length[0] == 32 and np.isfinite(cut[0])
