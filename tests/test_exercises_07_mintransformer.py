"""Chapter 7's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import pathlib
import re

import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught

CHAPTER = "07_mintransformer"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (two exercises have per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-model-embed", ["my_embedding"]),
    ("ex-model-prenorm-count", ["param_count"]),
    ("ex-model-heads-free", ["package_mha_params", "keras_mha_params"]),
    ("ex-model-untied-share", ["untied_share", "tied_share"]),
    ("ex-model-start-token", ["start_mask_by_hand", "query_0_weights"]),
    ("ex-model-fix-masks", ["fixed_logits"]),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text, text
    placeholders = {n: (... if n.endswith(("share", "hand", "weights")) else stub) for n in names}
    passed, text = check(label, **placeholders)
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text


# ex-model-embed: the model's input, sqrt(D) E[tokens] + PE.

def _pe_concatenated(length, depth):
    pe = mt.positional_encoding(length, depth)
    return np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=-1)


def _embedding(factor=lambda D: np.sqrt(D), pe=mt.positional_encoding, scale_pe=False):
    def my_embedding(E, tokens):
        E, tokens = np.asarray(E), np.asarray(tokens)
        D, T = E.shape[1], tokens.shape[1]
        table = pe(T, D)
        return factor(D) * (E[tokens] + table) if scale_pe else factor(D) * E[tokens] + table
    return my_embedding


@pytest.mark.parametrize("wrong,message", [
    (_embedding(factor=lambda D: np.sqrt(512)), "sqrt(512) = 22.6, but d_model is 128"),
    (_embedding(factor=lambda D: 1.0), "without the factor sqrt(d_model)"),
    (_embedding(factor=lambda D: 1 / np.sqrt(D)), "You divide E[tokens] by sqrt(d_model)"),
    (_embedding(scale_pe=True), "You scale the positional encoding too"),
    (_embedding(pe=lambda T, D: np.zeros((T, D))), "The positional encoding is missing"),
    (_embedding(pe=_pe_concatenated), "all sines, then all cosines"),
    (_embedding(pe=lambda T, D: mt.positional_encoding(T + 1, D)[1:]), "Your positions start at 1"),
])
def test_embed_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-model-embed", my_embedding=wrong)
    assert not passed and message in text, text


def _embedding_with_the_layer(E, tokens):
    layer = mt.PositionalEmbedding(E.shape[0], E.shape[1], max_length=16)
    layer.build((None, None))
    layer.embedding.embeddings.assign(E)
    return layer(tokens)


def test_embed_refuses_the_packages_layer():
    result = mt.exercises.run_check(CHAPTER, "ex-model-embed", {"my_embedding": _embedding_with_the_layer})
    assert not result.passed_all
    assert all("`my_embedding` uses PositionalEmbedding" in tc.message for tc in result.test_case_results), \
        result.summary()


def test_embed_accepts_the_equation_and_leaves_the_random_generators_alone():
    np.random.seed(7)
    expected = np.random.rand()
    np.random.seed(7)
    passed, text = check("ex-model-embed", my_embedding=_embedding())
    assert passed, text
    assert np.random.rand() == expected  # the check did not reset the student's generators


def test_embed_sqrt_512_is_named_at_other_widths_too():
    result = mt.exercises.run_check(CHAPTER, "ex-model-embed",
                                    {"my_embedding": _embedding(factor=lambda D: np.sqrt(512))})
    failed = [tc for tc in result.test_case_results if not tc.passed]
    assert len(failed) == 3 and all("sqrt(512)" in tc.message for tc in failed)


# ex-model-prenorm-count: the parameter count as a formula.

def _count_check_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "count_check", f"{mt.exercises.tests_dir(CHAPTER)}/ex-model-prenorm-count.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def package_counts():
    """count_params() of every model the check knows the count of (the base models among them): built once."""
    import keras

    counts = {}
    for config in _count_check_module().COUNTS:
        N, D, h, dff, Vi, Vt, share, norm_first = config
        model = mt.MinTransformer(N, D, h, dff, Vi, Vt, max_length=8, share_embeddings=share,
                                  norm_first=norm_first)
        model.build(((1, 3), (1, 3)))
        counts[config] = model.count_params()
        del model
        keras.backend.clear_session()
    return counts


def test_the_checks_counts_are_the_packages(package_counts):
    module = _count_check_module()
    assert module.COUNTS == package_counts
    for config, count in module.COUNTS.items():
        assert module._formula(*config) == count, config
    assert module.COUNTS[module.BASE + (False,)] == 63_082_496  # the chapter's table


def _count(**mistake):
    module = _count_check_module()

    def param_count(num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                    share_embeddings=False, norm_first=False):
        return module._formula(num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                               share_embeddings, norm_first, **mistake)
    return param_count


def _count_by_hand(attention_bias=True, norm=2, final_norms=True, output_bias=True, tied_bias=False):
    """A count written independently of the check's formula, with one mistake switched on."""
    def param_count(num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                    share_embeddings=False, norm_first=False):
        D = d_model
        attention = 4 * D * D + (4 * D if attention_bias else 0)
        ffn = 2 * D * dff + dff + D
        layers = num_layers * (3 * attention + 2 * ffn + 5 * norm * D)
        if share_embeddings:
            vocabulary = input_vocab_size * D + (input_vocab_size if tied_bias else 0)
        else:
            vocabulary = input_vocab_size * D + 2 * target_vocab_size * D + (target_vocab_size if output_bias else 0)
        return vocabulary + layers + (4 * D if norm_first and final_norms else 0)
    return param_count


