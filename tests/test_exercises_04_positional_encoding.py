"""Chapter 4's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import math

import numpy as np
import pytest

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "04_positional_encoding"


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-positional-wavelength and -dot have per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases (grading/hidden/)."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label))
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


def omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)


def rotation_matrix(k, d):
    m = np.zeros((d, d))
    for i, w in enumerate(omega(d)):
        c, s = np.cos(w * k), np.sin(w * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


def right_encoding(length, d_model):
    angles = np.arange(length)[:, None] * omega(d_model)
    table = np.zeros((length, d_model))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


FUNCTIONS = {  # label: the names the student defines, with a placeholder for each
    "ex-positional-implement": {"my_positional_encoding": stub},
    "ex-positional-wavelength": {"closest_pair": ..., "slow_pairs": ...},
    "ex-positional-dot": {"first_rise": stub, "runner_up": ...},
    "ex-positional-layout": {"t2t_shift": stub, "close_pairs": stub},
    "ex-positional-fix-max-len": {"fixed_add_encoding": stub},
    "ex-positional-fix-scale": {"fixed_embed": stub, "unit_rms_factor": stub},
    "ex-positional-decode": {"decode_positions": stub},
    "ex-positional-previous": {"look_back_queries": stub},
}


def test_every_check_is_tested_here():
    assert sorted(FUNCTIONS) == mt.exercises.labels(CHAPTER)


@pytest.mark.parametrize("label", sorted(FUNCTIONS))
def test_blank_answers_fail_and_say_so(label):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    passed, text = check(label, **FUNCTIONS[label])
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text


# ---------------------------------------------------------------- implement
def test_implement_accepts_a_float32_keras_version():
    from keras import ops

    def with_keras(length, d_model):
        pos = ops.cast(ops.arange(length), "float32")[:, None]
        rate = ops.power(10000.0, ops.cast(ops.arange(0, d_model, 2), "float32") / d_model)
        angles = pos / rate[None]
        return ops.reshape(ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1), (length, d_model))

    passed, text = graded("ex-positional-implement", my_positional_encoding=with_keras)
    assert passed, text
    passed, text = graded("ex-positional-implement", my_positional_encoding=right_encoding)
    assert passed, text


def _wrong_encoding(exponent=lambda j: 2 * (j // 2), layout="interleaved", start=0, divide=True, swap=False):
    def encoding(length, d_model):
        pos = np.arange(start, start + length)[:, None]
        j = np.arange(d_model)
        rate = 10000.0 ** (exponent(j) / d_model)
        angles = pos / rate if divide else pos * rate
        sin, cos = (np.cos, np.sin) if swap else (np.sin, np.cos)
        sines, cosines = sin(angles[:, 0::2]), cos(angles[:, 1::2])
        if layout == "concatenated":
            return np.concatenate([sines, cosines], axis=1)
        table = np.zeros((length, d_model))
        table[:, 0::2], table[:, 1::2] = sines, cosines
        return table
    return encoding


def _keras_tutorial_encoding(max_len, d_model):
    """The Keras functional-API tutorial's positional_encoding, in NumPy: concatenated, batch axis."""
    pos = np.arange(max_len, dtype="float32")[:, None]
    _2i = np.arange(d_model, dtype="float32")[None, :]
    angle_rads = pos / np.power(10000, (2 * (_2i // 2)) / np.float32(d_model))
    sines, cosines = np.sin(angle_rads[:, 0::2]), np.cos(angle_rads[:, 1::2])
    return np.concatenate([sines, cosines], axis=-1)[None, ...]


@pytest.mark.parametrize("wrong,message", [
    (lambda t, d: _keras_tutorial_encoding(t, d)[0], "concatenated layout"),
    (_keras_tutorial_encoding, "without the leading batch axis"),
    (_wrong_encoding(layout="concatenated"), "the Keras functional-API tutorial"),
    (_wrong_encoding(exponent=lambda j: j // 2), "where the equation has 2i / d_model"),
    (_wrong_encoding(exponent=lambda j: j), "index of its own feature"),
    (_wrong_encoding(exponent=lambda j: 2 * j), "2j / d_model with j the feature index"),
    (_wrong_encoding(swap=True), "Sines and cosines are swapped"),
    (_wrong_encoding(divide=False), "the frequencies fall"),
    (_wrong_encoding(start=1), "positions start at 1"),
    (lambda t, d: right_encoding(t, d).T, "rows are positions"),
    (lambda t, d: mt.positional_encoding(t, d), "do not call mt.positional_encoding"),
])
def test_implement_rejects_the_known_wrong_encodings(wrong, message):
    passed, text = check("ex-positional-implement", my_positional_encoding=wrong)
    assert not passed and message in text, text
    assert mt.positional_encoding(2, 2).shape == (2, 2)  # the check gave the package back


def test_implement_rejects_the_package_function_imported_by_name():
    # A notebook's `from mintransformer import positional_encoding` binds the function before the
    # check runs: the check hides it under that name too, and gives it back afterwards.
    namespace = {}
    exec("from mintransformer import positional_encoding\n"
         "def my_positional_encoding(length, d_model):\n"
         "    return positional_encoding(length, d_model)\n", namespace)
    passed, text = check("ex-positional-implement", my_positional_encoding=namespace["my_positional_encoding"])
    assert not passed and "do not call mt.positional_encoding" in text, text
    assert namespace["positional_encoding"] is mt.positional.positional_encoding


# ---------------------------------------------------------------- wavelength
@pytest.mark.parametrize("closest,message", [
    (154, "is a feature index"),
    (155, "is a feature index"),
    (76, "is not the pair whose wavelength is closest to 100"),  # the message names neither neighbour
    (76.9, "whole number"),
    (128, "you left out the 2 pi"),
    (80, "is not the pair whose wavelength is closest to 100"),
])
def test_wavelength_rejects_wrong_pairs(closest, message):
    passed, text = graded("ex-positional-wavelength", closest_pair=closest, slow_pairs=160)
    assert not passed and message in text, text
    assert "wavelength is " + "shorter" in text or "wavelength is longer" in text or closest not in (76, 80), text
    wavelengths = 2 * np.pi * 10000.0 ** (2 * np.arange(256) / 512)
    assert_hides(text, 77, wavelengths[[76, 77, 78, 80]])  # neither the pair nor a wavelength (their ratio)


@pytest.mark.parametrize("slow,message", [
    (96, "MORE than a quarter turn"),
    (159, "omega_i * 49, not omega_i * 50"),
    (198, "full turn"),
    (179, "half a turn"),
    (64, "with 2i, not i"),
    (150, "is not the number"),
])
def test_wavelength_rejects_wrong_counts(slow, message):
    passed, text = graded("ex-positional-wavelength", closest_pair=77, slow_pairs=slow)
    assert not passed and message in text, text


def test_wavelength_accepts_numpy_integers():
    passed, text = graded("ex-positional-wavelength", closest_pair=np.int64(77), slow_pairs=np.array(160))
    assert passed, text



def _wavelength_answers(target, tokens):
    wavelengths = 2 * np.pi / omega(512)
    return int(np.argmin(np.abs(wavelengths - target))), int(np.sum(omega(512) * (tokens - 1) < np.pi / 2))


def test_wavelength_checks_each_students_own_numbers():
    # An id whose answers both differ from the book's (77, 160), and from the 2 pi slip's pair.
    for i in range(100):
        student_id = f"s{i:03d}"
        n = mt.exercises.parameters("ex-positional-wavelength", student_id)
        closest, slow = _wavelength_answers(n["wavelength"], n["tokens"])
        no_two_pi = int(np.argmin(np.abs(1 / omega(512) - n["wavelength"])))
        last = n["tokens"] - 1
        slips = [256 - slow, int(np.sum(omega(512) * n["tokens"] < np.pi / 2))] + [
            int(np.sum(omega(512) * last < turn)) for turn in (2 * np.pi, np.pi)]
        if 77 not in (closest, 2 * closest, 2 * closest + 1, no_two_pi) and 160 not in [slow] + slips:
            break
    target, tokens = n["wavelength"], n["tokens"]
    own = dict(STUDENT_ID=student_id, wavelength_numbers=n)
    passed, text = graded("ex-positional-wavelength", closest_pair=closest, slow_pairs=slow, **own)
    assert passed, text
    for env, message in [
        (dict(closest_pair=77, slow_pairs=slow), "the pair of the book's 100 positions"),
        (dict(closest_pair=closest, slow_pairs=160), "the book's sentence of 50 tokens"),
        (dict(closest_pair=no_two_pi, slow_pairs=slow), f"= {target}: you left out the 2 pi"),
        (dict(closest_pair=closest, slow_pairs=int(np.sum(omega(512) * tokens < np.pi / 2))),
         f"omega_i * {tokens - 1}, not omega_i * {tokens}"),
    ]:
        passed, text = graded("ex-positional-wavelength", **env, **own)
        assert not passed and message in text, text
        assert_hides(text, closest, slow)
    passed, text = check("ex-positional-wavelength", closest_pair=no_two_pi, slow_pairs=slow, **own)
    assert not passed and "you left out the 2 pi" in text, text

# ---------------------------------------------------------------- dot
def _dot(k, d_model):
    return np.cos(np.multiply.outer(k, omega(d_model))).sum(axis=-1)


def _first_rise(d_model):
    k = np.arange(1, 5000)
    return int(k[np.argmax(_dot(k, d_model) > _dot(k - 1, d_model))])


def _later_rise(d_model):
    """An offset after the first rise at which the dot product grows again."""
    k = np.arange(_first_rise(d_model) + 1, 5000)
    return int(k[np.argmax(_dot(k, d_model) > _dot(k - 1, d_model))])


def test_dot_first_rise_values():
    # The chapter's width and the paper's: the similarity stops falling at these offsets.
    assert _first_rise(128) == 12 and _first_rise(512) == 44
    assert _dot(12, 128) > _dot(11, 128) and np.all(np.diff(_dot(np.arange(12), 128)) < 0)


@pytest.mark.parametrize("wrong,message", [
    (lambda d: _first_rise(d) - 1, "the dot product falls at that offset"),
    (lambda d: 2, "the dot product falls at that offset"),
    (lambda d: _later_rise(d), "too large: the dot product has already risen"),
    (lambda d: 0, "offsets start at 1"),
    (lambda d: [_first_rise(d)] * 2, "one whole number"),
])
def test_dot_rejects_wrong_first_rises(wrong, message):
    passed, text = graded("ex-positional-dot", first_rise=wrong, runner_up=[32, 34])
    assert not passed and message in text, text


@pytest.mark.parametrize("runner_up,message", [
    ([34], "is that key alone in second place"),
    ([32], "is that key alone in second place"),
    ([27], "looks 3 positions ahead"),
    ([33, 34], "the key with the highest score"),
    ([30], "the query's own position"),
    ([31, 35], "list every key with the second-highest score"),
    ([70], "key positions run from 0 to 63"),
    ("thirty", "a list of key positions"),
])
def test_dot_rejects_wrong_runners_up(runner_up, message):
    passed, text = graded("ex-positional-dot", first_rise=_first_rise, runner_up=runner_up)
    assert not passed and message in text, text
    assert "[32, 34]" not in text  # the message never gives the answer


def test_dot_accepts_the_right_answers_in_any_form():
    for runner_up in ([32, 34], [34, 32], np.array([32, 34]), (np.int64(34), 32)):
        passed, text = graded("ex-positional-dot", first_rise=lambda d: np.int64(_first_rise(d)), runner_up=runner_up)
        assert passed, text



def test_dot_checks_each_students_own_query():
    def fits(n):  # a target other than the book's 33 and its neighbours, and a key p - k in the table
        return n["query_position"] + n["look_ahead"] not in (32, 33, 34) and n["query_position"] >= n["look_ahead"]

    student_id = next(f"s{i:03d}" for i in range(100)
                      if fits(mt.exercises.parameters("ex-positional-dot", f"s{i:03d}")))
    n = mt.exercises.parameters("ex-positional-dot", student_id)
    p, k = n["query_position"], n["look_ahead"]
    target = p + k
    own = dict(first_rise=_first_rise, STUDENT_ID=student_id, dot_numbers=n)
    passed, text = graded("ex-positional-dot", runner_up=[target + 1, target - 1], **own)
    assert passed, text
    for runner_up, message in [
        ([32, 34], "for the book's query PE_30 M_3^T"),
        ([p - 1, p + 1], f"the neighbours of {p}, the query's own position"),
        ([target + 1], "is that key alone in second place"),
        ([target, target + 1], "the key with the highest score"),
    ]:
        passed, text = graded("ex-positional-dot", runner_up=runner_up, **own)
        assert not passed and message in text, text
        assert_hides(text, [target - 1, target + 1])
    passed, text = check("ex-positional-dot", runner_up=[p - k], **own)  # the public check
    assert not passed and f"looks {k} positions ahead" in text, text
    assert "distance" not in text and f"PE_{target}" not in text, text  # the reasoning is the written answer

# ---------------------------------------------------------------- layout
def _t2t_omega(d):
    return 10000.0 ** (-np.arange(d // 2) / (d // 2 - 1))


def _rotation(k, w):
    m = np.zeros((2 * len(w), 2 * len(w)))
    for i, wi in enumerate(w):
        c, s = np.cos(wi * k), np.sin(wi * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


def _concatenated(m):
    d = m.shape[0]
    pi = np.eye(d)[:, np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])]
    return pi.T @ m @ pi


def _t2t_shift(k, d):
    return _concatenated(_rotation(k, _t2t_omega(d)))


def _gap(d, n):
    """Each pair's largest difference from the paper's sinusoids over positions 0 .. n - 1."""
    p = np.arange(n)[:, None]
    t2t, paper = p * _t2t_omega(d), p * 10000.0 ** (-np.arange(0, d, 2) / d)
    return np.maximum(np.abs(np.sin(t2t) - np.sin(paper)).max(0), np.abs(np.cos(t2t) - np.cos(paper)).max(0))


def _close_pairs(d, n):
    return [int(i) for i in np.flatnonzero(_gap(d, n) < 0.01)]


def test_layout_reference_shifts_the_t2t_table():
    d, k = 16, 5
    angles = np.arange(30)[:, None] * _t2t_omega(d)
    saved = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    np.testing.assert_allclose(saved[:-k] @ _t2t_shift(k, d).T, saved[k:], atol=1e-12)
    passed, text = check("ex-positional-layout", t2t_shift=_t2t_shift, close_pairs=_close_pairs)
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (lambda k, d: _concatenated(rotation_matrix(k, d)), "with the paper's frequencies"),
    (lambda k, d: _rotation(k, _t2t_omega(d)), "block diagonal, for the interleaved layout"),
    (rotation_matrix, "block diagonal, for the interleaved layout"),
    (lambda k, d: _t2t_shift(-k, d), "shifts BACK by"),
    (lambda k, d: _t2t_shift(k, d).T, "shifts BACK by"),
    (lambda k, d: 2 * _t2t_shift(k, d), "is wrong"),
    (lambda k, d: np.eye(3), "should be"),
])
def test_layout_rejects_wrong_shifts(wrong, message):
    passed, text = check("ex-positional-layout", t2t_shift=wrong, close_pairs=_close_pairs)
    assert not passed and message in text, text


@pytest.mark.parametrize("wrong,message", [
    (lambda d, n: list(range(d // 2)), "lists every pair"),
    (lambda d, n: [0], "exactly the paper's"),  # the same answer at every size fails
    (lambda d, n: [], "leaves out pair 0"),
    (lambda d, n: _close_pairs(d, n)[1:], "leaves out pair 0"),
    (lambda d, n: _close_pairs(d, n) + [1], "keep the pairs where it is below 0.01"),
    (lambda d, n: [int(i) for i in np.flatnonzero(_gap(d, n) < 0.1)], "keep the pairs where it is below 0.01"),
    (lambda d, n: [d], "pairs run from 0"),
    (lambda d, n: ..., "still `...`"),
])
def test_layout_rejects_wrong_pairs(wrong, message):
    passed, text = check("ex-positional-layout", t2t_shift=_t2t_shift, close_pairs=wrong)
    assert not passed and message in text, text


def test_layout_accepts_pairs_computed_in_float32_from_the_package():
    def from_tables(d, n):  # the colleague's table reordered, against mt.positional_encoding (float32)
        angles = np.arange(n)[:, None] * _t2t_omega(d)
        saved = np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype("float32")
        inverse = np.argsort(np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)]))
        gap = np.abs(saved[:, inverse] - mt.positional_encoding(n, d)).reshape(n, d // 2, 2).max(axis=(0, 2))
        return np.flatnonzero(gap < 0.01).tolist()
    passed, text = graded("ex-positional-layout", t2t_shift=_t2t_shift, close_pairs=from_tables)
    assert passed, text


# ---------------------------------------------------------------- fix max_len
def _tutorial_add_encoding(x, max_len):
    return x + mt.positional_encoding(max_len, x.shape[-1])[None]


def _fixed(x, max_len, start=0):
    if start < 0 or start + x.shape[1] > max_len:
        raise ValueError(f"positions {start} to {start + x.shape[1] - 1} are past the table of {max_len} rows")
    return x + mt.positional_encoding(max_len, x.shape[-1])[None, start:start + x.shape[1]]


def test_fix_max_len_accepts_the_reference():
    passed, text = graded("ex-positional-fix-max-len", fixed_add_encoding=_fixed)
    assert passed, text


def test_fix_max_len_rejects_the_tutorial():
    result = mt.exercises.run_check(CHAPTER, "ex-positional-fix-max-len",
                                    {"fixed_add_encoding": _tutorial_add_encoding})
    text = result.summary()
    assert result.score == 1  # only a batch of exactly max_len tokens works
    assert "Still the bug" in text and "came back 10 tokens long" in text, text


def test_fix_max_len_rejects_the_chapters_fix_for_later_steps():
    def first_rows(x, max_len, start=0):
        return x + mt.positional_encoding(max_len, x.shape[-1])[None, :x.shape[1]]

    result = mt.exercises.run_check(CHAPTER, "ex-positional-fix-max-len", {"fixed_add_encoding": first_rows})
    assert result.score == 3, result.summary()  # right from position 0, wrong further on and past the table
    assert "every decoding step would get row 0" in result.summary(), result.summary()


def test_fix_max_len_rejects_a_slice_without_a_check():
    def sliced(x, max_len, start=0):  # right inside the table, silent past it
        return x + mt.positional_encoding(max_len, x.shape[-1])[None, start:start + x.shape[1]]

    result = mt.exercises.run_check(CHAPTER, "ex-positional-fix-max-len", {"fixed_add_encoding": sliced})
    assert result.score == 4, result.summary()
    assert "without a word" in result.summary(), result.summary()


def test_fix_max_len_rejects_a_negative_start():
    def checks_the_end_only(x, max_len, start=0):  # a negative start wraps to the end of the table
        if start + x.shape[1] > max_len:
            raise ValueError("past the table")
        return x + mt.positional_encoding(max_len, x.shape[-1])[None, start:start + x.shape[1]]

    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=checks_the_end_only)
    assert not passed and "a negative position has no row either" in text, text


def test_fix_max_len_rejects_a_slice_that_fails_while_adding():
    def sliced(x, max_len, start=0):
        table = mt.positional_encoding(max_len, x.shape[-1])[None, start:start + x.shape[1]]
        if table.shape[1] == 1 and x.shape[1] > 1:
            table = np.concatenate([table, table[:, :0]], axis=1)[:, :0]  # a 0-row table: NumPy refuses it
        return x + table

    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=sliced)
    assert not passed and "failed while adding" in text, text


def test_fix_max_len_asks_for_the_start_argument():
    def no_start(x, max_len):
        return x + mt.positional_encoding(max_len, x.shape[-1])[None, :x.shape[1]]

    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=no_start)
    assert not passed and "Give the function the argument start=0" in text, text


def test_fix_max_len_rejects_the_tutorial_in_keras():
    from keras import ops

    def in_keras(x, max_len, start=0):
        return ops.add(x, mt.positional_encoding(max_len, x.shape[-1])[None])

    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=in_keras)
    assert not passed and "Still the bug" in text, text


def test_fix_max_len_rejects_the_last_rows():
    def last_rows(x, max_len, start=0):
        return x + mt.positional_encoding(max_len, x.shape[-1])[None, -x.shape[1]:]

    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=last_rows)
    assert not passed and "Positions start at 0" in text, text


