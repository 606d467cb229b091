"""Tasks generated in code (no downloads): sequence reversal and date normalization (chapter 8),
and addition written as text for a language model (chapter 12).

All use one character-level vocabulary with ids 0 = pad, 1 = start, 2 = end, so the source and
target embeddings can be tied. Splits are fixed by a seed and never share a source string.
"""

import datetime
import random

import numpy as np
import tensorflow as tf

PAD, START, END = 0, 1, 2
SPECIALS = ["<pad>", "<start>", "<end>"]


class CharTokenizer:
    """Characters <-> ids, with pad/start/end at 0/1/2.

    Args:
        alphabet: the characters the tokenizer knows, in id order after the specials.
    """

    def __init__(self, alphabet):
        self.alphabet = "".join(sorted(set(alphabet)))
        self.id_to_token = SPECIALS + list(self.alphabet)
        self.token_to_id = {c: i for i, c in enumerate(self.id_to_token)}
        self.pad_id, self.start_id, self.end_id = PAD, START, END

    @property
    def vocab_size(self):
        return len(self.id_to_token)

    def encode(self, text, add_start=False, add_end=False):
        """String -> list of ids (raises KeyError on an unknown character)."""
        ids = [self.token_to_id[c] for c in text]
        return ([START] if add_start else []) + ids + ([END] if add_end else [])

    def decode(self, ids):
        """Ids -> string: stops at the first end id, skips pad and start."""
        chars = []
        for i in np.asarray(ids).tolist():
            if i == END:
                break
            if i > END:
                chars.append(self.id_to_token[i])
        return "".join(chars)

    def tokens(self, ids):
        """Ids -> list of printable tokens (for plot labels)."""
        return [self.id_to_token[i] for i in np.asarray(ids).tolist()]


# ---------------------------------------------------------------- sequence reversal
REVERSAL_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def reversal_pairs(count, min_length=3, max_length=12, seed=0):
    """``count`` distinct (source, reversed source) pairs of lowercase letters."""
    rng = random.Random(seed)
    pairs = {}
    while len(pairs) < count:
        length = rng.randint(min_length, max_length)
        source = "".join(rng.choice(REVERSAL_ALPHABET) for _ in range(length))
        pairs[source] = source[::-1]
    return sorted(pairs.items())


# ---------------------------------------------------------------- date normalization
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _ordinal(n):
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# Each format writes a date the way people do. Two-digit years mean 1950-2049;
# slashes are month/day (US order), dots are day.month (European order).
DATE_FORMATS = [
    lambda d: f"{DAYS[d.weekday()]}, {d.day} {MONTHS[d.month - 1]} {d.year}",  # Tuesday, 3 March 1998
    lambda d: f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",  # 03/03/98
    lambda d: f"{MONTHS[d.month - 1].lower()} {_ordinal(d.day)}, {d.year % 100:02d}",  # march 3rd, 98
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}",  # 3 Mar 1998
    lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",  # March 3, 1998
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",  # 03.03.1998
    lambda d: f"{d.month}/{d.day}/{d.year}",  # 3/3/1998
    lambda d: f"{_ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",  # 3rd of March 1998
    lambda d: f"{DAYS[d.weekday()][:3]} {d.day} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}",  # Tue 3 Mar 98
    lambda d: f"{d.day:02d}-{MONTHS[d.month - 1][:3].upper()}-{d.year}",  # 03-MAR-1998
    lambda d: f"{MONTHS[d.month - 1][:3].lower()} {d.day} {d.year}",  # mar 3 1998
    lambda d: f"{d.year}/{d.month}/{d.day}",  # 1998/3/3
]
FIRST_DAY, LAST_DAY = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)


def random_date_pair(rng):
    """One (human-written date, ISO date) pair drawn with ``rng`` (a ``random.Random``)."""
    day = FIRST_DAY + datetime.timedelta(days=rng.randrange((LAST_DAY - FIRST_DAY).days + 1))
    return rng.choice(DATE_FORMATS)(day), day.isoformat()


def date_pairs(count, seed=0):
    """``count`` distinct (human-written date, ISO date) pairs."""
    rng = random.Random(seed)
    pairs = {}
    while len(pairs) < count:
        source, target = random_date_pair(rng)
        pairs[source] = target
    return sorted(pairs.items())


DATE_ALPHABET = "".join(sorted(set(
    "".join(MONTHS) + "".join(MONTHS).lower() + "".join(MONTHS).upper() + "".join(DAYS)
    + "0123456789 ,./-" + "stndrdthof"
)))