def test_count_accepts_an_independent_formula():
    passed, text = check("ex-model-prenorm-count", param_count=_count_by_hand())
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_count_by_hand(attention_bias=False), "attention layers without biases"),
    (_count_by_hand(norm=1), "Your layer norms have D parameters"),
    (_count_by_hand(final_norms=False), "each stack ends with a final layer norm"),
    (_count_by_hand(output_bias=False), "the output layer is a Dense layer with a bias"),
    (_count_by_hand(tied_bias=True), "the tied model has no bias of V entries"),
    (_count(heads_multiply=True), "Your attention count grows with num_heads"),
    (_count(cross=False), "each has masked self-attention AND cross-attention"),
    (_count(ffn_bias=False), "Your FFN has no biases"),
    (_count(final_norms="always"), "Only pre-norm stacks end with a final layer norm"),
    (_count(output="none"), "you counted only the two embeddings"),
    (_count(output="input vocab"), "maps to the TARGET vocabulary"),
    (_count(tied_copies=3), "count it once"),
])
def test_count_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-model-prenorm-count", param_count=wrong)
    assert not passed and message in text, text


def test_count_says_which_configuration_is_off():
    calls = []

    def param_count(**kwargs):
        calls.append(kwargs)
        return 1000

    passed, text = check("ex-model-prenorm-count", param_count=param_count)
    assert not passed and "param_count(num_layers=1, d_model=16" in text and "that is too few" in text, text
    assert not re.search(r"counts [0-9]", text), text  # the package's count is never printed
    assert_hides(text, *[c for c in _count_check_module().COUNTS.values() if c >= 1000])
    assert calls and all(c["input_vocab_size"] < 100 for c in calls)  # never the base model, while wrong
    passed, text = check("ex-model-prenorm-count", param_count=lambda **kwargs: "many")
    assert not passed and "must return a number" in text


def _count_by_building(num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                       share_embeddings=False, norm_first=False):
    model = mt.MinTransformer(num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                              max_length=8, share_embeddings=share_embeddings, norm_first=norm_first)
    model.build(((1, 3), (1, 3)))
    return model.count_params()


def test_count_refuses_to_build_a_model():
    result = mt.exercises.run_check(CHAPTER, "ex-model-prenorm-count", {"param_count": _count_by_building})
    assert not result.passed_all
    assert all("`param_count` builds MinTransformer: count the parameters with a formula" in tc.message
               for tc in result.test_case_results), result.summary()
    passed, text = check("ex-model-prenorm-count", param_count=_count_by_hand())  # the classes are restored
    assert passed, text


# ex-model-heads-free: the two attention layers' counts.

def _keras_count(d_model, num_heads, key_dim):
    width = num_heads * key_dim
    return 4 * d_model * width + 3 * width + d_model


