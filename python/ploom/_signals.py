"""Signal handlers run no ploom operation unseen.

A Python signal handler runs in the main thread between two bytecodes of
whatever task 0 is doing, outside the schedule's order: an operation there
would be recorded inside another step.  The worker calls :func:`install`
before it imports the scenario; from then on ``signal.signal`` wraps each
Python handler so that the scheduler knows a handler runs, and an operation
in it ends the schedule with a RuntimeError naming the signal.
``signal.getsignal`` still returns the handler that was set.
"""

from __future__ import annotations

import functools
import signal

from ploom import _ploom

_installed = False


def _wrap(handler):
    @functools.wraps(handler)
    def run_handler(signum, frame):
        before = _ploom.in_signal_handler(signum)
        try:
            return handler(signum, frame)
        finally:
            _ploom.in_signal_handler(before)

    run_handler._ploom_handler = handler  # type: ignore[attr-defined]
    return run_handler


def install():
    global _installed
    if _installed:
        return
    _installed = True
    real_signal, real_getsignal = signal.signal, signal.getsignal

    @functools.wraps(real_signal)
    def signal_(signalnum, handler):
        if callable(handler):
            handler = _wrap(handler)
        before = real_signal(signalnum, handler)
        return getattr(before, "_ploom_handler", before)

    @functools.wraps(real_getsignal)
    def getsignal(signalnum):
        handler = real_getsignal(signalnum)
        return getattr(handler, "_ploom_handler", handler)

    signal.signal = signal_
    signal.getsignal = getsignal
