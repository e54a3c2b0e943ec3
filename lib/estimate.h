/* estimate.h - how far a search is: the share of its tree of schedules
 * done, how many schedules the whole tree holds, and when it will end.
 *
 * Overview
 * --------
 * A search's schedules are the leaves of a tree whose inner nodes are
 * the branch points, each with as many children as the strategy will try
 * there (with a preemption bound, only those within it).  Give every node
 * a weight: 1 for the root, and to each child of a node with b children
 * 1/b of that node's.  A leaf's weight is then the chance that a walk
 * from the root, picking a child uniformly at random at every branch
 * point, ends there (Knuth, "Estimating the efficiency of backtrack
 * programs", 1975), and the weights of all leaves add up to 1.
 *
 * The fraction done is the weight of the schedules complete.  The
 * schedules done divided by it estimate the number of schedules in the
 * tree: that is the weighted backtrack estimator of Kilby, Slaney,
 * Thiebaux and Walsh ("Estimating search tree size", AAAI 2006), Knuth's
 * estimate of each leaf (the product of the branching factors on its
 * path, 1 / its weight) averaged over the leaves done, each weighted by
 * its chance of being reached, which corrects the bias of a depth-first
 * order towards the first subtrees.  Where every leaf has the same weight
 * (a uniform tree) the estimate is exact from the first schedule on; on
 * any tree it is exact once the search is complete.
 *
 * A strategy does not add up the weights of the leaves it completed,
 * which in floating point would not come to 1 exactly: it tells the
 * weight it has left (struct ploom_strategy_ops' left(), search.h), from
 * the branch points on its current path (struct ploom_weight_walk).  The
 * fraction done is 1 minus what every part of the search has left, so it
 * is 1 exactly when nothing is left and never above 1.  A strategy that
 * cannot tell (the tree of a partial-order reduction grows as races are
 * found) gives a rate and no fraction.
 */
#ifndef PLOOM_ESTIMATE_H
#define PLOOM_ESTIMATE_H

#include <stddef.h>

/* ---- the weight a depth-first strategy has left ----
 *
 * Start at the weight of the part's root (1 for a whole search), then
 * step through the branch points of the current path from that root
 * down, each with its number of children and how many of them are
 * untried (neither complete nor under way); the subtree below the last
 * one, that of the schedule under way or next, is left whole:
 *
 *     ploom_weight_walk_init(&walk, root_weight);
 *     for (each branch point of the path)
 *         ploom_weight_walk_step(&walk, children, untried);
 *     left = ploom_weight_walk_left(&walk);
 */
struct ploom_weight_walk {
	double weight;          /* of the node the walk has reached */
	double left;            /* of the untried children passed */
};

void ploom_weight_walk_init(struct ploom_weight_walk *walk, double root_weight);

/* Goes down to the child under way of a branch point with `children`
 * children (1 or more; 0 counts as 1), `untried` of them untried. */
void ploom_weight_walk_step(struct ploom_weight_walk *walk, size_t children, size_t untried);

/* The weight of the untried children passed plus the node reached. */
double ploom_weight_walk_left(const struct ploom_weight_walk *walk);

/* ---- the estimate ---- */

/* A total and an ETA are told only from this many schedules on: the
 * first schedules of a depth-first search share most of their path, and
 * a size estimated from them says little. */
#define PLOOM_ESTIMATE_MIN_SCHEDULES 10

struct ploom_estimate {
	long schedules;         /* complete so far */
	long failing;
	double elapsed_s;
	double rate;            /* schedules per second since the start (0 at first) */
	/* the weight of the schedules complete, from 0 to 1, and 1 only when
	 * nothing is left; -1: unknown */
	double fraction;
	/* the estimated schedules of the whole search, at least schedules,
	 * and exactly schedules when nothing is left; -1: unknown (the
	 * fraction is, or too few schedules are done) */
	double total;
	/* the seconds the rest takes at the rate so far (0 when nothing is
	 * left); -1: unknown (the total is, or no time has passed) */
	double eta_s;
	int done;               /* 1: the search has ended (complete or not) */
};

/* Fills *out from the counts so far and the weight left, the sum of what
 * the parts of the search have left (0 when none is), or a negative
 * value when it is unknown. */
void ploom_estimate_make(struct ploom_estimate *out, long schedules, long failing,
			 double elapsed_s, double left, int done);

/* Writes the estimate for a person into buf (NUL-terminated, cut to
 * size): "12,345 schedules (2,310/s), 2 failing, ~41% of ~30,100, ETA 8 s",
 * with "N failing" only when some are and the fraction, total and ETA
 * only when they are known; a tilde marks what is estimated.  Returns
 * the length the text has uncut, as snprintf() does. */
int ploom_estimate_format(char *buf, size_t size, const struct ploom_estimate *e);

/* Writes the estimate as one JSON object without a newline into buf, as
 * ploom_estimate_format() does: its members are schedules, failing,
 * elapsed_s, rate, estimate_total, fraction, eta_s (null when unknown),
 * summary (ploom_estimate_format()'s text) and done. */
int ploom_estimate_format_json(char *buf, size_t size, const struct ploom_estimate *e);

#endif