@pytest.mark.parametrize("package,keras_count,message", [
    (lambda D, h: 4 * (D * D + D) * h, _keras_count, "they change with h"),
    (lambda D, h: 4 * D * D, _keras_count, "each of the four projections also has a bias"),
    (lambda D, h: 3 * (D * D + D), _keras_count, "the output projection W^O"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 3 * (D * h * k + h * k) + D * D + D,
     "its matrix is (h x key_dim) x d_model, not d_model x d_model"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 4 * D * h * k, "You count the matrices only"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 4 * (D * h * k + h * k), "its bias has d_model entries"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 4 * D * k + 3 * k + D, "key_dim is the width of EACH head"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 4 * (D * D + D), "That is the package's count"),
    # Right at d_model = 16 only: the check's other widths catch them.
    (lambda D, h: 1088, _keras_count, "Your count is the same at d_model = 16, 24 and 40"),
    (lambda D, h: 4.25 * D * D, _keras_count, "package_mha_params(24, 3) returns 2,448, too large"),
    (lambda D, h: 4 * (D * D + D), lambda D, h, k: 4 * 16 * h * k + 3 * h * k + 16,
     "keras_mha_params(24, 3, 8) returns 1,624, too small"),
])
def test_heads_free_rejects_the_known_mistakes(package, keras_count, message):
    passed, text = check("ex-model-heads-free", package_mha_params=package, keras_mha_params=keras_count)
    assert not passed and message in text, text
    assert not re.search(r" has [0-9]", text), text  # the real layer's count is never printed


def _package_count_by_building(d_model, num_heads):
    x = np.zeros((1, 3, d_model), dtype="float32")
    layer = mt.MultiHeadAttention(d_model, num_heads)
    layer(x, x, x)
    return layer.count_params()


def _keras_count_by_building(d_model, num_heads, key_dim):
    import keras

    x = np.zeros((1, 3, d_model), dtype="float32")
    layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim)
    layer(x, x)
    return layer.count_params()


def test_heads_free_refuses_to_build_layers():
    passed, text = check("ex-model-heads-free", package_mha_params=_package_count_by_building,
                         keras_mha_params=_keras_count_by_building)
    assert not passed, text
    assert "`package_mha_params` builds MultiHeadAttention: write the count as a formula" in text, text
    assert "`keras_mha_params` builds MultiHeadAttention" in text, text


def test_heads_free_accepts_the_formulas():
    passed, text = check("ex-model-heads-free", package_mha_params=lambda D, h: 4 * D * D + 4 * D,
                         keras_mha_params=_keras_count)
    assert passed, text


# ex-model-untied-share: two fractions, for N = 6, D = 256, d_ff = 1024, V = 37,000.

UNTIED, TIED = 28_453_000 / 39_512_200, 9_472_000 / 20_531_200


def test_untied_share_counts_are_the_packages():
    # The check's layer count (11,059,200) is the package's: a D = 256 model with a 10-token vocabulary.
    model = mt.MinTransformer(6, 256, 8, 1024, 10, 10, max_length=8, share_embeddings=True)
    model((np.array([[5, 6, 7]]), np.array([[1, 5, 6]])))
    assert model.count_params() - 10 * 256 == 11_059_200
    for run in (check, graded):
        passed, text = run("ex-model-untied-share", untied_share=UNTIED, tied_share=TIED)
        assert passed, text
        passed, text = run("ex-model-untied-share", untied_share=0.7201, tied_share=np.float64(0.4613))
        assert passed, text


@pytest.mark.parametrize("untied,tied,message", [
    (0.5630, TIED, "that is the base model's share (D = 512)"),
    (UNTIED, 0.3003, "that is the base model's share (D = 512)"),
    (0.72055, TIED, "you scaled the base model's layers by (D / 512)^2 (and N / 6)"),
    (UNTIED, 0.46190, "you scaled the base model's layers by (D / 512)^2 (and N / 6)"),
    (18_944_000 / (18_944_000 + 11_059_200), TIED, "the two embeddings only"),
    (28_416_000 / 39_475_200, TIED, "the output layer has a bias of V numbers too"),
    (1 - UNTIED, TIED, "that is the share of the layers"),
    (UNTIED, 1 - TIED, "that is the share of the layers"),
    (UNTIED, 9_472_000 / 39_512_200, "divide by the TIED model's total"),
    (72.0, TIED, "not a percentage"),
    (UNTIED, np.array([0.3, 0.3]), "must be one number"),
    (0.80, TIED, "`untied_share` is 0.8000: that is too large"),
    (UNTIED, 0.40, "`tied_share` is 0.4000: that is too small"),
    (0.72, TIED, "`untied_share` is 0.72: close, so probably the right count, rounded too much"),
])
def test_untied_share_rejects_the_known_mistakes(untied, tied, message):
    passed, text = graded("ex-model-untied-share", untied_share=untied, tied_share=tied)
    assert not passed and message in text, text
    assert "0.7201" not in text and "0.4613" not in text, text  # never the value
    assert_hides(text, UNTIED, TIED)


