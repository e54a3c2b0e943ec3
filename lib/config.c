/* The configuration of a search and of a trace; config.h documents the API. */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

/* the bound's milliseconds fit a `run` command's TIMEOUT_MS */
_Static_assert(LONG_MAX / 2 / 1000 >= (long)PLOOM_MAX_TIMEOUT_S, "long too small");

int ploom_timeout_ms(long *out, double seconds)
{
	/* written so that NaN fails too: every comparison with it is false */
	if (!(seconds >= 0 && seconds <= PLOOM_MAX_TIMEOUT_S))
		return -1;
	*out = (long)(seconds * 1000.0 + 0.5);
	return 0;
}

double ploom_timeout_min(double a, double b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return a < b ? a : b;
}

static int is_ident_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* the reason below spells the bound out */
_Static_assert(PLOOM_MODULE_NAME_MAX == 200, "update ploom_module_problem()'s message");

const char *ploom_module_problem(const char *module)
{
	static const char not_name[] = "not a module name (Python identifiers joined by '.')";
	size_t i, len = strlen(module);

	/* ASCII identifiers only: enough for the modules one names, and
	 * the names then travel safely on the worker's command line */
	for (i = 0; i < len; i++) {
		int starts_part = i == 0 || module[i - 1] == '.';
		if (starts_part ? !is_ident_start(module[i])
				: !is_ident_char(module[i]) && module[i] != '.')
			return not_name;
	}
	if (!len || module[len - 1] == '.')
		return not_name;
	if (len > PLOOM_MODULE_NAME_MAX)
		return "longer than 200 bytes";
	return NULL;
}

/* Appends a copy of module to the list *names of *n, as
 * ploom_config_add_patch() documents. */
static int add_module(char ***names, size_t *n, const char *module, struct ploom_err *err)
{
	const char *problem = ploom_module_problem(module);
	char **list, *copy;

	if (problem)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "%s", problem);
	if (*n >= PLOOM_MODULES_MAX)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d modules",
				     PLOOM_MODULES_MAX);
	copy = strdup(module);
	list = copy ? realloc(*names, (*n + 1) * sizeof(*list)) : NULL;
	if (!list) {
		free(copy);
		return ploom_err_oom(err);
	}
	list[(*n)++] = copy;
	*names = list;
	return 0;
}

static void release_list(char ***names, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		free((*names)[i]);
	free(*names);
	*names = NULL;
	*n = 0;
}

static int listed(char *const *names, size_t n, const char *module)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], module))
			return 1;
	return 0;
}

int ploom_config_add_patch(struct ploom_config *config, const char *module,
			   struct ploom_err *err)
{
	return add_module(&config->patch, &config->npatch, module, err);
}

int ploom_config_add_instrument(struct ploom_config *config, const char *module,
				struct ploom_err *err)
{
	/* a module is rewritten once however often it is named: the
	 * default may name one the options named already */
	if (listed(config->instrument, config->ninstrument, module))
		return 0;
	return add_module(&config->instrument, &config->ninstrument, module, err);
}

int ploom_config_module_defaults(struct ploom_config *config, int patch_listed_only,
				 int instrument_listed_only, struct ploom_err *err)
{
	size_t i;

	/* a scenario file that calls threading.Thread means a ploom task, and
	 * the project's own code beside it is under test as much as it is */
	if (!patch_listed_only)
		config->patch_project = 1;
	if (instrument_listed_only)
		return 0;
	/* the modules patched are library code the scenario drives: under
	 * test as much as the scenario itself */
	for (i = 0; i < config->npatch; i++)
		if (ploom_config_add_instrument(config, config->patch[i], err) < 0)
			return -1;
	config->instrument_scenario = 1;
	return 0;
}

int ploom_config_copy_modules(struct ploom_config *to, const struct ploom_config *from,
			      struct ploom_err *err)
{
	struct ploom_config copy = {0};
	size_t i;

