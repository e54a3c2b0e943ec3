/* config.h - the configuration of a search, which a trace records: its
 * bounds, its search order, the modules the worker patches and
 * instruments and the access sites that are scheduling points; and the
 * one conversion of a schedule timeout.  A trace holds one (trace.h), and
 * json.h reads and writes it.
 *
 * Ownership: the lists of a config (patch, instrument, plain_points) are
 * owned through the functions below, also in a config outside a trace.
 */
#ifndef PLOOM_CONFIG_H
#define PLOOM_CONFIG_H

#include <stddef.h>

#include "err.h"
#include "event.h"
#include "kind.h"

struct ploom_config {
	int max_preemptions;    /* -1: no bound */
	/* the search (kind.h): its --search and --reduction, which traces
	 * and statistics record, and what it is; a row of the registry, never
	 * owned.  NULL reads as PLOOM_SEARCH_UNSAID (ploom_config_kind()),
	 * as a trace that does not say.  A sample's seed and, for pct, its
	 * depth (0 otherwise) follow. */
	const struct ploom_search_kind *kind;
	long max_steps;         /* 0: no bound but PLOOM_MAX_STEPS */
	double schedule_timeout_s; /* 0: none; see ploom_timeout_ms() */
	/* The modules whose threading and queue the worker swaps for ploom's
	 * (--patch), in the order given, each a name ploom_module_problem()
	 * accepts; none when npatch is 0.  Filled through
	 * ploom_config_add_patch(), copied and freed with the other module
	 * list by the ploom_config_*_modules() functions below, which own
	 * the arrays and their strings, also in a config outside a trace. */
	char **patch;
	size_t npatch;
	unsigned long seed;     /* 0 to PLOOM_SAMPLE_MAX_SEED */
	int pct_depth;
	/* The access sites of instrumented code that are scheduling points
	 * (keys MODULE:K, see the outcome refine in event.h): the sites the
	 * search found touching plain state that tasks share.  Every other
	 * site is watched, not a point.  Owned through the
	 * ploom_config_*_plain_points() functions below. */
	char **plain_points;
	size_t nplain_points;
	/* The modules whose plain state (attributes, subscripts, container
	 * methods, globals) the worker rewrites into scheduling points when
	 * they are imported, and submodules of a package among them: what
	 * --instrument named, then what the search instruments by default
	 * (ploom_config_instrument_default()), each once, in that order.
	 * Filled through ploom_config_add_instrument(), owned as patch is;
	 * none when ninstrument is 0. */
	char **instrument;
	size_t ninstrument;
	/* 1: the scenario's own module is instrumented too (the worker's
	 * --instrument-scenario): a file target's is compiled instrumented,
	 * a module target's is instrumented as one of the list; with
	 * patch_project, so is each module of the project */
	int instrument_scenario;
	/* 1: the scenario's own module and every module of the user's project
	 * that it imports (a file under the project's root, outside
	 * site-packages and the standard library) are patched as the patch
	 * list is (the worker's --patch-project); ploom_config_module_defaults() */
	int patch_project;
	/* the time model (event.h): idle unless the search asked for any; a
	 * trace that does not say was recorded under any */
	enum ploom_timeouts timeouts;
};

/* The largest seed of a sample's search (--seed), which a config and the
 * statistics record. */
#define PLOOM_SAMPLE_MAX_SEED 4294967295UL

/* The most modules one list of a config holds (patch, instrument), and
 * the longest name of one in bytes: far more than a scenario needs, and
 * small enough that the worker's command line stays short. */
#define PLOOM_MODULES_MAX 64
#define PLOOM_MODULE_NAME_MAX 200

/* Why module cannot be named to patch or instrument, or NULL when it
 * can: a module name is ASCII Python identifiers ([A-Za-z_][A-Za-z0-9_]*)
 * joined by '.', at most PLOOM_MODULE_NAME_MAX bytes.  The reason is a
 * static string without the name, for the caller to place: "not a module
 * name (...)", "longer than 200 bytes".  The one check of a module name,
 * for the options, the trace reader, the worker's command line and
 * ploom_config_add_patch() and ploom_config_add_instrument(). */
const char *ploom_module_problem(const char *module);

/* Appends a copy of module to config's patch list, or to its instrument
 * list, where a module already listed is not added again.  Returns 0, or
 * -1 with err filled: kind PLOOM_ERR_INPUT, with the reason alone as the
 * message (ploom_module_problem()'s, or "more than 64 modules") for the
 * caller to say which module, or PLOOM_ERR_NOMEM.  The list is unchanged
 * on error. */
int ploom_config_add_patch(struct ploom_config *config, const char *module,
			   struct ploom_err *err);
int ploom_config_add_instrument(struct ploom_config *config, const char *module,
				struct ploom_err *err);

