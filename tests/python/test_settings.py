"""A project's settings: [tool.ploom] in pyproject.toml and pytest's
ploom_* ini keys, found from a folder upward, named with where each came
from, and overridden by what the caller gives."""

import os
import subprocess
import sys
import textwrap

import pytest

import ploom
from ploom._settings import find_settings


def _write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_tool_ploom_is_read_from_a_subfolder_and_names_its_file(tmp_path, monkeypatch):
    _write(tmp_path, "pyproject.toml", """
        [tool.ploom]
        patch = ["mylib.account"]
        max_schedules = 50
        reduction = "dpor"
        """)
    (tmp_path / "tests").mkdir()
    monkeypatch.chdir(tmp_path)
    settings = find_settings(tmp_path / "tests")
    assert settings.values == {"patch": ("mylib.account",), "max_schedules": 50, "reduction": "dpor"}
    assert settings.line("patch") == "patch: mylib.account (pyproject.toml [tool.ploom])"
    assert settings.root == str(tmp_path)


def test_pytest_ini_keys_are_read_from_each_of_pytests_files(tmp_path):
    _write(tmp_path / "a", "pyproject.toml", """
        [tool.pytest.ini_options]
        ploom_patch = ["mylib.account"]
        ploom_keep_going = "true"
        """)
    _write(tmp_path / "b", "pytest.ini", """
        [pytest]
        ploom_patch = mylib.account mylib.pool
        ploom_time_limit = 2.5
        """)
    _write(tmp_path / "c", "setup.cfg", """
        [tool:pytest]
        ploom_minimize = no
        """)
    assert find_settings(tmp_path / "a").values == {"patch": ("mylib.account",), "keep_going": True}
    assert find_settings(tmp_path / "b").values == {"patch": ("mylib.account", "mylib.pool"), "time_limit": 2.5}
    assert find_settings(tmp_path / "c").values == {"minimize": False}


def test_an_unknown_key_names_the_nearest_and_a_wrong_type_names_the_file(tmp_path):
    _write(tmp_path / "a", "pyproject.toml", "[tool.ploom]\npatches = ['x']\n")
    with pytest.raises(ValueError, match=r"unknown setting 'patches' in .*\[tool\.ploom\] \(did you mean 'patch'"):
        find_settings(tmp_path / "a")
    _write(tmp_path / "b", "pytest.ini", "[pytest]\nploom_max_schedule = 3\n")
    with pytest.raises(ValueError, match=r"unknown setting 'ploom_max_schedule' .*did you mean 'ploom_max_schedules'"):
        find_settings(tmp_path / "b")
    _write(tmp_path / "c", "pyproject.toml", "[tool.ploom]\nmax_schedules = '3'\n")
    with pytest.raises(TypeError, match=r"pyproject.toml \[tool.ploom\]: Config.max_schedules must be an integer"):
        find_settings(tmp_path / "c")
    _write(tmp_path / "d", "pyproject.toml",
           "[tool.ploom]\npatch = ['x']\n[tool.pytest.ini_options]\nploom_patch = 'y'\n")
    with pytest.raises(ValueError, match=r"'patch' is set twice"):
        find_settings(tmp_path / "d")
    _write(tmp_path / "e", "pyproject.toml", "[tool.ploom\n")
    with pytest.raises(ValueError, match=r"cannot read the settings in"):
        find_settings(tmp_path / "e")


def test_a_project_folder_ends_the_search_upward(tmp_path):
    _write(tmp_path, "pyproject.toml", "[tool.ploom]\npatch = ['outer']\n")
    _write(tmp_path / "inner", "pyproject.toml", "[project]\nname = 'inner'\n")
    assert find_settings(tmp_path / "inner").values == {}


def test_what_the_caller_gives_wins_over_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "pyproject.toml", "[tool.ploom]\npatch = ['a']\nmax_schedules = 5\n")
    settings = find_settings(tmp_path)
    config, applied = settings.apply(ploom.Config(max_schedules=7))
    assert (config.patch, config.max_schedules) == (("a",), 7)
    assert applied == ["patch: a (pyproject.toml [tool.ploom])"]
    options, applied = settings.options(["--patch=b", "-n", "9", "x:y"])
    assert "--patch=a" not in options and "--max-schedules=5" in options
    assert [line.split(":")[0] for line in applied] == ["max_schedules"]


def test_ploom_check_takes_the_settings_and_says_where_they_came_from(tmp_path):
    _write(tmp_path, "pyproject.toml", "[tool.ploom]\nmax_schedules = 2\n")
    _write(tmp_path, "scen.py", """
        import ploom

        def scenario():
            c = ploom.SharedCell(0)
            ts = [ploom.Thread(target=lambda: c.write(c.read() + 1)) for _ in range(3)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        """)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    result = subprocess.run([sys.executable, "-m", "ploom", "check", "scen:scenario"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert "python -m ploom check: max_schedules: 2 (pyproject.toml [tool.ploom])\n" in result.stderr
    assert "after 2 schedules" in result.stdout
    result = subprocess.run([sys.executable, "-m", "ploom", "check", "-n", "3", "scen:scenario"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3 and "after 3 schedules" in result.stdout, result.stdout + result.stderr
