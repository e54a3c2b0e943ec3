/* The helpers the JSON codec shares; jsonutil.h documents them, json.h
 * the rules the reader holds a document to. */
#include "jsonutil.h"

#include <errno.h>
#include <math.h> /* isfinite, a macro: no libm needed */
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "kind.h"
#include "trace.h"

/* ---- writing ---- */

cJSON *ploom_json_put(struct ploom_json_builder *b, cJSON *obj, const char *name, cJSON *item)
{
	if (!item) {
		b->oom = 1;
		return NULL;
	}
	if (!obj || !cJSON_AddItemToObject(obj, name, item)) {
		cJSON_Delete(item);
		b->oom = 1;
		return NULL;
	}
	return item;
}

cJSON *ploom_json_append(struct ploom_json_builder *b, cJSON *arr, cJSON *item)
{
	if (!item) {
		b->oom = 1;
		return NULL;
	}
	if (!arr || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		b->oom = 1;
		return NULL;
	}
	return item;
}

void ploom_json_put_str(struct ploom_json_builder *b, cJSON *obj, const char *name,
			const char *s)
{
	ploom_json_put(b, obj, name, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

void ploom_json_put_num(struct ploom_json_builder *b, cJSON *obj, const char *name, double v)
{
	ploom_json_put(b, obj, name, cJSON_CreateNumber(v));
}

void ploom_json_put_bool(struct ploom_json_builder *b, cJSON *obj, const char *name, int v)
{
	ploom_json_put(b, obj, name, cJSON_CreateBool(v));
}

cJSON *ploom_json_str_array(const char *const *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		cJSON *x = cJSON_CreateString(v[i]);
		if (!x || !cJSON_AddItemToArray(arr, x)) {
			cJSON_Delete(x);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

cJSON *ploom_json_int_array(const int *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		cJSON *x = cJSON_CreateNumber(v[i]);
		if (!x || !cJSON_AddItemToArray(arr, x)) {
			cJSON_Delete(x);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* The seed of a sample and the depth of pct (plan.h's flags). */
void ploom_json_put_sample(struct ploom_json_builder *b, cJSON *o, const char *search,
			   unsigned long seed, int pct_depth)
{
	if (ploom_search_flags(search) & PLOOM_KIND_SAMPLE)
		ploom_json_put_num(b, o, "seed", (double)seed);
	if (ploom_search_flags(search) & PLOOM_KIND_PCT_DEPTH)
		ploom_json_put_num(b, o, "pct_depth", pct_depth);
}

/* Prints the tree with a final newline; consumes nothing. */
char *ploom_json_print(const cJSON *root, struct ploom_err *err)
{
	char *text = cJSON_Print(root);
	size_t n;
	char *p;

	if (!text) {
		ploom_err_oom(err);
		return NULL;
	}
	n = strlen(text);
	p = realloc(text, n + 2);
	if (!p) {
		free(text);
		ploom_err_oom(err);
		return NULL;
	}
	p[n] = '\n';
	p[n + 1] = '\0';
	return p;
}

int ploom_json_write_text(FILE *out, const char *text, struct ploom_err *err)
{
	size_t n = strlen(text);

	if (fwrite(text, 1, n, out) != n || fflush(out) == EOF)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	return 0;
}

/* ---- reading ---- */

const char *ploom_json_quote(char out[PLOOM_JSON_QUOTE_MAX + 4], const char *s)
{
	size_t i;

	for (i = 0; i < PLOOM_JSON_QUOTE_MAX && s[i]; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i]) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

/* "missing field 'PATH'" when what is NULL, else "field 'PATH' WHAT". */
int ploom_json_fail(struct ploom_json_reader *r, const char *what, const char *prefix,
		    const char *name)
{
	if (r->failed)
		return -1;
	r->failed = 1;
	if (!what)
		return ploom_err_set(r->err, PLOOM_ERR_INPUT, "missing field '%s%s'", prefix, name);
	return ploom_err_set(r->err, PLOOM_ERR_INPUT, "field '%s%s' %s", prefix, name, what);
}

/* The member, or NULL: missing (an error if required) or JSON null. */
const cJSON *ploom_json_get(struct ploom_json_reader *r, const cJSON *obj, const char *prefix,
			    const char *name, int required)
{
	const cJSON *x;

	if (r->failed)
		return NULL;
	x = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!x) {
		if (required)
			ploom_json_fail(r, NULL, prefix, name);
		return NULL;
	}
	if (cJSON_IsNull(x))
		return NULL;
	return x;
}

/* *out = a copy of the string member, NULL if absent/null and allowed. */
void ploom_json_get_str(struct ploom_json_reader *r, char **out, const cJSON *obj,
			const char *prefix, const char *name, int required, int nullable)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, required);

	*out = NULL;
	if (!x) {
		if (required && !nullable && !r->failed)
			ploom_json_fail(r, "is not a string", prefix, name);
		return;
	}
	if (!cJSON_IsString(x) || !x->valuestring) {
		ploom_json_fail(r, "is not a string", prefix, name);
		return;
	}
	*out = strdup(x->valuestring);
	if (!*out && !r->failed) {
		r->failed = 1;
		ploom_err_oom(r->err);
	}
}

int ploom_json_to_long(struct ploom_json_reader *r, long *out, const cJSON *x, long min,
		       long max, const char *prefix, const char *name)
{
	double d;

	if (!cJSON_IsNumber(x))
		return ploom_json_fail(r, "is not an integer", prefix, name);
	d = x->valuedouble;
	if (!isfinite(d) || d < -9e18 || d > 9e18 || d != (double)(long long)d)
		return ploom_json_fail(r, "is not an integer", prefix, name);
	if (d < (double)min || d > (double)max)
		return ploom_json_fail(r, "is out of range", prefix, name);
	*out = (long)d;
	return 0;
}

void ploom_json_get_long(struct ploom_json_reader *r, long *out, const cJSON *obj,
			 const char *prefix, const char *name, long min, long max)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1);

	if (r->failed)
		return;
	if (!x) {
		ploom_json_fail(r, "is not an integer", prefix, name);
		return;
	}
	ploom_json_to_long(r, out, x, min, max, prefix, name);
}

void ploom_json_get_int(struct ploom_json_reader *r, int *out, const cJSON *obj,
			const char *prefix, const char *name, int min, int max)
{
	long v = 0;

	ploom_json_get_long(r, &v, obj, prefix, name, min, max);
	*out = (int)v;
}

/* An array of at most max ints, each from 0 to max_value. */
void ploom_json_get_int_array(struct ploom_json_reader *r, int **out, size_t *out_len,
			      const cJSON *obj, const char *prefix, const char *name, size_t max,
			      long max_value)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1), *e;
	char sub[200];
	size_t n = 0;
	long v = 0; /* set by number_to_long; gcc -O3 cannot see it */

	*out = NULL;
	*out_len = 0;
	if (r->failed)
		return;
	if (!x || !cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", prefix, name);
		return;
	}
	n = (size_t)cJSON_GetArraySize(x);
	if (!n)
		return;
	if (n > max) {
		char why[64];
		snprintf(why, sizeof(why), "has more than %zu entries", max);
		ploom_json_fail(r, why, prefix, name);
		return;
	}
	*out = calloc(n, sizeof(**out));
	if (!*out) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	n = 0;
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", name, n);
		if (ploom_json_to_long(r, &v, e, 0, max_value, prefix, sub) < 0)
			return;
		(*out)[n++] = (int)v;
	}
	*out_len = n;
}

