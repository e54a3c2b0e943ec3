"""The partial-order reduction against plain DFS on generated programs over
ploom's primitives (primgen.py): their one-step waits (a Condition's,
an Event's, a Semaphore's, a queue's) must not hide an outcome.

For each seed, both searches run with -k; when plain DFS completes within
PLOOM_PRIM_LIMIT schedules, the reduction must reach exactly its set of
outcome summaries (each program raises its final state, so different
terminal states differ), in no more schedules.  A program too big for the
limit is counted, not compared; at least half the seeds must be compared,
or the test fails: a differential test that compares nothing must not pass.

    PLOOM_PRIM_SEEDS=N   seeds (default 12); `make soak` runs 200
    PLOOM_PRIM_START=S   the first seed (default 0)
    PLOOM_PRIM_LIMIT=L   plain DFS's schedules at most (default 1500; soak 5000)

A failing seed's program is printed by ``python tests/python/primgen.py SEED``.
"""

import concurrent.futures
import os

import primgen
import progen

SEEDS = int(os.environ.get("PLOOM_PRIM_SEEDS", "12"))
START = int(os.environ.get("PLOOM_PRIM_START", "0"))
LIMIT = int(os.environ.get("PLOOM_PRIM_LIMIT", "1500"))


def _explore_both(seed, folder):
    """(seed, DFS statistics or a message, DPOR statistics or a message)."""
    folder = folder / str(seed)
    folder.mkdir()
    target = primgen.write_program(seed, folder)
    found = []
    for reduction, limit in (("none", LIMIT), ("dpor", None)):
        rc, stats, stderr = progen.explore(
            target, folder / f"traces-{reduction}", f"--reduction={reduction}", "--no-saved", limit=limit
        )
        if stats is None or rc not in (0, 1, 3):
            stats = f"--reduction={reduction} exited {rc} with no statistics: {stderr[-2000:]}"
        found.append(stats)
    return seed, *found


def _summaries(stats):
    return {o["summary"] for o in stats["outcomes"]}


def test_dpor_reaches_the_outcomes_of_dfs_on_generated_primitive_programs(tmp_path):
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda seed: _explore_both(seed, tmp_path), range(START, START + SEEDS)))
    compared, too_big, several = [], [], 0
    for seed, dfs, dpor in results:
        where = f"seed {seed} (python tests/python/primgen.py {seed})"
        assert isinstance(dfs, dict), f"{where}: {dfs}"
        assert isinstance(dpor, dict), f"{where}: {dpor}"
        assert dpor["complete"], f"{where}: the reduction did not complete: {dpor['stopped_by']}"
        if not dfs["complete"]:
            too_big.append(seed)
            continue
        assert _summaries(dpor) == _summaries(dfs), f"{where}: DFS {_summaries(dfs)}, DPOR {_summaries(dpor)}"
        assert dpor["schedules"] <= dfs["schedules"], where
        compared.append(seed)
        several += len(_summaries(dfs)) > 1
    print(
        f"{len(compared)} programs compared ({several} with more than one outcome), "
        f"{len(too_big)} beyond {LIMIT} DFS schedules: {too_big}"
    )
    assert len(compared) * 2 >= SEEDS, (
        f"only {len(compared)} of {SEEDS} programs within {LIMIT} DFS schedules: "
        "the test compared too little (raise PLOOM_PRIM_LIMIT or shrink primgen's programs)"
    )