def test_fix_max_len_accepts_an_in_place_addition():
    def in_place(x, max_len, start=0):
        if start < 0 or start + x.shape[1] > max_len:
            raise ValueError("past the table")
        x += mt.positional_encoding(max_len, x.shape[-1])[None, start:start + x.shape[1]]
        return x

    passed, text = graded("ex-positional-fix-max-len", fixed_add_encoding=in_place)
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (lambda x, max_len, start=0: x + mt.positional_encoding(max_len, x.shape[-1])[None, :x.shape[0]],
     "the batch size x.shape[0]"),
    (lambda x, max_len, start=0: x + mt.positional_encoding(max_len, x.shape[-1])[None, :5],
     "your table has shape (1, 5, 16)"),
    (lambda x, max_len, start=0: x + mt.positional_encoding(max_len, x.shape[-1]), "Still the bug"),
])
def test_fix_max_len_names_the_table_it_was_given(wrong, message):
    passed, text = check("ex-positional-fix-max-len", fixed_add_encoding=wrong)
    assert not passed and message in text.replace("Your", "your"), text
    if message != "Still the bug":
        assert "Still the bug" not in text, text


# ---------------------------------------------------------------- fix scale
def _unit(limit):
    return math.sqrt(3) / limit  # uniform on [-a, a]: mean square a^2 / 3