def test_untied_share_follows_the_students_sizes():
    student_id = next(f"s{i:03d}" for i in range(100)
                      if mt.exercises.parameters("ex-model-untied-share", f"s{i:03d}")["D"] not in (256, 512))
    n = mt.exercises.parameters("ex-model-untied-share", student_id)
    model = mt.MinTransformer(n["N"], n["D"], n["h"], n["dff"], 10, 10, max_length=8, share_embeddings=True)
    model((np.array([[5, 6, 7]]), np.array([[1, 5, 6]])))
    layers, V, D = model.count_params() - 10 * n["D"], n["V"], n["D"]
    untied, tied = (3 * V * D + V) / (layers + 3 * V * D + V), V * D / (layers + V * D)
    env = dict(STUDENT_ID=student_id, share_numbers=n)
    passed, text = graded("ex-model-untied-share", untied_share=untied, tied_share=tied, **env)
    assert passed, text
    passed, text = graded("ex-model-untied-share", untied_share=UNTIED, tied_share=TIED, **env)  # the book's
    assert not passed, text
    passed, text = graded("ex-model-untied-share", untied_share=untied, tied_share=V * D / (layers + 3 * V * D + V),
                          **env)
    assert not passed and "divide by the TIED model's total" in text, text
    passed, text = graded("ex-model-untied-share", untied_share=3 * V * D / (layers + 3 * V * D), tied_share=tied,
                          **env)
    assert not passed and "the output layer has a bias of V numbers too" in text, text
    assert_hides(text, untied, tied)
    passed, text = check("ex-model-untied-share", untied_share=untied, tied_share=tied, STUDENT_ID="s999",
                         share_numbers=n)
    assert not passed and "run the work cell again" in text, text


# ex-model-start-token: the mask and query 0's weights.

ZEROS_MASK = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 1]])


@pytest.mark.parametrize("mask,weights,message", [
    (np.tril(np.ones((4, 4))), np.zeros(4), "the look-ahead mask alone"),
    (np.tile([0, 1, 1, 1], (4, 1)), np.zeros(4), "That is the padding mask alone"),
    (np.vstack([np.zeros(4), np.tril(np.ones((4, 4)))[1:]]), np.zeros(4), "You block row 0, query 0's row"),
    (np.ones((4, 4)), np.zeros(4), "your mask lets a query see a later key"),
    (np.tril(np.ones((4, 4))) * [1, 1, 0, 1], np.zeros(4), "Which columns does the padding mask block?"),  # hidden
    (ZEROS_MASK, np.array([0.5, 0, 0, 0]), "query_0_weights"),  # hidden
    (ZEROS_MASK, np.array([0, 0.5, 0.5, 0]), "a key after position 0"),
    (ZEROS_MASK.T, np.zeros(4), "Row t is query t"),
    (ZEROS_MASK, np.array([1.0, 0, 0, 0]), "key 0 holds the padding id"),
    (ZEROS_MASK, np.full(4, 0.25), "Uniform weights would let query 0 read the padding"),
    (ZEROS_MASK, np.full(4, np.nan), "Your weights hold a NaN"),
    (ZEROS_MASK, np.zeros(3), "give query 0's 4 weights"),
])
def test_start_token_rejects_the_known_mistakes(mask, weights, message):
    passed, text = graded("ex-model-start-token", start_mask_by_hand=mask, query_0_weights=weights)
    assert not passed and message in text, text
    assert "decoder_self_mask(tgt)" not in text  # no hint that hands over the answer
    assert "weights 0" not in text and "exactly 0" not in text and "zeros" not in text, text  # nor the weights


def test_start_token_accepts_booleans():
    passed, text = graded("ex-model-start-token", start_mask_by_hand=ZEROS_MASK > 0, query_0_weights=[0, 0, 0, 0])
    assert passed, text


