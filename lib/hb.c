/* Happens-before over a run; hb.h documents it.
 *
 * Per object, the state the events left it in: its last write, the reads
 * since (each with whether the object was free for it), the adds since
 * (event.h: an add conflicts with reads and writes, not with adds), the last event on
 * it while free, and whether a lock is held, a thread started or
 * finished.  Per event, its task and its clock, one row of ntasks entries
 * in one array. */
#include "hb.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct read {
	long ev;
	int free;
};

/* "Free" is what a blocking operation waits for: a lock not held, a
 * thread not started or finished (joining an unstarted thread raises at
 * once). */
struct obj_state {
	struct ploom_obj obj;
	int used;
	long last_write;        /* -1: none */
	int last_write_free;
	struct read *reads;     /* since last_write */
	size_t nreads, reads_cap;
	struct read *adds;      /* since last_write */
	size_t nadds, adds_cap;
	long last_free;         /* the last event on it while free, -1: none */
	long last_free_write;   /* the last write of it while free, -1: none */
	int held;               /* a lock */
	int started, finished;  /* a thread */
};

struct ploom_hb {
	int ntasks;
	int *task;              /* per event */
	char *free0;            /* per event: its first object was free before it */
	int *vc;                /* vc[j * ntasks + t]: t's last event at or before j, plus 1 */
	long *last_of;          /* per task: its latest event so far, -1 */
	long *latest;           /* per task: ploom_hb_maximal()'s scratch */
	size_t task_cap, free0_cap, vc_cap, last_of_cap, latest_cap;
	struct obj_state *objs; /* open addressing, a power of two */
	size_t objs_cap, objs_used;
	long *cand;             /* ploom_hb_candidates()' answer */
	size_t cand_cap;
	/* an idle event (ploom_hb_barrier()): the next event to be clocked
	 * is ordered after every event before it, whose clocks barrier_vc
	 * joins, and has no race candidate; -1: none */
	long barrier_at;
	long clocked;           /* the event ploom_hb_clock() clocked last */
	int *barrier_vc;
	size_t barrier_vc_cap;
};

int ploom_hb_new(struct ploom_hb **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

static void objs_free(struct ploom_hb *hb)
{
	size_t i;

	for (i = 0; i < hb->objs_cap; i++) {
		free(hb->objs[i].reads);
		free(hb->objs[i].adds);
	}
	free(hb->objs);
	hb->objs = NULL;
	hb->objs_cap = hb->objs_used = 0;
}

void ploom_hb_free(struct ploom_hb *hb)
{
	if (!hb)
		return;
	objs_free(hb);
	free(hb->task);
	free(hb->free0);
	free(hb->vc);
	free(hb->last_of);
	free(hb->latest);
	free(hb->cand);
	free(hb->barrier_vc);
	free(hb);
}

/* Makes *p hold at least n elements of size sz (*cap of them now); the
 * contents need not survive.  0, or -1 when out of memory. */
static int ensure(void **p, size_t *cap, size_t n, size_t sz)
{
	void *q;

	if (n <= *cap)
		return 0;
	if (n > SIZE_MAX / 2 / sz)
		return -1;
	q = malloc(2 * n * sz);
	if (!q)
		return -1;
	free(*p);
	*p = q;
	*cap = 2 * n;
	return 0;
}

int ploom_hb_reset(struct ploom_hb *hb, int ntasks, size_t nevents)
{
	size_t i;
	int t;

	hb->ntasks = 0;
	for (i = 0; i < hb->objs_cap; i++)
		hb->objs[i].used = 0;
	hb->objs_used = 0;
	if (ntasks < 0 || (ntasks && nevents > SIZE_MAX / (size_t)ntasks))
		return -1;
	if (ensure((void **)&hb->task, &hb->task_cap, nevents, sizeof(*hb->task)) < 0 ||
	    ensure((void **)&hb->free0, &hb->free0_cap, nevents, sizeof(*hb->free0)) < 0 ||
	    ensure((void **)&hb->vc, &hb->vc_cap, nevents * (size_t)ntasks, sizeof(*hb->vc)) < 0 ||
	    ensure((void **)&hb->last_of, &hb->last_of_cap, (size_t)ntasks,
		   sizeof(*hb->last_of)) < 0 ||
	    ensure((void **)&hb->latest, &hb->latest_cap, (size_t)ntasks,
		   sizeof(*hb->latest)) < 0 ||
	    ensure((void **)&hb->barrier_vc, &hb->barrier_vc_cap, (size_t)ntasks,
		   sizeof(*hb->barrier_vc)) < 0)
		return -1;
	hb->barrier_at = hb->clocked = -1;
	for (t = 0; t < ntasks; t++)
		hb->last_of[t] = -1;
	hb->ntasks = ntasks;
	return 0;
}

int ploom_hb_waits(enum ploom_op op, enum ploom_acquire_mode mode)
{
	return (op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_JOIN) && mode == PLOOM_ACQUIRE_BLOCKING;
}

/* ---- objects ---- */

static size_t obj_hash(struct ploom_obj o)
{
	uint64_t h = ((uint64_t)o.kind << 56) ^ (uint64_t)o.id;

	h *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 20);
}

