"""Per-student numbers: the exercises whose answer is a number to work out get each student's own.

An exercise such as "compute by hand the attention of these two queries" has one right answer,
which a student could copy from a classmate. Here each such exercise draws its numbers from the
student's id (``STUDENT_ID``, the cell under a graded notebook's title): the same id always gives
the same numbers, on any machine and any version of Python or NumPy, and two ids almost always
give different ones. With no id (``STUDENT_ID = ""``) an exercise has the book's numbers, those of
its text and its solution.

    numbers = mt.exercises.parameters("ex-attention-by-hand", STUDENT_ID)
    numbers["k_2"]   # (0, 0, 1, 1) in the book, another key for a student

The work cell prints the numbers, and the check (``checks/``) and the hidden cases
(``grading/hidden/``) compute the right answer from the same id.

Each chapter's exercises are in a module of this package named after the chapter
(``02_attention`` -> ``attention.py``), registered with :func:`exercise`::

    @exercise("ex-attention-by-hand", book={"q_1": (1, 1, 0, 0), ...})
    def _(draw):
        return {"q_1": ..., ...}    # the same keys as ``book``, drawn with draw.choice / draw.integer
"""

import hashlib
import importlib
import numbers
import pathlib
import pkgutil

_REGISTRY = {}


class Draw:
    """A deterministic source of choices, from SHA-256 in counter mode.

    Python's ``random`` and NumPy's generators promise the same stream only for some methods and
    versions; hashing does not change: a student's numbers are the same in Colab and at grading.
    """

    def __init__(self, label, student_id):
        self._key = f"{label}\0{student_id}".encode()
        self._count = 0

    def uniform(self):
        """A float in [0, 1), from 53 bits of the hash."""
        digest = hashlib.sha256(self._key + self._count.to_bytes(8, "little")).digest()
        self._count += 1
        return (int.from_bytes(digest[:8], "little") >> 11) / 2.0**53

    def integer(self, low, high):
        """An integer of [low, high], both included, each as likely."""
        if high < low:
            raise ValueError(f"integer({low}, {high}): high is below low")
        return low + min(int(self.uniform() * (high - low + 1)), high - low)

    def choice(self, options):
        """One of ``options`` (a sequence), each as likely."""
        options = list(options)
        if not options:
            raise ValueError("choice of an empty sequence")
        return options[self.integer(0, len(options) - 1)]

    def sample(self, options, k):
        """``k`` distinct items of ``options``, in the order drawn."""
        pool = list(options)
        if not 0 <= k <= len(pool):
            raise ValueError(f"sample of {k} from {len(pool)} options")
        return [pool.pop(self.integer(0, len(pool) - 1)) for _ in range(k)]


class Parameters(dict):
    """An exercise's numbers: a dict, which also knows whose they are (``label``, ``student_id``)."""

    def __init__(self, values, label, student_id):
        super().__init__(values)
        self.label = label
        self.student_id = student_id

    def __repr__(self):
        whose = (f"the numbers of STUDENT_ID {self.student_id!r}" if self.student_id
                 else "the book's numbers (STUDENT_ID is empty)")
        lines = [f"{self.label}: {whose}"]
        lines += [f"  {key} = {value!r}" for key, value in self.items()]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):  # IPython shows the same text as repr
        printer.text(repr(self))


def exercise(label, book):
    """Register the numbers of exercise ``label``: the book's, and a function that draws a student's."""
    def register(draw_function):
        if label in _REGISTRY:
            raise ValueError(f"{label} has its numbers defined twice")
        _REGISTRY[label] = (dict(book), draw_function)
        return draw_function
    return register


def _load():
    if not _REGISTRY:
        for module in pkgutil.iter_modules([str(pathlib.Path(__file__).parent)]):
            importlib.import_module(f"{__name__}.{module.name}")
    return _REGISTRY


def labels():
    """The exercises that have per-student numbers, sorted."""
    return sorted(_load())


def normalize_id(student_id):
    """The id as the numbers are drawn from it: a string, spaces around it dropped."""
    if isinstance(student_id, bool) or not isinstance(student_id, (str, numbers.Integral)):
        raise TypeError(f"STUDENT_ID must be a string (or an integer), not {type(student_id).__name__}: "
                        f'write it in quotes, STUDENT_ID = "..."')
    return str(student_id).strip()


def parameters(label, student_id=""):
    """The numbers of exercise ``label`` for ``student_id``: the book's when the id is empty."""
    registry = _load()
    if label not in registry:
        raise ValueError(f"{label!r} has no per-student numbers; those that do: {labels()}")
    student_id = normalize_id(student_id)
    book, draw_function = registry[label]
    if not student_id:
        values = book
    else:
        values = draw_function(Draw(label, student_id))
        if set(values) != set(book):
            raise RuntimeError(f"{label}: drawn names {sorted(values)} differ from the book's {sorted(book)}")
        values = {key: values[key] for key in book}  # in the book's order
    return Parameters(values, label, student_id)