def split(pairs, fractions=(0.8, 0.1, 0.1), seed=0):
    """Shuffle with ``seed`` and cut into train/validation/test lists (disjoint sources)."""
    pairs = list(pairs)
    random.Random(seed).shuffle(pairs)
    n_train = int(fractions[0] * len(pairs))
    n_val = int(fractions[1] * len(pairs))
    return pairs[:n_train], pairs[n_train:n_train + n_val], pairs[n_train + n_val:]


def encode_pairs(pairs, tokenizer):
    """Lists of id lists: sources, decoder inputs (start + target), labels (target + end)."""
    sources = [tokenizer.encode(s) for s, _ in pairs]
    targets_in = [tokenizer.encode(t, add_start=True) for _, t in pairs]
    targets_out = [tokenizer.encode(t, add_end=True) for _, t in pairs]
    return sources, targets_in, targets_out


def pad(sequences, length=None, pad_id=PAD):
    """Right-pad id lists into an int32 array (N, length)."""
    length = length or max(len(s) for s in sequences)
    out = np.full((len(sequences), length), pad_id, dtype=np.int32)
    for i, s in enumerate(sequences):
        out[i, :len(s)] = s
    return out


def make_dataset(pairs, tokenizer, batch_size=64, shuffle=False, seed=0):
    """A ``tf.data`` pipeline of ``((source, target_in), target_out)`` batches for ``model.fit``.

    Teacher forcing: the decoder reads ``<start> y_1 ... y_n`` and must predict
    ``y_1 ... y_n <end>`` (the same sequence shifted left by one). Each batch is padded to its
    own longest sequence.
    """
    batches = padded_batches(encode_pairs(pairs, tokenizer), batch_size, shuffle, seed)
    return batches.map(lambda s, ti, to: ((s, ti), to)).prefetch(tf.data.AUTOTUNE)


def padded_batches(columns, batch_size, shuffle=False, seed=0, repeat=False):
    """Lists of id lists (one list per column, one id list per example) -> padded int32 batches.

    Each batch is padded with ``PAD`` to its own longest sequence. ``shuffle`` reshuffles the
    examples every pass, with ``seed``; ``repeat=True`` repeats them before batching, so that every
    batch is full (a batch may then straddle two passes).
    """
    ragged = tf.data.Dataset.from_tensor_slices(tuple(tf.ragged.constant(c, dtype=tf.int32) for c in columns))
    if shuffle:
        ragged = ragged.shuffle(len(columns[0]), seed=seed, reshuffle_each_iteration=True)
    if repeat:
        ragged = ragged.repeat()
    # (The map turns each ragged element into tensors, which padded_batch needs.)
    return ragged.map(lambda *example: example).padded_batch(batch_size, padding_values=PAD)


# ---------------------------------------------------------------- addition as text (chapter 12)
ADDITION_ALPHABET = "0123456789+="


def addition_problems(digits=2):
    """Every sum of two numbers below ``10**digits``, as (prompt, answer): ("12+345=", "357")."""
    numbers = range(10**digits)
    return [(f"{a}+{b}=", str(a + b)) for a in numbers for b in numbers]


def encode_lm(pairs, tokenizer):
    """(prompt, answer) pairs -> a language model's inputs and labels, lists of id lists.

    The text is ``prompt + answer + <end>``. The model reads every token but the last and is
    asked, at each position, for the next one (labels = the text shifted left by one). The labels
    inside the prompt are pad, which the loss masks out: the prompt's digits are random, and only
    the answer (and its end) is there to be learned.
    """
    inputs, labels = [], []
    for prompt, answer in pairs:
        text = tokenizer.encode(prompt + answer, add_end=True)
        inputs.append(text[:-1])
        labels.append([PAD] * (len(prompt) - 1) + text[len(prompt):])
    return inputs, labels


def make_lm_dataset(pairs, tokenizer, batch_size=64, shuffle=False, seed=0, repeat=False):
    """A ``tf.data`` pipeline of ``(inputs, labels)`` batches (``encode_lm``) for ``model.fit``;
    ``shuffle``, ``seed`` and ``repeat`` as in ``padded_batches``."""
    return padded_batches(encode_lm(pairs, tokenizer), batch_size, shuffle, seed, repeat).prefetch(tf.data.AUTOTUNE)
