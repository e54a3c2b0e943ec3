/* ploom-merge - the statistics of a search's shards as one.
 *
 * Reads the statistics that `ploom-explore --shard K/N` printed, one file
 * per shard (lib/stats's reader checks each), checks that they are shards
 * of one search and merges them (lib/merge), prints the merged statistics
 * as ploom-explore would have, and exits as it would have.
 * man/ploom-merge.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "plural.h"
#include "stats.h"
#include "merge.h"
#include "shard.h"

#define PROG "ploom-merge"

const char cli_prog[] = PROG;
const char *const cli_usage =
	"usage: ploom-merge STATS...\n"
	"       ploom-merge -h | --help | -V | --version\n"
	"\n"
	"STATS are the statistics of shards of one search (ploom-explore --shard=K/N\n"
	"prints them), at most one of them - for standard input.\n";

static const struct option options[] = {
	CLI_OPTIONS_END,
};

/* The shards named at most in the message: a merge of the first few of a
 * million would otherwise write megabytes; the statistics list them all. */
#define SHOWN_MISSING 20

/* Says on stderr which shards are missing, so that an exit 3 (or a
 * failure found in part of the search) is never left unexplained. */
static void say_missing(const struct ploom_shard *sh)
{
	int i, shown = sh->nmissing < SHOWN_MISSING ? sh->nmissing : SHOWN_MISSING;

	fprintf(stderr, PROG ": %d of %d shard%s missing:", sh->nmissing, sh->count,
		ploom_s(sh->count));
	for (i = 0; i < shown; i++)
		fprintf(stderr, "%s %d", i ? "," : "", sh->missing[i]);
	if (shown < sh->nmissing)
		fprintf(stderr, " and %d more (the statistics' shard.missing lists them all)",
			sh->nmissing - shown);
	fprintf(stderr, "; run ploom-explore --shard=K/%d for each and merge again\n", sh->count);
}

int main(int argc, char **argv)
{
	struct ploom_merge *merge = NULL;
	struct ploom_stats_in *in = NULL;
	const struct ploom_stats *stats = NULL;
	struct ploom_err err = {0, ""};
	int c, i, stdin_used = 0, ret = PLOOM_EXIT_USAGE;

	while ((c = cli_getopt(argc, argv, ":hV", options)) != -1) {
		if (!cli_common_option(&ret, NULL, c, argv))
			goto done;
	}
	if (optind == argc) {
		ret = cli_usage_error("missing STATS", NULL);
		goto done;
	}
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "-") && stdin_used++) {
			ret = cli_usage_error("standard input given twice", NULL);
			goto done;
		}
	}
	if (ploom_merge_new(&merge, &err) < 0)
		goto fail;
	for (i = optind; i < argc; i++) {
		const char *name = cli_trace_name(argv[i]);

		if (ploom_stats_read_file(&in, argv[i], &err) < 0) {
			fprintf(stderr, PROG ": cannot read statistics '%s': %s\n", name, err.msg);
			ret = cli_exit_code(&err);
			goto done;
		}
		/* the merge takes in, whatever it returns */
		if (ploom_merge_add(merge, in, name, &err) < 0) {
			fprintf(stderr, PROG ": cannot merge '%s': %s\n", name, err.msg);
			ret = cli_exit_code(&err);
			goto done;
		}
	}
	if (ploom_merge_result(&stats, merge, &err) < 0) {
		ret = cli_fail(&err, "cannot merge the statistics: ");
		goto done;
	}
	if (ploom_stats_write(stdout, stats, &err) < 0)
		goto fail;
	if (stats->shard && stats->shard->nmissing > 0)
		say_missing(stats->shard);
	/* as ploom-explore exits for the same statistics */
	ret = stats->failing ? PLOOM_EXIT_FAILURE
			     : stats->complete ? PLOOM_EXIT_OK : PLOOM_EXIT_INCOMPLETE;
	goto done;

fail:
	ret = cli_fail(&err, "");
done:
	ploom_merge_free(merge);
	return cli_exit(ret, "the statistics", CLI_EPIPE_FAILS);
}