def _embed(factor, scale_pe=False):
    def embed(tokens, embeddings):
        d_model = embeddings.shape[1]
        x = embeddings[tokens] * factor(d_model)
        pe = mt.positional_encoding(tokens.shape[1], d_model)[None]
        return x + pe * (factor(d_model) if scale_pe else 1)
    return embed


@pytest.mark.parametrize("wrong,message", [
    (_embed(lambda d: math.sqrt(512)), "still the bug: the embedding is scaled by sqrt(512)"),
    (_embed(lambda d: 1.0), "the from-scratch TensorFlow tutorial's mistake"),
    (_embed(lambda d: math.sqrt(d), scale_pe=True), "you scaled the encoding too"),
    (_embed(lambda d: d), "the factor is d_model"),
    (_embed(lambda d: 1 / math.sqrt(d)), "you divided the embedding"),
])
def test_fix_scale_rejects_the_known_wrong_scales(wrong, message):
    passed, text = graded("ex-positional-fix-scale", fixed_embed=wrong, unit_rms_factor=_unit)
    assert not passed and message in text, text


def test_fix_scale_the_course_passes_only_at_width_512():
    result = mt.exercises.run_check(CHAPTER, "ex-positional-fix-scale",
                                    {"fixed_embed": _embed(lambda d: math.sqrt(512)), "unit_rms_factor": _unit})
    assert result.score == 2  # the width 512 and the uniform factor
    passed, text = graded("ex-positional-fix-scale", fixed_embed=_embed(math.sqrt), unit_rms_factor=_unit)
    assert passed, text