/* What every search patches and instruments unless told otherwise: the
 * code under test.  Unless patch_listed_only (--patch=-), the scenario's
 * own module and the modules of its project (patch_project).  Unless
 * instrument_listed_only (--instrument=-), the scenario's own module
 * (instrument_scenario, and with patch_project the project's modules)
 * and every module of the patch list, added after those already listed.
 * Every search sees that plain state: the reduction makes each access a
 * point, the others watch the accesses and start again with those that
 * tasks share as points (outcome refine, event.h), so that no search
 * passes a race on plain state that it was shown.  The one place these
 * defaults are decided.  Returns 0, or -1 with err filled as
 * ploom_config_add_instrument() (the lists together hold more than 64
 * modules; the instrument list may then hold some of the patch list). */
int ploom_config_module_defaults(struct ploom_config *config, int patch_listed_only,
				 int instrument_listed_only, struct ploom_err *err);

/* Replaces to's module lists (patch, instrument, instrument_scenario and
 * patch_project)
 * with copies of from's; the two must not share their arrays (a config
 * copied with `=` does: empty the copy's lists first).  Returns 0, or -1
 * with err filled (out of memory; to's lists are then unchanged). */
int ploom_config_copy_modules(struct ploom_config *to, const struct ploom_config *from,
			      struct ploom_err *err);

/* Frees config's module lists and empties them (NULL, 0, and
 * instrument_scenario 0); the config itself is the caller's.  Safe on
 * empty lists. */
void ploom_config_release_modules(struct ploom_config *config);

/* The most access sites one config makes points of is
 * PLOOM_PLAIN_POINTS_MAX (event.h): a worker takes them all. */

/* Why key is not a site key (MODULE:K, a module name as
 * ploom_module_problem() takes it and a decimal K), or NULL. */
const char *ploom_plain_point_problem(const char *key);

/* Adds the site keys of keys[0..len), separated by spaces or commas, to
 * config's plain points, each once, in order.  Returns how many were new,
 * or -1 with err filled (PLOOM_ERR_INPUT naming a bad key, when none is
 * added, or more than PLOOM_PLAIN_POINTS_MAX, when the list may hold some;
 * PLOOM_ERR_NOMEM). */
int ploom_config_add_plain_points(struct ploom_config *config, const char *keys, size_t len,
				  struct ploom_err *err);

/* ploom_config_add_plain_points() for the keys of keys[0..n), each a
 * string: the whole list checked first, then added in one pass, so that
 * a list of any length costs time in proportion to it (call it once for
 * a list, not once per key). */
int ploom_config_add_plain_point_list(struct ploom_config *config, const char *const *keys,
				      size_t n, struct ploom_err *err);

/* config's search kind: config->kind, or PLOOM_SEARCH_UNSAID when it
 * says none. */
const struct ploom_search_kind *ploom_config_kind(const struct ploom_config *config);

/* 1 when the access sites of instrumented code are watched, points only
 * once the search finds them touching plain state tasks share (the
 * plain_points); 0 when every site is a point but the quiet reads.
 * Watching is sound for the searches that run every order of the points
 * (depth first, bounded or not, and the samples, which promise no order):
 * an access that a site without a point hides is found in the order where
 * it shows.  A
 * reduction prunes orders by the accesses it sees: under --reduction=dpor
 * every site is a point but the quiet reads, which pyext/sites.c argues
 * it may watch too.  The one rule; the worker learns it as
 * --plain-points=* (or *- with the quiet sites that are points). */
int ploom_config_watches_plain(const struct ploom_config *config);

/* As ploom_config_copy_modules() and ploom_config_release_modules(), for
 * the plain points. */
int ploom_config_copy_plain_points(struct ploom_config *to, const struct ploom_config *from,
				   struct ploom_err *err);
void ploom_config_release_plain_points(struct ploom_config *config);

/* For a config to that a struct assignment made from *from, sharing its
 * lists: gives to copies of its own of the module lists and the plain
 * points.  Returns 0, or -1 with err filled (out of memory); either way
 * to no longer shares from's lists, and ploom_config_release_lists()
 * frees what it holds. */
int ploom_config_own_lists(struct ploom_config *to, const struct ploom_config *from,
			   struct ploom_err *err);

/* ploom_config_release_modules() and ploom_config_release_plain_points(). */
void ploom_config_release_lists(struct ploom_config *config);

/* The longest schedule_timeout_s a trace or an option may give, in
 * seconds (about 31 years): a finite number whose milliseconds a `run`
 * command and a long hold exactly. */
#define PLOOM_MAX_TIMEOUT_S 1e9

/* schedule_timeout_s as whole milliseconds, rounded to the nearest: the one
 * conversion every reader and utility uses.  Returns 0, or -1 when
 * seconds is NaN, infinite, negative or above PLOOM_MAX_TIMEOUT_S (*out
 * untouched). */
int ploom_timeout_ms(long *out, double seconds);

/* The shorter of two schedule timeouts in seconds, 0 being none (longer
 * than any): what a trace's timeout becomes under a limit of the
 * command line's, which may lower it but not raise it. */
double ploom_timeout_min(double a, double b);

#endif
