/* Tests of the happens-before analysis (lib/hb) that the partial-order
 * reduction and the racing pairs share: above all that an event's race
 * candidates are all there, however many reads came before it. */
#include <stdlib.h>

#include "../../lib/event.h"
#include "../../lib/hb.h"
#include "check.h"

struct ev {
	int task;
	enum ploom_op op;
};

/* Feeds events[0..n) on cell#0 to a fresh analysis of ntasks tasks and
 * returns the maximal race candidates of the last one, sorted, in out
 * (at most cap); -1 on error. */
static int candidates_of_last(long *out, int cap, const struct ev *events, int n, int ntasks)
{
	struct ploom_hb *hb = NULL;
	struct ploom_obj cell = {PLOOM_OBJ_CELL, 0};
	long *c = NULL;
	int j, k, nc = -1;

	if (ploom_hb_new(&hb) < 0 || ploom_hb_reset(hb, ntasks, (size_t)n) < 0)
		goto done;
	for (j = 0; j < n; j++) {
		struct ploom_access a[PLOOM_ACCESS_MAX];
		int na = ploom_op_accesses(a, events[j].task, events[j].op, cell, PLOOM_ACQUIRE_BLOCKING, 0);

		if (ploom_hb_clock(hb, j, events[j].task, a, na, -1) < 0)
			goto done;
		if (j == n - 1) {
			nc = ploom_hb_candidates(hb, &c, events[j].task, a, na, 0);
			if (nc < 0)
				goto done;
			nc = ploom_hb_maximal(hb, c, nc);
			break;
		}
		if (ploom_hb_step(hb, j, events[j].task, events[j].op, a, na, 0) < 0)
			goto done;
	}
	if (nc > cap)
		nc = cap;
	for (j = 0; j < nc; j++)
		out[j] = c[j];
	/* sorted, for the comparisons */
	for (j = 1; j < nc; j++)
		for (k = j; k > 0 && out[k - 1] > out[k]; k--) {
			long t = out[k];
			out[k] = out[k - 1];
			out[k - 1] = t;
		}
done:
	ploom_hb_free(hb);
	return nc;
}

static void a_write_races_with_every_concurrent_read_before_it(void)
{
	enum { READERS = 40 };
	struct ev events[READERS + 1];
	long got[READERS + 1];
	int i, n;

	for (i = 0; i < READERS; i++)
		events[i] = (struct ev){i, PLOOM_OP_READ};
	events[READERS] = (struct ev){READERS, PLOOM_OP_WRITE};
	n = candidates_of_last(got, READERS + 1, events, READERS + 1, READERS + 1);
	CHECK_INT(n, READERS);
	for (i = 0; i < n && i < READERS; i++)
		CHECK_INT(got[i], i);
}

static void a_read_of_another_task_after_many_of_its_own_is_a_candidate(void)
{
	/* task 0 reads 20 times, task 1 once, then task 0 writes: the write
	 * races with task 1's read however many reads of its own came first */
	struct ev events[22];
	long got[22];
	int i, n;

	for (i = 0; i < 20; i++)
		events[i] = (struct ev){0, PLOOM_OP_READ};
	events[20] = (struct ev){1, PLOOM_OP_READ};
	events[21] = (struct ev){0, PLOOM_OP_WRITE};
	n = candidates_of_last(got, 22, events, 22, 2);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_INT(got[0], 20);
}

static void a_read_races_with_the_last_write_only(void)
{
	struct ev events[] = {{0, PLOOM_OP_WRITE}, {1, PLOOM_OP_WRITE}, {2, PLOOM_OP_READ}};
	long got[3];
	int n = candidates_of_last(got, 3, events, 3, 3);

	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_INT(got[0], 1);
}

static void a_write_after_thousands_of_reads_races_with_each_tasks_last(void)
{
	/* tasks 1 and 2 take turns reading, then task 0 writes: of the
	 * thousands of candidates only each task's last read is maximal */
	enum { READS = 3000 };
	static struct ev events[READS + 1];
	long got[2];
	int i, n;

	for (i = 0; i < READS; i++)
		events[i] = (struct ev){1 + i % 2, PLOOM_OP_READ};
	events[READS] = (struct ev){0, PLOOM_OP_WRITE};
	n = candidates_of_last(got, 2, events, READS + 1, 3);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(got[0], READS - 2);
		CHECK_INT(got[1], READS - 1);
	}
}