def test_fix_scale_accepts_an_in_place_scaling():
    def in_place(tokens, embeddings):
        embeddings *= np.sqrt(embeddings.shape[1])
        return embeddings[tokens] + mt.positional_encoding(tokens.shape[1], embeddings.shape[1])[None]

    passed, text = graded("ex-positional-fix-scale", fixed_embed=in_place, unit_rms_factor=_unit)
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (lambda a: 1 / a, "not their root mean square"),
    (lambda a: math.sqrt(2) / a, "like a sinusoid"),
    (lambda a: 3 / a, "where the square root goes"),
    (lambda a: math.sqrt(128), "sqrt(d_model) of the course's model"),
    (lambda a: math.sqrt(512), "the course's sqrt(512)"),
    (lambda a: math.sqrt(3) * a, "must grow as the entries shrink"),
    (lambda a: 1.1 * math.sqrt(3) / a, "too large"),
    (lambda a: np.array([1.0, 2.0]), "one number"),
])
def test_fix_scale_rejects_wrong_uniform_factors(wrong, message):
    passed, text = graded("ex-positional-fix-scale", fixed_embed=_embed(math.sqrt), unit_rms_factor=wrong)
    assert not passed and message in text, text
    assert "34.6" not in text and "17.3" not in text  # never the expected value


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fix_scale_accepts_the_exact_factor_in_float32_and_float64(dtype):
    passed, text = graded("ex-positional-fix-scale", fixed_embed=_embed(math.sqrt),
                         unit_rms_factor=lambda a: np.sqrt(np.asarray(3, dtype)) / np.asarray(a, dtype))
    assert passed, text