	for (i = 0; i < from->npatch; i++)
		if (add_module(&copy.patch, &copy.npatch, from->patch[i], err) < 0)
			goto fail;
	for (i = 0; i < from->ninstrument; i++)
		if (add_module(&copy.instrument, &copy.ninstrument, from->instrument[i], err) < 0)
			goto fail;
	ploom_config_release_modules(to);
	to->patch = copy.patch;
	to->npatch = copy.npatch;
	to->instrument = copy.instrument;
	to->ninstrument = copy.ninstrument;
	to->instrument_scenario = from->instrument_scenario;
	to->patch_project = from->patch_project;
	return 0;
fail:
	ploom_config_release_modules(&copy);
	return -1;
}

void ploom_config_release_modules(struct ploom_config *config)
{
	release_list(&config->patch, &config->npatch);
	release_list(&config->instrument, &config->ninstrument);
	config->instrument_scenario = 0;
	config->patch_project = 0;
}

const char *ploom_plain_point_problem(const char *key)
{
	const char *colon = strrchr(key, ':');
	char module[PLOOM_MODULE_NAME_MAX + 1];
	size_t n, i;

	if (!colon || !colon[1])
		return "not a site key (MODULE:K)";
	n = (size_t)(colon - key);
	if (n > PLOOM_MODULE_NAME_MAX)
		return "a module name longer than 200 bytes";
	memcpy(module, key, n);
	module[n] = 0;
	if (ploom_module_problem(module))
		return "not a site key (MODULE:K)";
	for (i = 1; colon[i]; i++)
		if (colon[i] < '0' || colon[i] > '9' || i > 9)
			return "not a site key (MODULE:K)";
	if (colon[1] == '0' && colon[2])
		return "not a site key (MODULE:K)";
	return NULL;
}

const struct ploom_search_kind *ploom_config_kind(const struct ploom_config *config)
{
	return config->kind ? config->kind : PLOOM_SEARCH_UNSAID;
}

int ploom_config_watches_plain(const struct ploom_config *config)
{
	return !strcmp(ploom_config_kind(config)->reduction, PLOOM_SEARCH_UNSAID->reduction);
}

/* A site key as a slice of the caller's text. */
struct key_span {
	const char *p;
	size_t len;
};

static uint64_t key_hash(const char *p, size_t len)
{
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

/* The slot of keys[] in table (mask + 1 slots of 1 + index, 0 empty)
 * that holds key, or the empty slot where it would go. */
static size_t key_slot(const size_t *table, size_t mask, char *const *keys, const char *key,
		       size_t len)
{
	size_t at = (size_t)key_hash(key, len) & mask;

	while (table[at] && !(strlen(keys[table[at] - 1]) == len &&
			      !memcmp(keys[table[at] - 1], key, len)))
		at = (at + 1) & mask;
	return at;
}

/* Adds keys[0..n) to config's plain points, each once, after checking
 * them all: one hash set of the list and the new keys, so that reading a
 * trace's points (up to PLOOM_PLAIN_POINTS_MAX) costs time in proportion
 * to their number.  Returns as ploom_config_add_plain_points(). */
static int add_plain_keys(struct ploom_config *config, const struct key_span *keys, size_t n,
			  struct ploom_err *err)
{
	size_t have = config->nplain_points, i, mask = 15, at;
	size_t *table = NULL;
	char **list;
	int added = 0;

	for (i = 0; i < n; i++) {
		char key[PLOOM_MODULE_NAME_MAX + 16];
		const char *problem = "not a site key (MODULE:K)";

		if (keys[i].len < sizeof(key) && !memchr(keys[i].p, 0, keys[i].len)) {
			memcpy(key, keys[i].p, keys[i].len);
			key[keys[i].len] = 0;
			problem = ploom_plain_point_problem(key);
		}
		if (problem)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "bad site key '%.*s': %s",
					     (int)(keys[i].len < 220 ? keys[i].len : 220), keys[i].p,
					     problem);
	}
	if (!n)
		return 0;
	while (mask / 2 < have + n)
		mask = mask * 2 + 1;
	table = calloc(mask + 1, sizeof(*table));
	if (!table)
		return ploom_err_oom(err);
	for (i = 0; i < have; i++) {
		const char *k = config->plain_points[i];
		table[key_slot(table, mask, config->plain_points, k, strlen(k))] = i + 1;
	}
	/* room for every key at once: the list is never grown one by one */
	list = realloc(config->plain_points, (have + n) * sizeof(*list));
	if (!list) {
		free(table);
		return ploom_err_oom(err);
	}
	config->plain_points = list;
	for (i = 0; i < n; i++) {
		at = key_slot(table, mask, config->plain_points, keys[i].p, keys[i].len);
		if (table[at])
			continue;
		if (config->nplain_points >= PLOOM_PLAIN_POINTS_MAX) {
			free(table);
			return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d plain points",
					     PLOOM_PLAIN_POINTS_MAX);
		}
		list[config->nplain_points] = strndup(keys[i].p, keys[i].len);
		if (!list[config->nplain_points]) {
			free(table);
			return ploom_err_oom(err);
		}
		table[at] = ++config->nplain_points;
		added++;
	}
	free(table);
	return added;
}