def test_start_token_follows_the_students_target():
    student_id = next(f"s{i:03d}" for i in range(100)
                      if mt.exercises.parameters("ex-model-start-token", f"s{i:03d}")["target"][-1] == 0)
    n = mt.exercises.parameters("ex-model-start-token", student_id)
    target = np.array([n["target"]])
    length = target.shape[1]
    right = ops.convert_to_numpy(mt.decoder_self_mask(target))[0, 0]
    env = dict(STUDENT_ID=student_id, start_numbers=n)
    passed, text = graded("ex-model-start-token", start_mask_by_hand=right, query_0_weights=np.zeros(length), **env)
    assert passed, text
    passed, text = graded("ex-model-start-token", start_mask_by_hand=ZEROS_MASK, query_0_weights=np.zeros(4), **env)
    assert not passed and f"give the ({length}, {length}) mask" in text, text  # the book's answers
    start_only = np.tril(np.ones((length, length)))
    start_only[:, 0] = 0
    passed, text = check("ex-model-start-token", start_mask_by_hand=start_only, query_0_weights=np.zeros(length),
                         **env)
    assert not passed and "You block key 0 but not the pads at the end" in text, text
    passed, text = check("ex-model-start-token", start_mask_by_hand=right, query_0_weights=np.full(length, 1 / length),
                         **env)
    assert not passed and "Uniform weights" in text, text
    passed, text = check("ex-model-start-token", start_mask_by_hand=right, query_0_weights=np.zeros(length),
                         STUDENT_ID="s999", start_numbers=n)
    assert not passed and "run the work cell again" in text, text


# ex-model-fix-masks: the MinTransformer course chapter's forward pass with every mask None.

def _forward(encoder_mask=True, self_mask="decoder", cross_mask=True, pad="model", self_pad="model", invert=(),
             training=False):
    """A fix of the course chapter's forward pass, right by default; the arguments make it wrong."""
    def fixed_logits(model, source, target):
        pad_id = model.pad_id if pad == "model" else pad
        source_mask = mt.padding_mask(source, pad_id)
        masks = {"decoder": mt.decoder_self_mask(target, pad_id if self_pad == "model" else self_pad),
                 "padding": mt.padding_mask(target, pad_id),
                 "causal": mt.causal_mask(target.shape[1]),
                 "one ahead": ops.logical_and(np.tril(np.ones((target.shape[1],) * 2), 1) > 0,
                                              mt.padding_mask(target, pad_id)),  # sees one future token
                 None: None}
        encoder = source_mask if encoder_mask else None
        self_attention = masks[self_mask]
        cross = source_mask if cross_mask else None
        if "encoder" in invert:  # 1 = blocked, the sources' convention
            encoder = ops.logical_not(encoder)
        if "self" in invert:
            self_attention = ops.logical_not(self_attention)
        if "cross" in invert:
            cross = ops.logical_not(cross)
        context = model.encoder(model.source_embedding(source), attention_mask=encoder, training=training)
        H = model.decoder(model.target_embedding(target), context, self_mask=self_attention, cross_mask=cross,
                          training=training)
        return model.output_projection(H)
    return fixed_logits


def test_fix_masks_accepts_the_fix_and_leaves_the_random_generators_alone():
    np.random.seed(7)
    expected = np.random.rand()
    np.random.seed(7)
    passed, text = check("ex-model-fix-masks", fixed_logits=_forward())
    assert passed, text
    assert np.random.rand() == expected  # the check did not reset the student's generators


def _via_encode_and_decode(model, source, target):
    return model.decode(target, model.encode(source), source)


@pytest.mark.parametrize("forward", [lambda model, s, t: model((s, t), training=False), _via_encode_and_decode])
def test_fix_masks_refuses_the_models_own_forward_pass(forward):
    result = mt.exercises.run_check(CHAPTER, "ex-model-fix-masks", {"fixed_logits": forward})
    assert not result.passed_all
    assert all("build the masks yourself; do not call model(...), model.encode or model.decode" in tc.message
               for tc in result.test_case_results), result.summary()


@pytest.mark.parametrize("wrong,message", [
    (_forward(False, None, False), "Still the bug: these are the logits with every mask None"),
    (_forward(self_mask=None), "No causal mask: the decoder's self-attention sees the whole target"),
    (_forward(self_mask="one ahead"), "The future is not hidden: changing the target token at position 3"),
    (_forward(encoder_mask=False, cross_mask=False), "Padding the source with 3 more pads changes the logits"),
    (_forward(self_mask="padding"), "No causal mask"),
    (_forward(cross_mask=False), "Cross-attention has no mask"),
    (_forward(encoder_mask=False), "Give the encoder attention_mask=mt.padding_mask"),
    (_forward(self_mask="causal"), "but not the target padding"),
    (_forward(invert=("encoder", "self", "cross")), "Your masks are inverted (the encoder's mask, the decoder's "
     "self-attention mask, the cross-attention mask): in the package True (or 1) = may attend; you pass 1 = blocked"),
    (_forward(invert=("self",)), "Your masks are inverted (the decoder's self-attention mask)"),
    (_forward(pad=0, self_pad=0), "This model pads with 19, and you build masks with the padding id 0"),
    (_forward(self_pad=0), "use model.pad_id, not 0"),
    (_forward(training=True), "`fixed_logits` is not deterministic"),
    (lambda model, s, t: ops.zeros((2, 3)), "returns shape (2, 3)"),
])
def test_fix_masks_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-model-fix-masks", fixed_logits=wrong)
    assert not passed and message in text, text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/07_...)
