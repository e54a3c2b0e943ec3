"""Inputs at the sizes a real project reaches: many plain points on the
worker's way in, in a search and in a saved trace."""

import json
import subprocess
import sys
import textwrap

import pytest

import ploom
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError

# A long module name, so that the site keys of one function (MODULE:K) add
# up to far more than the 128 KiB execve() takes in one argument.
MODULE = "a_module_with_a_rather_long_name_for_its_sites"
INCREMENTS = 3000


def _write_scenario(folder):
    """A module whose work() reads and writes one attribute 3,000 times
    each: 6,000 access sites on s.hits, all of them points once the search
    sees two tasks share it."""
    body = "\n".join("    s.hits = s.hits + 1" for _ in range(INCREMENTS))
    source = textwrap.dedent(
        """\
        import ploom


        class Stats:
            hits = 0


        def work(s):
        {body}


        def scenario():
            s = Stats()
            t = ploom.Thread(target=work, args=(s,))
            t.start()
            work(s)
            t.join()
            assert s.hits == {total}, s.hits
        """
    ).format(body=body, total=2 * INCREMENTS)
    path = folder / f"{MODULE}.py"
    path.write_text(source)
    return path


def _check(path, trace_dir, **kw):
    sys.path.insert(0, str(path.parent))
    try:
        module = __import__(MODULE)
        return ploom.check(
            module.scenario,
            ploom.Config(trace_dir=str(trace_dir), instrument=(MODULE,), max_steps=20000, **kw),
        )
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.pop(MODULE, None)


def test_6000_points_in_a_search_and_40000_in_a_saved_trace(tmp_path):
    """The search finds the lost update with all 6,000 sites as points;
    its trace, planted with 40,000 points (0.6 MB of keys), replays, and
    the next search runs it first and fails with it, not exit 2."""
    path = _write_scenario(tmp_path)
    traces = tmp_path / "traces"
    # depth first, chosen: it makes the shared sites points one by one,
    # where the default would turn to the reduction
    with pytest.raises(ModelCheckError) as info:
        _check(path, traces, minimize=False, reduction="none")
    assert info.value.summary.startswith("builtins.AssertionError")
    saved = info.value.original_trace
    trace = json.loads(open(saved).read())
    keys = trace["config"]["plain_points"]
    assert len(keys) >= 2 * INCREMENTS
    assert len(",".join(keys)) > 128 * 1024
    # points of sites no module has: they change nothing but the list's size
    trace["config"]["plain_points"] += [
        f"{MODULE}_elsewhere:{k}" for k in range(40000 - len(keys))
    ]
    text = json.dumps(trace)
    assert len(text) > 600 * 1024
    with open(saved, "w") as f:
        f.write(text)
    replayed = subprocess.run(
        [find_utility("ploom-replay"), saved], capture_output=True, text=True, check=False,
        cwd=tmp_path,
    )
    assert replayed.returncode == 1, replayed.stderr
    assert "reproduced" in replayed.stderr
    with pytest.raises(ModelCheckError) as again:
        _check(path, traces, minimize=False, reduction="none")
    assert again.value.summary == info.value.summary
    assert again.value.statistics.saved_failing == 1


def test_a_trace_of_8000_steps_is_followed_on_edited_source_in_one_run(tmp_path):
    """A random order switches tasks at about every other branch point,
    each a step where the default would leave the recorded order: followed
    on the edited source, the recorded order is kept in one run (a run per
    such step took minutes at this size)."""
    path = tmp_path / "counting.py"
    path.write_text(textwrap.dedent(
        """\
        import ploom


        def scenario():
            c = ploom.SharedCell(0)

            def work():
                for _ in range(2000):
                    c.write(c.read() + 1)

            t = ploom.Thread(target=work)
            t.start()
            work()
            t.join()
            assert c.read() == 4000, c.read()
        """
    ))
    explored = subprocess.run(
        [find_utility("ploom-explore"), "-q", "--search=random", "--seed=0", "-n", "5", "--no-minimize",
         "--max-steps=20000", f"--trace-dir={tmp_path / 'traces'}", "counting.py:scenario"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )
    assert explored.returncode == 1, explored.stderr
    trace_path = json.loads(explored.stdout)["trace"]
    trace = json.loads((tmp_path / trace_path).read_text())
    steps = trace["steps"]
    assert len(steps) > 8000
    switches = sum(1 for a, b in zip(steps, steps[1:], strict=False) if a["task"] != b["task"])
    assert switches > 2000
    with open(path, "a") as f:
        f.write("# an edit\n")
    # a run per switch would take minutes here: past the guard, it hangs
    followed = subprocess.run(
        [find_utility("ploom-replay"), "--on-current-source", trace_path],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=120,
    )
    assert followed.returncode == 1, followed.stderr
    assert "(the recorded failure) on the current source; 0 departures" in followed.stderr
    assert json.loads(followed.stdout)["steps"] == steps