def test_fix_scale_rejects_a_factor_estimated_from_a_sample():
    def from_a_sample(a):  # what the exercise asks not to do: 10 million draws, error about 1e-4
        sample = np.random.default_rng(0).uniform(-a, a, size=10_000_000)
        return 1 / np.sqrt(np.mean(sample ** 2))
    passed, text = graded("ex-positional-fix-scale", fixed_embed=_embed(math.sqrt), unit_rms_factor=from_a_sample)
    assert not passed and "not of a sample" in text, text


def test_fix_scale_uniform_factor_agrees_with_a_sample():
    sample = np.random.default_rng(0).uniform(-0.05, 0.05, size=1_000_000)
    assert abs(np.sqrt(np.mean((_unit(0.05) * sample) ** 2)) - 1) < 2e-3


# ---------------------------------------------------------------- decode
def _slowest_long_enough(w, length):
    return int(np.argmax(2 * np.pi / w > length))


def _decode_with_pair(choose, modulo=True, rounding=np.round, swap=False):
    def decode(rows, length):
        d = rows.shape[1]
        w = omega(d)
        i = choose(w, length)
        sin, cos = rows[:, 2 * i], rows[:, 2 * i + 1]
        angle = np.arctan2(cos, sin) if swap else np.arctan2(sin, cos)
        if modulo:
            angle = angle % (2 * np.pi)
        return rounding(angle / w[i]).astype(int)
    return decode


