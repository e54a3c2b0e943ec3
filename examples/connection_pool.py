"""A connection pool written with plain ``import threading``: the code under
test, which knows nothing of ploom.

``take()`` waits on a Condition while no connection is free, but checks
with ``if`` instead of ``while``: a waiter that ``give()`` wakes must take
the lock again before it returns, and another thread can take the freed
connection in between.  The woken thread then takes one that is not there,
and the free count goes negative.  ``FixedPool`` checks with ``while``.

examples/pool_condition.py checks both without editing this file.
"""

import threading


class Pool:
    def __init__(self, size):
        self._cond = threading.Condition()
        self.free = size

    def take(self):
        with self._cond:
            if self.free == 0:
                self._cond.wait()
            self.free -= 1
            return self.free

    def give(self):
        with self._cond:
            self.free += 1
            self._cond.notify()


class FixedPool(Pool):
    def take(self):
        with self._cond:
            while self.free == 0:
                self._cond.wait()
            self.free -= 1
            return self.free
