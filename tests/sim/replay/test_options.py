import pytest

from toposolve.core.errors import InputError
from toposolve.sim.replay.options import choice, number, option_values


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


@pytest.mark.parametrize("text", ["x", "nan", "inf", "0.5"])
def test_number_refuses_non_numbers_infinities_and_values_below_low(text):
    with pytest.raises(InputError, match=f"f must be ≥ 1, not '{text}'"):
        number(text, 1, bad, "f must be ≥ 1")


def test_number_accepts_low_itself():
    assert number("1", 1, bad, "f") == 1.0