const cJSON *ploom_json_get_object(struct ploom_json_reader *r, const cJSON *obj,
				   const char *prefix, const char *name)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1);

	if (r->failed)
		return NULL;
	if (!x || !cJSON_IsObject(x)) {
		ploom_json_fail(r, "is not an object", prefix, name);
		return NULL;
	}
	return x;
}

const cJSON *ploom_json_get_array(struct ploom_json_reader *r, const cJSON *obj,
				  const char *prefix, const char *name)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1);

	if (r->failed)
		return NULL;
	if (!x || !cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", prefix, name);
		return NULL;
	}
	return x;
}

void ploom_json_get_bool(struct ploom_json_reader *r, int *out, const cJSON *obj,
			 const char *prefix, const char *name)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1);

	if (r->failed)
		return;
	if (!x || !cJSON_IsBool(x)) {
		ploom_json_fail(r, "is not a boolean", prefix, name);
		return;
	}
	*out = cJSON_IsTrue(x) ? 1 : 0;
}

void ploom_json_get_modules(struct ploom_json_reader *r, struct ploom_config *config,
			    const cJSON *obj, const char *prefix, const char *name,
			    int (*add)(struct ploom_config *, const char *, struct ploom_err *))
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 0), *e;
	struct ploom_err why = {0, ""};
	char sub[48], is[96];
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", prefix, name);
		return;
	}
	if (cJSON_GetArraySize(x) > PLOOM_MODULES_MAX) {
		snprintf(is, sizeof(is), "has more than %d entries", PLOOM_MODULES_MAX);
		ploom_json_fail(r, is, prefix, name);
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", name, i++);
		if (!cJSON_IsString(e) || !e->valuestring) {
			ploom_json_fail(r, "is not a string", prefix, sub);
			return;
		}
		if (add(config, e->valuestring, &why) < 0) {
			if (why.kind == PLOOM_ERR_NOMEM) {
				r->failed = 1;
				ploom_err_oom(r->err);
			} else {
				snprintf(is, sizeof(is), "is %s", why.msg);
				ploom_json_fail(r, is, prefix, sub);
			}
			return;
		}
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that two members of obj share, or NULL; *oom set when
 * the sort's array cannot be had.  Small objects are compared pairwise. */
static const char *duplicate_name(const cJSON *obj, int *oom)
{
	const char **names, *dup = NULL;
	const cJSON *c, *d;
	size_t n = 0, i;

	for (c = obj->child; c; c = c->next)
		n++;
	if (n <= 16) {
		for (c = obj->child; c && !dup; c = c->next)
			for (d = c->next; d && !dup; d = d->next)
				if (!strcmp(c->string, d->string))
					dup = c->string;
		return dup;
	}
	names = malloc(n * sizeof(*names));
	if (!names) {
		*oom = 1;
		return NULL;
	}
	for (c = obj->child, i = 0; c; c = c->next)
		names[i++] = c->string;
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 1; i < n && !dup; i++)
		if (!strcmp(names[i - 1], names[i]))
			dup = names[i];
	free(names);
	return dup;
}

