"""What ploom's stand-ins for standard modules (``ploom.threading``,
``ploom.queue``, ``ploom._thread``) share: a name the standard module has
but ploom does not schedule is refused, never passed through."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable


def refusing_getattr(std: types.ModuleType, supported: Iterable[str]) -> Callable[[str], object]:
    """A module __getattr__ for ploom's stand-in of std: a name std has but
    ploom does not schedule is an error naming it, never std's object."""
    ours = f"ploom.{std.__name__}"

    def refuse(name: str) -> object:
        if hasattr(std, name):
            raise AttributeError(
                f"{ours} does not support {std.__name__}.{name}: it would run outside "
                f"ploom's scheduler (supported: {', '.join(supported)})"
            )
        raise AttributeError(f"module {ours!r} has no attribute {name!r}")

    return refuse
