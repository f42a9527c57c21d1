import pytest

from toposolve.core.errors import InputError
from toposolve.sim.replay.options import choice, option_values


def bad(message: str) -> InputError:
    return InputError(message, obj="command line", field="--x")


def test_pairs_are_read_and_trimmed():
    assert option_values([" a = 1", "b=two"], ("a", "b"), bad) == {"a": "1", "b": "two"}


@pytest.mark.parametrize("items, words", [
    (["a"], "expected NAME=VALUE, got 'a'"), (["a="], "expected NAME=VALUE"),
    (["a=1", "a=2"], "a given twice"), (["c=1"], "unknown option 'c'"),
])
def test_malformed_pairs_raise_the_callers_error(items, words):
    with pytest.raises(InputError) as err:
        option_values(items, ("a", "b"), bad)
    assert words in str(err.value) and err.value.field == "--x"


def test_choice_defaults_to_the_first_and_refuses_others():
    assert choice({}, "mode", ("lose", "keep"), bad) == "lose"
    assert choice({"mode": "keep"}, "mode", ("lose", "keep"), bad) == "keep"
    with pytest.raises(InputError, match="mode must be one of lose, keep, not 'x'"):
        choice({"mode": "x"}, "mode", ("lose", "keep"), bad)
