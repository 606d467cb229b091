"""The generated tasks: deterministic, disjoint splits, correct targets, teacher forcing."""

import datetime

import numpy as np

from mintransformer import data


def test_tokenizer_round_trip_and_special_ids():
    tok = data.CharTokenizer(data.DATE_ALPHABET)
    assert (tok.pad_id, tok.start_id, tok.end_id) == (0, 1, 2)
    ids = tok.encode("Tuesday, 3 March 1998", add_start=True, add_end=True)
    assert ids[0] == 1 and ids[-1] == 2 and min(ids[1:-1]) > 2
    assert tok.decode(ids) == "Tuesday, 3 March 1998"
    assert tok.decode([5, 6, 2, 7, 0]) == tok.decode([5, 6])


def test_reversal_pairs_are_reversed_distinct_and_deterministic():
    pairs = data.reversal_pairs(500, seed=3)
    assert pairs == data.reversal_pairs(500, seed=3)
    assert len({s for s, _ in pairs}) == 500
    assert all(t == s[::-1] and 3 <= len(s) <= 12 for s, t in pairs)


def test_every_date_format_encodes_the_same_day():
    day = datetime.date(1998, 3, 3)
    written = [f(day) for f in data.DATE_FORMATS]
    assert "Tuesday, 3 March 1998" in written and "03/03/98" in written
    assert "march 3rd, 98" in written and "3 Mar 1998" in written
    assert len(set(written)) == len(written)
    tok = data.CharTokenizer(data.DATE_ALPHABET)
    for text in written:
        tok.encode(text)  # every character is in the alphabet


def test_date_pairs_targets_are_the_iso_dates_of_their_sources():
    for source, target in data.date_pairs(300, seed=5):
        day = datetime.date.fromisoformat(target)
        assert data.FIRST_DAY <= day <= data.LAST_DAY
        assert source in [f(day) for f in data.DATE_FORMATS]


def test_splits_are_fixed_and_disjoint():
    pairs = data.date_pairs(2000, seed=0)
    train, val, test = data.split(pairs)
    assert (len(train), len(val), len(test)) == (1600, 200, 200)
    assert data.split(pairs) == (train, val, test)
    sources = [{s for s, _ in part} for part in (train, val, test)]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])


def test_dataset_batches_are_padded_and_shifted_for_teacher_forcing():
    tok = data.CharTokenizer(data.REVERSAL_ALPHABET)
    pairs = [("abc", "cba"), ("hello", "olleh")]
    ds = data.make_dataset(pairs, tok, batch_size=2)
    (source, target_in), target_out = next(iter(ds))
    source, target_in, target_out = source.numpy(), target_in.numpy(), target_out.numpy()
    assert source.shape == (2, 5) and (source[0, 3:] == 0).all()
    assert (target_in[:, 0] == tok.start_id).all()
    for row, (_, target) in enumerate(pairs):  # decoder input = labels shifted right by one
        n = len(target)
        np.testing.assert_array_equal(target_in[row, 1:n + 1], target_out[row, :n])
    assert tok.decode(target_out[1]) == "olleh" and target_out[1, 5] == tok.end_id
