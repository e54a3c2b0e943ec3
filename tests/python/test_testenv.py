"""testenv: a size or a seed from the environment that is zero or not a
whole number stops the tests with its name, never runs none of them."""

import os
import subprocess
import sys

import pytest

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))


def test_a_count_that_is_not_set_is_the_default(monkeypatch):
    monkeypatch.delenv("PLOOM_TESTENV_X", raising=False)
    assert testenv.count("PLOOM_TESTENV_X", 16) == 16
    assert testenv.start("PLOOM_TESTENV_X") == 0


@pytest.mark.parametrize(("value", "want"), [("1", 1), ("250", 250), ("0007", 7)])
def test_a_whole_number_is_read(monkeypatch, value, want):
    monkeypatch.setenv("PLOOM_TESTENV_X", value)
    assert testenv.count("PLOOM_TESTENV_X", 16) == want
    assert testenv.start("PLOOM_TESTENV_X") == want


@pytest.mark.parametrize("value", ["0", "1x", "", " 5", "5 ", "-3", "+3", "1_000", "1.5", "\u00b2"])
def test_a_count_that_is_zero_or_not_a_whole_number_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("PLOOM_TESTENV_X", value)
    with pytest.raises(ValueError) as info:
        testenv.count("PLOOM_TESTENV_X", 16)
    assert str(info.value) == f"PLOOM_TESTENV_X={value!r} is not a count: a whole number from 1"


def test_a_seed_may_be_zero_but_must_be_a_whole_number(monkeypatch):
    monkeypatch.setenv("PLOOM_TESTENV_X", "0")
    assert testenv.start("PLOOM_TESTENV_X") == 0
    monkeypatch.setenv("PLOOM_TESTENV_X", "1x")
    with pytest.raises(ValueError, match="PLOOM_TESTENV_X='1x' is not a seed"):
        testenv.start("PLOOM_TESTENV_X")


@pytest.mark.parametrize(
    ("module", "name", "value"),
    [
        ("test_primitives_differential.py", "PLOOM_PRIM_SEEDS", "0"),
        ("test_primitives_differential.py", "PLOOM_PRIM_SEEDS", "1x"),
        ("test_differential.py", "PLOOM_DIFF_SEEDS", "0"),
        ("test_plain.py", "PLOOM_PLAIN_DIFF_SEEDS", "1x"),
    ],
)
def test_pytest_stops_before_any_test_of_a_module_told_to_run_none(module, name, value):
    env = dict(os.environ, **{name: value})
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
         os.path.join(HERE, module)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode != 0
    assert f"{name}={value!r} is not a count: a whole number from 1" in proc.stdout + proc.stderr