/* Checks x and everything in it.  path[0..len) names x ("" for the root,
 * "steps[3]"); deeper names are cut where the buffer ends.  cJSON's
 * nesting limit bounds the recursion. */
static int check_unique_keys(const cJSON *x, char *path, size_t len, size_t cap,
			     struct ploom_err *err)
{
	const cJSON *c;
	const char *dup;
	size_t i = 0;
	int oom = 0, w;

	if (cJSON_IsObject(x) && (dup = duplicate_name(x, &oom)) != NULL) {
		char qdup[PLOOM_JSON_QUOTE_MAX + 4], qpath[PLOOM_JSON_QUOTE_MAX + 4];

		if (len)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "duplicate key '%s' in field '%s'",
					     ploom_json_quote(qdup, dup),
					     ploom_json_quote(qpath, path));
		return ploom_err_set(err, PLOOM_ERR_INPUT, "duplicate key '%s'",
				     ploom_json_quote(qdup, dup));
	}
	if (oom)
		return ploom_err_oom(err);
	for (c = x->child; c; c = c->next, i++) {
		if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
			continue;
		if (cJSON_IsObject(x))
			w = snprintf(path + len, cap - len, "%s%.64s", len ? "." : "", c->string);
		else
			w = snprintf(path + len, cap - len, "[%zu]", i);
		if (w < 0 || (size_t)w >= cap - len)
			w = (int)(cap - 1 - len);
		if (check_unique_keys(c, path, len + (size_t)w, cap, err) < 0)
			return -1;
		path[len] = '\0';
	}
	return 0;
}

static size_t line_of(const char *text, size_t off)
{
	size_t i, line = 1;

	for (i = 0; i < off; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

/* What cJSON lets through and other readers do not: bytes that are not
 * UTF-8 (cJSON copies them into strings as they come), a control
 * character inside a string (JSON forbids them), and a \u0000 escape (a
 * cJSON string ends at its first NUL, so the key or value would be read
 * cut short, where Python's json reads it whole).  Refused before parsing,
 * so that a trace means one thing to every reader.  Returns 0, or -1 with
 * err filled, naming the byte (counted from 1). */
static int check_text(const char *text, size_t len, struct ploom_err *err)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n;
	int in_string = 0;

	while (i < len) {
		if (s[i] >= 0x80) {
			n = ploom_utf8_sequence(s + i, len - i);
			if (!n)
				return ploom_err_set(err, PLOOM_ERR_INPUT, "invalid UTF-8 at byte %zu",
						     i + 1);
			i += n;
			continue;
		}
		if (s[i] == '"') {
			in_string = !in_string;
		} else if (in_string && s[i] < 0x20) {
			return ploom_err_set(err, PLOOM_ERR_INPUT,
					     "a string holds a control character at byte %zu", i + 1);
		} else if (in_string && s[i] == '\\' && i + 1 < len) {
			if (len - i >= 6 && !memcmp(s + i + 1, "u0000", 5))
				return ploom_err_set(err, PLOOM_ERR_INPUT,
						     "a string holds a NUL character (\\u0000) at "
						     "byte %zu", i + 1);
			/* the escaped character cannot end the string */
			i++;
		}
		i++;
	}
	return 0;
}

/* The JSON document that is the len bytes at text, whole, UTF-8 without
 * a NUL character in a string (check_text()), without a key twice in an
 * object; NULL with err filled when it is not one. */
cJSON *ploom_json_parse(const char *text, size_t len, struct ploom_err *err)
{
	const char *end = NULL;
	cJSON *root;
	char path[256];
	size_t off;

	if (check_text(text, len, err) < 0)
		return NULL;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		ploom_err_set(err, PLOOM_ERR_INPUT, "not valid JSON (line %zu)",
			      line_of(text, off));
		return NULL;
	}
	for (off = (size_t)(end - text); off < len; off++) {
		if (!strchr(" \t\r\n", text[off]) || !text[off]) {
			ploom_err_set(err, PLOOM_ERR_INPUT, "unexpected data after the JSON (line %zu)",
				      line_of(text, off));
			cJSON_Delete(root);
			return NULL;
		}
	}
	path[0] = '\0';
	if (check_unique_keys(root, path, 0, sizeof(path), err) < 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