int ploom_config_add_plain_points(struct ploom_config *config, const char *keys, size_t len,
				  struct ploom_err *err)
{
	struct key_span *spans;
	size_t i = 0, j, n = 0;
	int r;

	/* at most one key per two bytes (a key and a separator) */
	spans = malloc((len / 2 + 1) * sizeof(*spans));
	if (!spans)
		return ploom_err_oom(err);
	while (i < len) {
		while (i < len && (keys[i] == ' ' || keys[i] == ','))
			i++;
		for (j = i; j < len && keys[j] != ' ' && keys[j] != ','; j++)
			;
		if (j == i)
			break;
		spans[n++] = (struct key_span){keys + i, j - i};
		i = j;
	}
	r = add_plain_keys(config, spans, n, err);
	free(spans);
	return r;
}

int ploom_config_add_plain_point_list(struct ploom_config *config, const char *const *keys,
				      size_t n, struct ploom_err *err)
{
	struct key_span *spans = malloc((n ? n : 1) * sizeof(*spans));
	size_t i;
	int r;

	if (!spans)
		return ploom_err_oom(err);
	for (i = 0; i < n; i++)
		spans[i] = (struct key_span){keys[i], strlen(keys[i])};
	r = add_plain_keys(config, spans, n, err);
	free(spans);
	return r;
}

int ploom_config_copy_plain_points(struct ploom_config *to, const struct ploom_config *from,
				   struct ploom_err *err)
{
	struct ploom_config copy = {0};

	if (ploom_config_add_plain_point_list(&copy, (const char *const *)from->plain_points,
					      from->nplain_points, err) < 0) {
		ploom_config_release_plain_points(&copy);
		return -1;
	}
	ploom_config_release_plain_points(to);
	to->plain_points = copy.plain_points;
	to->nplain_points = copy.nplain_points;
	return 0;
}

void ploom_config_release_plain_points(struct ploom_config *config)
{
	size_t i;

	for (i = 0; i < config->nplain_points; i++)
		free(config->plain_points[i]);
	free(config->plain_points);
	config->plain_points = NULL;
	config->nplain_points = 0;
}

int ploom_config_own_lists(struct ploom_config *to, const struct ploom_config *from,
			   struct ploom_err *err)
{
	to->patch = NULL;
	to->npatch = 0;
	to->instrument = NULL;
	to->ninstrument = 0;
	to->plain_points = NULL;
	to->nplain_points = 0;
	if (ploom_config_copy_modules(to, from, err) < 0 ||
	    ploom_config_copy_plain_points(to, from, err) < 0)
		return -1;
	return 0;
}

void ploom_config_release_lists(struct ploom_config *config)
{
	ploom_config_release_modules(config);
	ploom_config_release_plain_points(config);
}