@pytest.mark.parametrize("wrong,message", [
    (lambda rows, length: np.arange(len(rows)), "in order"),
    (_decode_with_pair(lambda w, length: 0), "you decoded from pair 0"),
    (_decode_with_pair(lambda w, length: 1), "its angle wraps around"),
    (_decode_with_pair(_slowest_long_enough, modulo=False), "take angle % (2 * np.pi)"),
    (_decode_with_pair(_slowest_long_enough, rounding=lambda a: a), "Round, don't truncate"),
    (_decode_with_pair(_slowest_long_enough, swap=True), "takes the sine first"),
    (_decode_with_pair(_slowest_long_enough, modulo=False, swap=True), "takes the sine first"),
    (lambda rows, length: _decode_with_pair(_slowest_long_enough)(rows, length) + 3, "rows are decoded wrongly"),
    (lambda rows, length: _decode_with_pair(lambda w, n: int(np.argmax(2 * np.pi / w > n)))(rows, length) + 0.2,
     "round them"),
    (lambda rows, length: np.zeros((len(rows), 2)), "one position per row"),
])
def test_decode_rejects_wrong_decoders(wrong, message):
    passed, text = check("ex-positional-decode", decode_positions=wrong)
    assert not passed and message in text, text


def test_decode_accepts_the_slowest_pair():
    passed, text = graded("ex-positional-decode", decode_positions=_decode_with_pair(lambda w, n: len(w) - 1))
    assert passed, text


