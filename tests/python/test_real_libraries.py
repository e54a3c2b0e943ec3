"""Real third-party libraries, unmodified, checked through Config(patch=...).

cachetools (pinned in the dev group) builds its function decorators' locks
when a decorator is applied, that is when the module using it is imported:
the case that patching after import could not reach.  Each test writes its
scenario into its own folder and checks it by file."""

import textwrap

import pytest

import ploom
from ploom.exploration import ModelCheckError, SetupError

cachetools = pytest.importorskip(
    "cachetools", reason="cachetools is not installed: `make` installs it from the dev group (requirements-dev.txt)"
)

MEMO = """
    import cachetools
    import cachetools.func
    import ploom

    calls = ploom.SharedCell(0)


    @cachetools.func.{decorator}
    def lookup(key):
        calls.write(calls.read() + 1)
        return key * 2


    def scenario():
        results = []
        workers = [ploom.Thread(target=lambda: results.append(lookup(21))) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert results == [42, 42], results
        # the decorator's condition lets one caller compute, the other wait
        assert calls.read() == 1, f"computed {{calls.read()}} times"
"""


def _explore(tmp_path, source, **config):
    path = tmp_path / "memo.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return ploom.exploration.explore(f"{path}:scenario", None, ploom.Config(**config))


@pytest.mark.parametrize("decorator", ["lru_cache(maxsize=8)", "ttl_cache(maxsize=8, ttl=60)"])
@pytest.mark.parametrize("reduction", [None, "dpor"])
def test_a_cachetools_decorator_made_at_import_computes_once_in_every_order(tmp_path, monkeypatch, decorator,
                                                                            reduction):
    monkeypatch.chdir(tmp_path)
    stats = _explore(tmp_path, MEMO.format(decorator=decorator), patch=("cachetools.func",), reduction=reduction)
    assert stats.complete and stats.failing == 0
    # the second caller waits on the condition in some orders, not in others
    assert stats.schedules > 1


def test_unpatched_the_decorators_real_condition_ends_the_schedule_naming_cachetools(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = (
        r"UnscheduledPrimitiveError: a standard-library threading.Condition made at func.py:\d+ "
        r"\(module cachetools.func\).*Add 'cachetools.func' to patch="
    )
    with pytest.raises(SetupError, match=message):
        _explore(tmp_path, MEMO.format(decorator="lru_cache(maxsize=8)"), reduction="dpor")


UNLOCKED = """
    import cachetools
    import ploom

    calls = ploom.SharedCell(0)


    @cachetools.cached(cache=cachetools.LRUCache(maxsize=8))
    def lookup(key):
        calls.write(calls.read() + 1)
        return key * 2


    def scenario():
        workers = [ploom.Thread(target=lookup, args=(21,)) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert calls.read() == 1, f"computed {calls.read()} times"
"""


@pytest.mark.parametrize("reduction", [None, "dpor"])
def test_a_cache_without_a_lock_computes_twice_in_some_order(tmp_path, monkeypatch, reduction):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelCheckError, match="computed 2 times"):
        _explore(tmp_path, UNLOCKED, patch=("cachetools",), reduction=reduction)