/* The state of obj, fresh on first use; NULL when out of memory. */
static struct obj_state *obj_get(struct ploom_hb *hb, struct ploom_obj obj)
{
	struct obj_state *o;
	size_t i;

	if (2 * (hb->objs_used + 1) > hb->objs_cap) {
		/* rehash into a table twice as big: the reads lists of the
		 * objects in use move along, those of earlier runs go */
		size_t cap = hb->objs_cap ? 2 * hb->objs_cap : 16, k;
		struct obj_state *t = calloc(cap, sizeof(*t)), *old = hb->objs;

		if (!t)
			return NULL;
		for (k = 0; k < hb->objs_cap; k++) {
			if (!old[k].used) {
				free(old[k].reads);
				free(old[k].adds);
				continue;
			}
			i = obj_hash(old[k].obj) & (cap - 1);
			while (t[i].used)
				i = (i + 1) & (cap - 1);
			t[i] = old[k];
		}
		free(old);
		hb->objs = t;
		hb->objs_cap = cap;
	}
	i = obj_hash(obj) & (hb->objs_cap - 1);
	while (hb->objs[i].used &&
	       (hb->objs[i].obj.kind != obj.kind || hb->objs[i].obj.id != obj.id))
		i = (i + 1) & (hb->objs_cap - 1);
	o = &hb->objs[i];
	if (!o->used) {
		/* a slot of an earlier run keeps its reads' and adds' memory */
		struct read *r = o->reads, *ad = o->adds;
		size_t rc = o->reads_cap, ac = o->adds_cap;

		memset(o, 0, sizeof(*o));
		o->reads = r;
		o->reads_cap = rc;
		o->adds = ad;
		o->adds_cap = ac;
		o->used = 1;
		o->obj = obj;
		o->last_write = o->last_free = o->last_free_write = -1;
		hb->objs_used++;
	}
	return o;
}

/* Whether the object is free before an access of op (exit_access: the
 * end of the thread it names), and its state after. */
static int obj_step(struct obj_state *o, enum ploom_op op, int exit_access)
{
	int free_before = 1;

	if (o->obj.kind == PLOOM_OBJ_LOCK) {
		free_before = !o->held;
		if (op == PLOOM_OP_ACQUIRE)
			o->held = 1; /* held after, whether it was taken now or before */
		else if (op == PLOOM_OP_RELEASE)
			o->held = 0;
	} else if (o->obj.kind == PLOOM_OBJ_THREAD) {
		free_before = !o->started || o->finished;
		if (exit_access)
			o->finished = 1;
		else if (op == PLOOM_OP_START || op == PLOOM_OP_BEGIN)
			o->started = 1;
	}
	return free_before;
}

/* ---- vector clocks ---- */

static int *vc_of(const struct ploom_hb *hb, long j)
{
	return hb->vc + (size_t)j * (size_t)hb->ntasks;
}