# ---------------------------------------------------------------- previous
@pytest.mark.parametrize("wrong,message", [
    (lambda pe: 8.0 * pe @ rotation_matrix(1, pe.shape[1]).T, "attends to the NEXT one"),
    (lambda pe: 8.0 * pe @ rotation_matrix(-2, pe.shape[1]).T, "attends most to position"),
    (lambda pe: pe @ rotation_matrix(-1, pe.shape[1]).T, "sharpen the softmax"),
    (lambda pe: 8.0 * np.roll(pe, 1, axis=0), "one matrix for all positions"),
    (lambda pe: 8.0 * pe, "attends most to position"),
    (lambda pe: 6.0 * pe @ rotation_matrix(-1, pe.shape[1]).T, "T from 12 to 30"),
    (lambda pe: (8.0 * pe @ rotation_matrix(-1, pe.shape[1]).T, 8.0), "Return only the queries"),
    (lambda pe: (pe @ rotation_matrix(-1, pe.shape[1]).T, 8.0), "Return only the queries"),
])
def test_previous_rejects_wrong_queries(wrong, message):
    passed, text = check("ex-positional-previous", look_back_queries=wrong)
    assert not passed and message in text, text


def test_previous_accepts_an_in_place_scaling():
    def in_place(pe):
        pe *= 8.0  # the check's keys are its own copy: they stay unscaled
        return pe @ rotation_matrix(-1, pe.shape[1]).T

    passed, text = graded("ex-positional-previous", look_back_queries=in_place)
    assert passed, text


# ---------------------------------------------------------------- no message hands out the answer
@pytest.mark.parametrize("env,answers", [
    (dict(closest_pair=60, slow_pairs=100), [77, 160]),
    (dict(closest_pair=100, slow_pairs=200), [77, 160]),
])
def test_wavelength_messages_give_no_answer(env, answers):
    for label_env in ({"closest_pair": env["closest_pair"], "slow_pairs": 160},
                      {"closest_pair": 77, "slow_pairs": env["slow_pairs"]}):
        passed, text = graded("ex-positional-wavelength", **label_env)
        assert not passed, text
        assert_hides(text, *answers)


@pytest.mark.parametrize("first_rise", [lambda d: 5, lambda d: _first_rise(d) - 1, lambda d: _first_rise(d) + 1,
                                        lambda d: 400])
def test_dot_messages_give_no_answer(first_rise):
    passed, text = graded("ex-positional-dot", first_rise=first_rise, runner_up=[31])
    assert not passed, text
    assert_hides(text, [_first_rise(d) for d in (128, 16, 64, 512) if _first_rise(d) >= 10], [32, 34])


@pytest.mark.parametrize("limit_factor", [lambda a: 1 / a, lambda a: 3 / a, lambda a: 2 / a])
def test_fix_scale_factor_messages_give_no_answer(limit_factor):
    passed, text = graded("ex-positional-fix-scale", fixed_embed=_embed(math.sqrt), unit_rms_factor=limit_factor)
    assert not passed, text
    assert_hides(text, [_unit(a) for a in (0.05, 0.1, 0.01)])
    assert "a^2 / 3" not in text and "sqrt(3)" not in text, text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/)
