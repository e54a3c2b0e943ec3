/* The registry of search kinds; kind.h documents it. */
#include "kind.h"

#include <string.h>

const struct ploom_search_kind ploom_search_kinds[PLOOM_PLAN_NKINDS] = {
	{PLOOM_PLAN_DFS, "dfs", "dfs", "none", "--search=dfs", 0},
	{PLOOM_PLAN_DPOR, "dpor", "dfs", "dpor", "--reduction=dpor", PLOOM_KIND_INSTRUMENTS},
	{PLOOM_PLAN_IPB, "ipb", "ipb", "none", "--search=ipb", PLOOM_KIND_MINIMAL},
	{PLOOM_PLAN_PCT, "pct", "pct", "none", "--search=pct",
	 PLOOM_KIND_SAMPLE | PLOOM_KIND_PCT_DEPTH},
	{PLOOM_PLAN_RANDOM, "random", "random", "none", "--search=random", PLOOM_KIND_SAMPLE},
};

const struct ploom_search_kind *ploom_search_kind_find(const char *search,
						       const char *reduction)
{
	size_t i;

	if (!search)
		search = PLOOM_SEARCH_UNSAID->search;
	if (!reduction)
		reduction = PLOOM_SEARCH_UNSAID->reduction;
	for (i = 0; i < PLOOM_PLAN_NKINDS; i++) {
		const struct ploom_search_kind *k = &ploom_search_kinds[i];
		if (!strcmp(k->search, search) && !strcmp(k->reduction, reduction))
			return k;
	}
	return NULL;
}

unsigned ploom_search_flags(const char *search)
{
	const struct ploom_search_kind *k = ploom_search_kind_find(search, NULL);

	return k ? k->flags : 0;
}
