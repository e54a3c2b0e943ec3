"""A project's ploom settings: ``[tool.ploom]`` in ``pyproject.toml``, and
pytest's ini keys ``ploom_*`` (``ploom_patch = mylib.account``).

Every key is a field of :class:`ploom.Config` (``patch``, ``instrument``,
``reduction``, ``search``, ``max_schedules``, ``time_limit``, ...); in
pytest's ini it takes the prefix ``ploom_``.  The settings are found from a
start folder upward: the first folder holding a ``pyproject.toml``, a
``pytest.ini``, a ``tox.ini`` with a ``[pytest]`` section or a
``setup.cfg`` with a ``[tool:pytest]`` one is the project's, and its files
are read; a folder above it never is.  A key set in both places is an
error, as is a key that is no field (with the nearest names).  A relative
``trace_dir`` is taken from the folder of the file that sets it.

``ploom check``, :func:`ploom.check` and the ``ploom_check`` fixture apply
them under what their caller gives: an option on the command line, or a
field of the given ``Config`` that is not its default, wins.
:func:`find_settings` is the one function that finds and reads them.
"""

from __future__ import annotations

import configparser
import dataclasses
import os
import tomllib
from typing import Any

# pytest's ini files and the section each keeps pytest's keys in; a
# pyproject.toml keeps them in [tool.pytest.ini_options]
_INI_FILES = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
INI_PREFIX = "ploom_"
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _fields() -> dict[str, str]:
    """Config's fields and their kinds (_config.OPTIONS)."""
    from ploom._config import OPTIONS

    return {field: kind for field, _, kind in OPTIONS}


def ini_keys() -> list[tuple[str, str]]:
    """pytest's ini keys of the settings, each with its field's kind."""
    return [(INI_PREFIX + field, kind) for field, kind in _fields().items()]


@dataclasses.dataclass(frozen=True)
class Settings:
    """What the project's files set: ``values``, Config field to value;
    ``sources``, field to where it was set (``pyproject.toml
    [tool.ploom]``, the file's path as seen from the current folder);
    ``root``, the folder of those files, or None when none was found;
    ``pythonpath``, pytest's setting of that name, as absolute folders."""

    values: dict[str, Any] = dataclasses.field(default_factory=dict)
    sources: dict[str, str] = dataclasses.field(default_factory=dict)
    root: str | None = None
    # pytest's ``pythonpath``, absolute: the folders pytest imports from,
    # which a search imports from too, as the tests do
    pythonpath: list[str] = dataclasses.field(default_factory=list)

    def line(self, field: str) -> str:
        """``patch: mylib.account (pyproject.toml [tool.ploom])``."""
        value = self.values[field]
        shown = ", ".join(value) if isinstance(value, tuple) else str(value)
        return f"{field}: {shown} ({self.sources[field]})"

    def apply(self, config):
        """(config with the settings in the fields it leaves at their
        default, the lines of the settings applied)."""
        from ploom.exploration import Config

        default = Config()
        taken = {k: v for k, v in self.values.items() if getattr(config, k) == getattr(default, k)}
        return dataclasses.replace(config, **taken), [self.line(k) for k in taken]

    def options(self, args: list[str]) -> tuple[list[str], list[str]]:
        """(the ``ploom-explore`` options of the settings, to come before
        args, the lines of the settings applied).  A valued option or flag
        in args comes later and wins; a list (``--patch``, ``--instrument``)
        in args replaces the file's, as the utility would add to it."""
        from ploom.exploration import Config

        given = _long_options_given(args)
        listed = {k: v for k, v in self.values.items() if not (isinstance(v, tuple) and k in given)}
        return Config(**listed)._options(), [self.line(k) for k in listed]


def _long_options_given(args: list[str]) -> set[str]:
    """The list fields (patch, instrument) whose option args gives, as
    getopt reads a long option: its name or a prefix of it, with or
    without ``=VALUE``."""
    from ploom._config import OPTIONS

    lists = {option[2:]: field for field, option, kind in OPTIONS if kind == "names"}
    given = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--") and len(arg) > 2:
            name = arg[2:].partition("=")[0]
            given |= {field for option, field in lists.items() if option.startswith(name)}
    return given