def test_every_exercise_with_one_right_answer_has_hidden_cases():
    assert sorted(p.stem for p in HIDDEN.glob("*.py")) == sorted(mt.exercises.labels(CHAPTER))


def test_hidden_counts_are_the_packages():
    namespace = {}
    exec((HIDDEN / "ex-model-prenorm-count.py").read_text(), namespace)
    for config, count in namespace["HIDDEN_COUNTS"].items():
        N, D, h, dff, Vi, Vt, share, norm_first = config
        model = mt.MinTransformer(N, D, h, dff, Vi, Vt, max_length=8, share_embeddings=share, norm_first=norm_first)
        model.build(((1, 3), (1, 3)))
        assert model.count_params() == count, config
        assert config not in _count_check_module().COUNTS  # other configurations than the public ones


def _tuned_embedding(E, tokens):
    """Right for the public lengths (T <= 7) only: the positional table cut at 7 rows."""
    E, tokens = np.asarray(E), np.asarray(tokens)
    return np.sqrt(E.shape[1]) * E[tokens] + mt.positional_encoding(7, E.shape[1])[: tokens.shape[1]]


def _tuned_param_count(*args, **kwargs):
    """The public configurations' counts, looked up in the public check."""
    config = tuple(kwargs[k] for k in _count_check_module().KEYS)
    return _count_check_module().COUNTS[config]


def _tuned_package_mha(d_model, num_heads):
    """The public cases' counts, looked up."""
    return {16: 1088, 24: 2400, 40: 6560}[d_model]


def _tuned_keras_mha(d_model, num_heads, key_dim):
    """Right on the public cases only, where d_model is 16, 24 or 40."""
    return _keras_count(d_model, num_heads, key_dim) if d_model in (16, 24, 40) else 0


def _tuned_fixed_logits(model, source, target):
    """Right at the public target length, 5, only: the look-ahead part made for it."""
    source_mask = mt.padding_mask(source, model.pad_id)
    self_mask = ops.logical_and(mt.causal_mask(5), mt.padding_mask(target, model.pad_id))
    context = model.encoder(model.source_embedding(source), attention_mask=source_mask, training=False)
    H = model.decoder(model.target_embedding(target), context, self_mask=self_mask, cross_mask=source_mask,
                      training=False)
    return model.output_projection(H)


@pytest.mark.parametrize("label,env", [
    ("ex-model-embed", {"my_embedding": _tuned_embedding}),
    ("ex-model-prenorm-count", {"param_count": _tuned_param_count}),
    ("ex-model-heads-free", {"package_mha_params": _tuned_package_mha, "keras_mha_params": _keras_count}),
    ("ex-model-heads-free", {"package_mha_params": lambda D, h: 4 * D * D + 4 * D,
                             "keras_mha_params": _tuned_keras_mha}),
    ("ex-model-untied-share", {"untied_share": 0.7, "tied_share": 0.4}),  # of the right form
    ("ex-model-start-token", {"start_mask_by_hand": np.tril(np.ones((4, 4))) * [1, 1, 0, 1],
                              "query_0_weights": np.zeros(4)}),
    ("ex-model-start-token", {"start_mask_by_hand": ZEROS_MASK, "query_0_weights": [0.5, 0, 0, 0]}),
    ("ex-model-fix-masks", {"fixed_logits": _tuned_fixed_logits}),
])
def test_answers_tuned_to_the_public_cases_fail_the_hidden_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_fixed_answers():
    # (the layers' count at D = 256, and the untied and tied vocabulary-sized counts)
    assert_public_check_hides(CHAPTER, "ex-model-untied-share", UNTIED, TIED, 11_059_200, 28_453_000, 9_472_000)
    assert_public_check_hides(CHAPTER, "ex-model-start-token", ZEROS_MASK, np.zeros(4),
                              spelled=("decoder_self_mask", "attention_scores", "[0, 4, 6, 2]"))