def _encoding_of_at_most_512(length, d_model):
    """Right while d_model <= 512, the widest public case: the pairs' exponents typed in for 512."""
    angles = np.arange(length)[:, None] * 10000.0 ** (-np.arange(0, 512, 2)[:d_model // 2] / d_model)
    table = np.zeros((length, d_model))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def _fixed_for_ten_rows(x, max_len, start=0):
    """The fix with the public table's max_len = 10 typed in."""
    return _fixed(x, 10, start)


def _embed_six_tokens(tokens, embeddings):
    """Right for the public batches of 6 tokens: their length typed in."""
    d_model = embeddings.shape[1]
    return embeddings[tokens] * math.sqrt(d_model) + mt.positional_encoding(6, d_model)[None]


def _unit_looked_up(limit):
    """The factors of the public limits, looked up; the last one for any other limit."""
    return {0.05: _unit(0.05), 0.1: _unit(0.1)}.get(limit, _unit(0.01))


def _close_pairs_looked_up(d_model, length):
    """The length looked up from the public cases' widths, not taken from the argument."""
    return _close_pairs(d_model, {16: 20, 64: 50, 512: 1000}[d_model])


def _look_back_at_public_widths(pe):
    """One matrix for every position, but the shift's width looked up: right at the public widths 64, 128, 256."""
    d = pe.shape[1] if pe.shape[1] in (64, 128, 256) else 128
    return 8.0 * pe @ rotation_matrix(-1, d)[:pe.shape[1], :pe.shape[1]].T


@pytest.mark.parametrize("label,env", [
    ("ex-positional-wavelength", dict(closest_pair=154, slow_pairs=160)),  # a feature index
    ("ex-positional-wavelength", dict(closest_pair=77, slow_pairs=159)),   # omega_i * 50
    ("ex-positional-dot", dict(first_rise=lambda d: {128: 12, 16: 4, 64: 6, 512: 44}.get(d, 12), runner_up=[32, 34])),
    ("ex-positional-dot", dict(first_rise=_first_rise, runner_up=[34])),
    ("ex-positional-implement", dict(my_positional_encoding=_encoding_of_at_most_512)),
    ("ex-positional-fix-max-len", dict(fixed_add_encoding=_fixed_for_ten_rows)),
    ("ex-positional-fix-scale", dict(fixed_embed=_embed_six_tokens, unit_rms_factor=_unit)),
    ("ex-positional-fix-scale", dict(fixed_embed=_embed(math.sqrt), unit_rms_factor=_unit_looked_up)),
    ("ex-positional-layout", dict(t2t_shift=_t2t_shift, close_pairs=_close_pairs_looked_up)),
    ("ex-positional-decode", dict(decode_positions=_decode_with_pair(lambda w, length: len(w) - 4))),
    ("ex-positional-previous", dict(look_back_queries=_look_back_at_public_widths)),
])
def test_hidden_cases_catch_answers_tuned_to_the_public_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_values_they_hid():
    assert_public_check_hides(CHAPTER, "ex-positional-wavelength", 77, 160, 154,
                              spelled=["CLOSEST", "SLOW", "WAVELENGTHS", "* 49", "* 50"])
    assert_public_check_hides(CHAPTER, "ex-positional-dot", [32, 34], spelled=["32", "34", "argmax", "5000"])
    assert_public_check_hides(CHAPTER, "ex-positional-fix-scale", spelled=["sqrt(3)", "3 / limit", "a^2 / 3"])


@pytest.mark.parametrize("label,env,message", [
    ("ex-positional-wavelength", dict(closest_pair=128, slow_pairs=160), "you left out the 2 pi"),
    ("ex-positional-wavelength", dict(closest_pair=300, slow_pairs=160), "numbered 0 to 255"),
    ("ex-positional-wavelength", dict(closest_pair=77, slow_pairs=300), "between 0 and 256"),
    ("ex-positional-dot", dict(first_rise=_first_rise, runner_up=[30]), "the query's own position"),
    ("ex-positional-dot", dict(first_rise=_first_rise, runner_up=[31, 31]), "once"),
    ("ex-positional-dot", dict(first_rise=lambda d: _first_rise(d) - 1, runner_up=[32, 34]), "falls at that offset"),
    ("ex-positional-fix-scale", dict(fixed_embed=_embed(math.sqrt), unit_rms_factor=lambda a: 1 / a), "the LIMIT"),
    ("ex-positional-fix-scale", dict(fixed_embed=_embed(math.sqrt), unit_rms_factor=lambda a: -_unit(a)), "positive"),
])
def test_public_checks_still_catch_what_they_can_without_the_values(label, env, message):
    passed, text = check(label, **env)
    assert not passed and message in text, text