const int *ploom_hb_vc(const struct ploom_hb *hb, long j)
{
	return vc_of(hb, j);
}

int ploom_hb_task(const struct ploom_hb *hb, long i)
{
	return hb->task[i];
}

/* the public functions below wrap these, which calls inside this file
 * can inline: lib/ is built -fPIC, where a public function can be
 * interposed and so is not */
static int before(const struct ploom_hb *hb, const int *vc, long i)
{
	return vc[hb->task[i]] >= i + 1;
}

static int ordered(const struct ploom_hb *hb, long i, int q)
{
	return hb->task[i] == q ||
	       (hb->last_of[q] >= 0 && before(hb, vc_of(hb, hb->last_of[q]), i));
}

int ploom_hb_before(const struct ploom_hb *hb, const int *vc, long i)
{
	return before(hb, vc, i);
}

int ploom_hb_ordered(const struct ploom_hb *hb, long i, int q)
{
	return ordered(hb, i, q);
}

long ploom_hb_latest(const struct ploom_hb *hb, int q)
{
	return hb->last_of[q];
}

int ploom_hb_was_free(const struct ploom_hb *hb, long i)
{
	return hb->free0[i];
}

static void vc_join(int *to, const int *from, int n)
{
	int t;

	for (t = 0; t < n; t++)
		if (from[t] > to[t])
			to[t] = from[t];
}

int ploom_hb_clock(struct ploom_hb *hb, long j, int q, const struct ploom_access *a, int na,
		   long after)
{
	int *vc = vc_of(hb, j), k, n = hb->ntasks;
	size_t r;

	hb->task[j] = q;
	hb->clocked = j;
	memset(vc, 0, (size_t)n * sizeof(*vc));
	if (hb->last_of[q] >= 0)
		vc_join(vc, vc_of(hb, hb->last_of[q]), n);
	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(hb, a[k].obj);
		if (!o)
			return -1;
		if (o->last_write >= 0)
			vc_join(vc, vc_of(hb, o->last_write), n);
		if (a[k].how != PLOOM_ACCESS_READ)
			for (r = 0; r < o->nreads; r++)
				vc_join(vc, vc_of(hb, o->reads[r].ev), n);
		if (a[k].how != PLOOM_ACCESS_ADD)
			for (r = 0; r < o->nadds; r++)
				vc_join(vc, vc_of(hb, o->adds[r].ev), n);
	}
	if (after >= 0)
		vc_join(vc, vc_of(hb, after), n);
	if (hb->barrier_at == j)
		vc_join(vc, hb->barrier_vc, n);
	vc[q] = (int)j + 1;
	return 0;
}

void ploom_hb_barrier(struct ploom_hb *hb, long j)
{
	int t;

	for (t = 0; t < hb->ntasks; t++)
		hb->barrier_vc[t] = (int)(hb->last_of[t] + 1);
	hb->barrier_at = j;
}

/* ---- races ---- */

