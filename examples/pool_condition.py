"""Checking unmodified threading code: examples/connection_pool.py under ploom.

``Config(patch=("connection_pool",))`` swaps that module's ``threading``
for ``ploom.threading`` inside each schedule's process, so its Condition
becomes a scheduled one; nothing in connection_pool.py changes.

    python examples/pool_condition.py        # finds the negative free count
    ploom-explore --patch=connection_pool examples/pool_condition.py:buggy

Three users share a pool of one connection: ``buggy`` (the ``if`` around
``wait``) fails with a negative free count, ``fixed`` (``while``) passes.
"""

import connection_pool

import ploom


def _three_users(pool):
    def user():
        left = pool.take()
        assert left >= 0, f"negative free count: {left}"
        pool.give()

    users = [ploom.Thread(target=user) for _ in range(2)]
    for u in users:
        u.start()
    user()
    for u in users:
        u.join()


def buggy():
    _three_users(connection_pool.Pool(1))


def fixed():
    _three_users(connection_pool.FixedPool(1))


if __name__ == "__main__":
    # the reduction keeps one schedule per order of the conflicting steps,
    # and is complete: "all pass" covers every order
    config = ploom.Config(patch=("connection_pool",), reduction="dpor")
    print(f"fixed: {ploom.check(fixed, config).schedules} schedules, all pass")
    ploom.check(buggy, config)
