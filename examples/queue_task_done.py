"""A producer and a consumer over ploom.queue.Queue, with a lost task_done.

The producer puts two jobs and waits in ``join()`` until every job is done.
``lossy`` skips ``task_done()`` for a job that fails to parse, so ``join()``
never returns: a deadlock, which ploom reports with each task's wait.
``careful`` calls ``task_done()`` in a ``finally``, and every schedule passes.

    python examples/queue_task_done.py       # finds the deadlock
    ploom-explore examples/queue_task_done.py:lossy
"""

import ploom
import ploom.queue as queue


def _run(consume):
    jobs = queue.Queue(maxsize=1)
    worker = ploom.Thread(target=consume, args=(jobs,))
    worker.start()
    jobs.put("1")
    jobs.put("x")
    jobs.join()
    jobs.put(None)
    worker.join()


def _parse(job):
    return int(job)


def lossy():
    def consume(jobs):
        while (job := jobs.get()) is not None:
            try:
                _parse(job)
            except ValueError:
                continue  # the bug: this job is never marked done
            jobs.task_done()

    _run(consume)


def careful():
    def consume(jobs):
        while (job := jobs.get()) is not None:
            try:
                _parse(job)
            except ValueError:
                pass
            finally:
                jobs.task_done()

    _run(consume)


if __name__ == "__main__":
    config = ploom.Config(reduction="dpor")
    print(f"careful: {ploom.check(careful, config).schedules} schedules, all pass")
    ploom.check(lossy, config)
