/* dpor-state.h - the state of the DPOR search (dpor.h), shared by the
 * files of the module: dpor.c, the search, and dpor-wakeup.c, its task
 * sets and wakeup trees.  Private to them: scripts/check-includes keeps
 * every other file from including it.  Each function declared here is
 * documented where it is defined. */
#ifndef PLOOM_DPOR_STATE_H
#define PLOOM_DPOR_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "dpor.h"
#include "event.h"
#include "hb.h"
#include "search.h"

struct tset {
	uint64_t *w;
	size_t nw;
};

/* ---- wakeup trees ----
 *
 * A wakeup tree (Abdulla, Aronis, Jonsson, Sagonas, "Source sets",
 * JACM 2017) at a node: the sequences of steps that the search is to run
 * from there, as a tree of steps, each child list in the order the
 * branches are explored.  A step is its task's next step at that point of
 * the branch, with the accesses the run that found it saw it make. */
struct wut {
	struct wut *child;      /* the first step after this one, of each branch */
	struct wut *next;       /* the next branch of the same parent */
	int task;
	int nacc;
	/* 1: the step is known not to end the run (a failure ends every
	 * task at once, which no access says), so it may count as a weak
	 * initial by conflicting with nothing */
	int ends_not;
	struct ploom_access acc[PLOOM_ACCESS_MAX];
	/* the numbers known where the step went into a tree (conflicts_at()) */
	long known[PLOOM_OBJ_CLOCK + 1];
};

/* ---- the search state ---- */

struct node {
	struct node *parent;    /* NULL at the root */
	int via;                /* the task whose step led here from parent */
	long refs;              /* the views holding it, and its live children */
	size_t bp;              /* the branch points above it */
	int *enabled;
	size_t nenabled;
	struct tset sleep;      /* asleep on arrival */
	struct tset backtrack;
	struct tset done;       /* children whose subtree is explored */
	struct tset busy;       /* children whose subtree a view explores now */
	int pre;                /* preemptions of the path before this node */
	/* with wakeup trees: the tree, and what each unfinished task does
	 * next here (the step's task first) */
	struct wut *wut;
	struct ploom_pending *ops;
	size_t nops;
	/* per object kind, the highest number of an object the run knew at
	 * this node (a step or a pending operation up to here named it) */
	long known[PLOOM_OBJ_CLOCK + 1];
};

/* One view of the search (dpor.c's header).  With a shard, the view
 * that walks from unit to unit is the walker; a view split from it works
 * inside one unit it owns. */
struct ploom_dpor {
	struct ploom_strategy base;     /* first: a search is a strategy (search.h) */
	struct node **path;     /* path[0..npath): the nodes of the current path */
	int *chosen;            /* chosen[k]: the task this view runs at path[k] */
	size_t npath, path_cap, chosen_cap;
	size_t depth;           /* the node whose choice the next run changes */
	int first;              /* no run yet */
	struct tset sent;       /* the tasks asleep, as sent, where the prefix ends */
	int bound;              /* most preemptions a schedule makes; -1: no bound */
	int *prefix;
	size_t nprefix, prefix_cap;
	int *sleep;
	size_t nsleep, sleep_cap;
	size_t sleep_at;        /* the node of the path where sleep[] holds */
	/* scratch for one run: its events are its steps, then (as event n)
	 * each operation that did not run */
	struct ploom_hb *hb;
	int ntasks;
	int *first_in_v;        /* scratch of reverse_race(), per task */
	int *rvc;               /* the clock of v's last event within v */
	size_t rvc_cap;
	size_t first_in_v_cap;
	struct ploom_dpor_stats stats;
	struct ploom_shard *shard;      /* NULL: the whole search */
	int walker;
	long unit;              /* a shard's: the next schedule's unit */
	int owned;              /* 1: the shard owns it, else the next schedule is a probe */
	int wakeup;             /* optimal DPOR: wakeup trees (dpor.h) */
	int cut_fail;           /* the run ended in a failing step, its last */
	/* scratch of one run: the accesses of each event (as event n, the
	 * operation that did not run), and a sequence v of events with the
	 * ones taken off it as an insertion walks a wakeup tree */
	struct evacc {
		int n;
		struct ploom_access a[PLOOM_ACCESS_MAX];
	} *acc;
	size_t acc_cap;
	long *vev;
	char *vgone;
	size_t vev_cap, vgone_cap, nv, vleft;
	size_t nsteps;          /* of the run taken */
	const struct ploom_run *run; /* the run taken, during ploom_dpor_next() */
	struct tset chain_sleep; /* set_prefix()'s scratch */
};

/* dpor-wakeup.c */
int tset_has(const struct tset *s, int t);
int tset_add(struct tset *s, int t);
void tset_del(struct tset *s, int t);
void tset_clear(struct tset *s);
void tset_free(struct tset *s);
void wut_free(struct wut *w);
struct wut *wut_branch(struct wut *w, int t);
int conflicts_at(const long *known, const struct ploom_access *a, int na,
		 const struct ploom_access *b, int nb);
int add_leaf(const struct ploom_dpor *d, struct node *nd, int t,
	     const struct ploom_access *a, int na);
int next_accesses(const struct node *nd, int t, struct ploom_access *a);
int insert(struct ploom_dpor *d, struct node *nd);

#endif