int ploom_hb_candidates(struct ploom_hb *hb, long **out, int q,
			const struct ploom_access *a, int na, int waits)
{
	size_t bound = 1; /* the room for one more that hb.h promises */
	long *c;
	int k, n = 0;

	*out = NULL;
	/* an idle event follows every earlier one */
	if (hb->barrier_at >= 0 && hb->barrier_at == hb->clocked) {
		if (ensure((void **)&hb->cand, &hb->cand_cap, 1, sizeof(*hb->cand)) < 0)
			return -1;
		*out = hb->cand;
		return 0;
	}
	/* every candidate is taken: one dropped for room could be the only
	 * race that leads to a schedule of another class */
	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(hb, a[k].obj);
		if (!o)
			return -1;
		bound += o->nreads + o->nadds + 2;
	}
	if (bound > (size_t)INT_MAX ||
	    ensure((void **)&hb->cand, &hb->cand_cap, bound, sizeof(*hb->cand)) < 0)
		return -1;
	c = hb->cand;
	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(hb, a[k].obj);
		/* only the first access is of the object waited for */
		int w = waits && k == 0, kept = 0;
		size_t r;

		/* the events since the last write that this access conflicts
		 * with: reads and adds for a write, adds for a read, reads for
		 * an add; each follows the last write, which is a candidate
		 * only when there are none */
		int since = 0;

		if (a[k].how != PLOOM_ACCESS_READ) {
			since |= o->nreads > 0;
			for (r = 0; r < o->nreads; r++) {
				if (w && !o->reads[r].free)
					continue;
				kept++;
				c[n++] = o->reads[r].ev;
			}
		}
		if (a[k].how != PLOOM_ACCESS_ADD) {
			since |= o->nadds > 0;
			for (r = 0; r < o->nadds; r++) {
				kept++;
				c[n++] = o->adds[r].ev;
			}
		}
		if (!since && o->last_write >= 0 && !(w && !o->last_write_free)) {
			kept++;
			c[n++] = o->last_write;
		}
		if (w && !kept) {
			/* a read conflicts with writes only */
			long f = a[k].how == PLOOM_ACCESS_WRITE ? o->last_free : o->last_free_write;
			if (f >= 0)
				c[n++] = f;
		}
	}
	for (k = 0; k < n;) {
		if (ordered(hb, c[k], q))
			c[k] = c[--n];
		else
			k++;
	}
	*out = c;
	return n;
}

int ploom_hb_maximal(struct ploom_hb *hb, long *c, int n)
{
	long *latest = hb->latest;
	int i, j, m = 0, k;

	/* An event happens before every later event of its task, so only
	 * each task's latest candidate can be maximal, and one that happens
	 * before any candidate happens before its task's latest: comparing
	 * those alone keeps the same events as comparing every pair, in
	 * time linear in n rather than quadratic (a write after thousands
	 * of reads has each read as a candidate). */
	for (i = 0; i < n; i++)
		latest[hb->task[c[i]]] = -1;
	for (i = 0; i < n; i++)
		if (c[i] > latest[hb->task[c[i]]])
			latest[hb->task[c[i]]] = c[i];
	for (i = 0; i < n; i++)
		if (c[i] == latest[hb->task[c[i]]])
			c[m++] = c[i];
	/* at most one event a task, each perhaps more than once */
	for (i = 0, k = 0; i < m; i++) {
		int dominated = 0;
		for (j = 0; j < m && !dominated; j++)
			if (c[j] != c[i] && before(hb, vc_of(hb, c[j]), c[i]))
				dominated = 1;
		if (!dominated)
			c[k++] = c[i];
	}
	return k;
}

/* Appends r to the list *v of *n (room for *cap); 0, or -1 when out of
 * memory. */
static int push_read(struct read **v, size_t *n, size_t *cap, struct read r)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct read *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = r;
	return 0;
}

int ploom_hb_step(struct ploom_hb *hb, long j, int q, enum ploom_op op,
		  const struct ploom_access *a, int na, int exits)
{
	int k;

	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(hb, a[k].obj);
		int free_before;

		if (!o)
			return -1;
		free_before = obj_step(o, op, exits && k == na - 1);
		if (k == 0)
			hb->free0[j] = (char)free_before;
		if (free_before) {
			o->last_free = j;
			if (a[k].how == PLOOM_ACCESS_WRITE)
				o->last_free_write = j;
		}
		if (a[k].how == PLOOM_ACCESS_WRITE) {
			o->last_write = j;
			o->last_write_free = free_before;
			o->nreads = o->nadds = 0;
			continue;
		}
		if (push_read(a[k].how == PLOOM_ACCESS_ADD ? &o->adds : &o->reads,
			      a[k].how == PLOOM_ACCESS_ADD ? &o->nadds : &o->nreads,
			      a[k].how == PLOOM_ACCESS_ADD ? &o->adds_cap : &o->reads_cap,
			      (struct read){j, free_before}) < 0)
			return -1;
	}
	hb->last_of[q] = j;
	return 0;
}
