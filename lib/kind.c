/* The registry of search kinds; kind.h documents it. */
#include "kind.h"

#include <string.h>

#define ROW(KIND, name, search, reduction, spelling, flags, help) \
	{PLOOM_PLAN_##KIND, #name, search, reduction, spelling, flags, help},
const struct ploom_search_kind ploom_search_kinds[PLOOM_PLAN_NKINDS] = {
	PLOOM_SEARCH_KINDS(ROW)
};
#undef ROW

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