def find_settings(start: str | os.PathLike) -> Settings:
    """The settings of the project start lies in (a folder), read from its
    files: see the module's docstring.  Raises ValueError naming the file
    for a file that cannot be read, an unknown key (with the nearest
    names) or a key set twice, and TypeError naming the file for a value of
    the wrong type."""
    folder = os.path.abspath(start)
    while True:
        found = _read_folder(folder)
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return Settings()
        folder = parent


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _read_folder(folder: str) -> Settings | None:
    """The settings of folder's files, or None when it holds none of a
    project's (the search goes on above)."""
    tables: list[tuple[str, dict, str]] = []  # (source, {key: value}, prefix)
    project = False
    pyproject = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(pyproject):
        project = True
        try:
            with open(pyproject, "rb") as f:
                data = tomllib.load(f)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"ploom: cannot read the settings in {_shown(pyproject)!r}: {exc}") from None
        tool = data.get("tool", {})
        if isinstance(tool.get("ploom"), dict):
            tables.append((f"{_shown(pyproject)} [tool.ploom]", tool["ploom"], ""))
        ini = tool.get("pytest", {}).get("ini_options") if isinstance(tool.get("pytest"), dict) else None
        if isinstance(ini, dict):
            tables.append((f"{_shown(pyproject)} [tool.pytest.ini_options]", ini, INI_PREFIX))
    for name, section in _INI_FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, UnicodeDecodeError, configparser.Error) as exc:
            raise ValueError(f"ploom: cannot read the settings in {_shown(path)!r}: {exc}") from None
        if name == "pytest.ini" or parser.has_section(section):
            project = True
        if parser.has_section(section):
            tables.append((f"{_shown(path)} [{section}]", dict(parser.items(section)), INI_PREFIX))
    if not project:
        return None
    settings = Settings(root=folder)
    for source, table, prefix in tables:
        _take(settings, source, table, prefix, folder)
        if prefix and "pythonpath" in table and not settings.pythonpath:
            paths = table["pythonpath"]
            paths = paths.split() if isinstance(paths, str) else paths
            # as pytest takes them: from the folder of the file
            settings.pythonpath.extend(os.path.join(folder, p) for p in paths if isinstance(p, str))
    return settings


def _take(settings: Settings, source: str, table: dict, prefix: str, folder: str) -> None:
    from ploom._worker import nearest

    fields = _fields()
    for key, value in table.items():
        if prefix and not key.startswith(prefix):
            continue  # pytest's own keys
        field = key[len(prefix):]
        if field not in fields:
            names = [prefix + f for f in fields]
            raise ValueError(f"ploom: unknown setting {key!r} in {source}{nearest(key, names)}")
        if field in settings.values:
            raise ValueError(f"ploom: {field!r} is set twice: in {settings.sources[field]} and in {source}")
        if prefix:
            # pytest's ini values are text, which the field's kind reads
            value = _typed(fields[field], value, f"{key!r} in {source}")
        elif isinstance(value, list):
            value = tuple(value)
        if fields[field] == "path":
            value = os.path.join(folder, os.path.expanduser(value))
        settings.values[field] = value
        settings.sources[field] = source
    _check_types(settings, source)


def _typed(kind: str, value: Any, where: str) -> Any:
    """A value of pytest's ini as Config takes it: TOML's own types (in
    [tool.pytest.ini_options]) as they are, text read as the field's kind."""
    if not isinstance(value, str) or kind in ("str", "path"):
        return tuple(value) if kind == "names" and isinstance(value, list) else value
    text = value.strip()
    try:
        if kind == "names":
            return tuple(text.replace(",", " ").split())
        if kind == "int":
            return int(text)
        if kind == "seconds":
            return float(text)
        if kind in ("flag", "unset flag"):
            if text.lower() in _TRUE | _FALSE:
                return text.lower() in _TRUE
            raise ValueError
    except ValueError:
        raise ValueError(f"ploom: invalid value {value!r} for {where}") from None
    return value  # pragma: no cover - every kind is above


def _check_types(settings: Settings, source: str) -> None:
    """Config's own type check, naming the file."""
    from ploom.exploration import Config

    for field, value in settings.values.items():
        if settings.sources[field] != source:
            continue
        try:
            Config(**{field: value})
        except TypeError as exc:
            raise TypeError(f"ploom: {source}: {exc}") from None