/* Event j of task q: op on obj, clocked and stepped; -1 on error. */
static int feed(struct ploom_hb *hb, long j, int q, enum ploom_op op, long cell)
{
	struct ploom_access a[PLOOM_ACCESS_MAX];
	int na = ploom_op_accesses(a, q, op, (struct ploom_obj){PLOOM_OBJ_CELL, cell}, PLOOM_ACQUIRE_BLOCKING, 0);

	if (ploom_hb_clock(hb, j, q, a, na, -1) < 0)
		return -1;
	return ploom_hb_step(hb, j, q, op, a, na, 0);
}

static void maximal_keeps_its_order_and_drops_an_event_before_another_task(void)
{
	/* 0: task 1 reads cell#0; 1: task 1 writes cell#1; 2: task 2 reads
	 * cell#1; 3: task 2 reads cell#0; 4: task 3 reads cell#0.  Event 0
	 * happens before 3 through cell#1, though 0 and 3 are of two tasks
	 * and both read cell#0 */
	struct ploom_hb *hb = NULL;
	long c[5] = {4, 3, 0, 4, 0};
	int n = -1;

	if (!CHECK(ploom_hb_new(&hb) == 0) || !CHECK(ploom_hb_reset(hb, 4, 5) == 0))
		goto done;
	if (!CHECK(feed(hb, 0, 1, PLOOM_OP_READ, 0) == 0 && feed(hb, 1, 1, PLOOM_OP_WRITE, 1) == 0 &&
		   feed(hb, 2, 2, PLOOM_OP_READ, 1) == 0 && feed(hb, 3, 2, PLOOM_OP_READ, 0) == 0 &&
		   feed(hb, 4, 3, PLOOM_OP_READ, 0) == 0))
		goto done;
	n = ploom_hb_maximal(hb, c, 5);
	/* in the order given, a repeated event kept as often as it came */
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(c[0], 4);
		CHECK_INT(c[1], 3);
		CHECK_INT(c[2], 4);
	}
done:
	ploom_hb_free(hb);
}

static void an_idle_step_follows_every_earlier_event_and_races_with_none(void)
{
	/* 0: task 1 writes cell#1; 1: task 2 writes cell#0; 2: task 3
	 * writes cell#0, an idle step (a barrier) or not; 3: task 1 reads
	 * cell#0.  The idle step follows 0 and 1 and has no candidate; what
	 * comes after it keeps its races (3's with 2) */
	struct ploom_hb *hb = NULL;
	struct ploom_access a[PLOOM_ACCESS_MAX];
	struct ploom_obj cell0 = {PLOOM_OBJ_CELL, 0};
	long *c = NULL;
	int na, n, barrier;

	for (barrier = 0; barrier <= 1; barrier++) {
		if (!CHECK(ploom_hb_new(&hb) == 0) || !CHECK(ploom_hb_reset(hb, 4, 4) == 0))
			goto done;
		if (!CHECK(feed(hb, 0, 1, PLOOM_OP_WRITE, 1) == 0 && feed(hb, 1, 2, PLOOM_OP_WRITE, 0) == 0))
			goto done;
		if (barrier)
			ploom_hb_barrier(hb, 2);
		na = ploom_op_accesses(a, 3, PLOOM_OP_WRITE, cell0, PLOOM_ACQUIRE_BLOCKING, 0);
		if (!CHECK(ploom_hb_clock(hb, 2, 3, a, na, -1) == 0))
			goto done;
		n = ploom_hb_candidates(hb, &c, 3, a, na, 0);
		CHECK_INT(n, barrier ? 0 : 1);
		CHECK_INT(ploom_hb_before(hb, ploom_hb_vc(hb, 2), 0), barrier);
		CHECK_INT(ploom_hb_before(hb, ploom_hb_vc(hb, 2), 1), 1);
		if (!CHECK(ploom_hb_step(hb, 2, 3, PLOOM_OP_WRITE, a, na, 0) == 0))
			goto done;
		na = ploom_op_accesses(a, 1, PLOOM_OP_READ, cell0, PLOOM_ACQUIRE_BLOCKING, 0);
		if (!CHECK(ploom_hb_clock(hb, 3, 1, a, na, -1) == 0))
			goto done;
		n = ploom_hb_candidates(hb, &c, 1, a, na, 0);
		CHECK_INT(n, 1);
		if (n == 1)
			CHECK_INT(c[0], 2);
		ploom_hb_free(hb);
		hb = NULL;
	}
done:
	ploom_hb_free(hb);
}

int main(void)
{
	an_idle_step_follows_every_earlier_event_and_races_with_none();
	a_write_races_with_every_concurrent_read_before_it();
	a_read_of_another_task_after_many_of_its_own_is_a_candidate();
	a_read_races_with_the_last_write_only();
	a_write_after_thousands_of_reads_races_with_each_tasks_last();
	maximal_keeps_its_order_and_drops_an_event_before_another_task();
	return check_report();
}
