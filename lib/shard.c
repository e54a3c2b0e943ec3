/* Shards of a search; shard.h documents them.  The walk itself is a
 * filter inside each search (search/explore.c, search/dpor.c), which knows its
 * branch points. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "trace.h"

void ploom_shard_init(struct ploom_shard *shard, int index, int count)
{
	memset(shard, 0, sizeof(*shard));
	shard->index = index;
	shard->count = count;
	shard->depth = ploom_shard_default_depth(count);
	shard->last_unit = -1;
	shard->failure_unit = -1;
}

int ploom_shard_default_depth(int count)
{
	long units = 8L * (count > 0 ? count : 1);
	int d = 0;

	while ((1L << d) < units)
		d++;
	return d;
}

int ploom_shard_parse(int *out_index, int *out_count, const char *spec)
{
	const char *slash = strchr(spec, '/');
	char k[16];
	long index, count;

	if (!slash || (size_t)(slash - spec) >= sizeof(k))
		return -1;
	memcpy(k, spec, (size_t)(slash - spec));
	k[slash - spec] = '\0';
	if (ploom_args_long(&index, k, 0, PLOOM_SHARD_MAX - 1) < 0 ||
	    ploom_args_long(&count, slash + 1, 1, PLOOM_SHARD_MAX) < 0 || index >= count)
		return -1;
	*out_index = (int)index;
	*out_count = (int)count;
	return 0;
}

int ploom_shard_owns(const struct ploom_shard *shard, long unit)
{
	return !shard || unit % shard->count == shard->index;
}

void ploom_shard_annotate(void *ctx, struct ploom_trace *trace)
{
	const struct ploom_shard *shard = ctx;

	trace->shard.index = shard->index;
	trace->shard.count = shard->count;
	trace->shard.depth = shard->depth;
	trace->shard.unit = shard->last_unit;
}
