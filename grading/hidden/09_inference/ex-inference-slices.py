"""Hidden cases of ex-inference-slices: the table for other formats, days and years, and the failing months,
which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_table, _decoded) are in scope.
"""

from otter.test_files import test_case

from mintransformer import data


@test_case(points=1, hidden=True)
def hidden_other_slices(error_table):
    _table(error_table, [0, 9, 11], [5, 28], range(1953, 2050, 17))  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_the_failing_months(failing_months):
    results = _decoded([6], [2], range(1950, 2050))[6, 2]  # noqa: F821
    expected = {data.MONTHS[int(t[5:7]) - 1] for _, t, o in results if o != t}
    try:
        got = {str(m).strip().capitalize() for m in ([failing_months] if isinstance(failing_months, str)
                                                      else failing_months)}
    except TypeError:
        got = None
    if got != expected:
        raise AssertionError(
            "`failing_months` is not the set of months in which the slice '3/2/1998' (format 6, day 2) fails "
            "in at least one year from 1950 to 2049. Decode that slice for every year and group the wrong "
            "outputs by month."
        )
