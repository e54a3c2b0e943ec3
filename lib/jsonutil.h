/* jsonutil.h - the helpers the JSON codec shares: building a cJSON tree
 * and printing it, and reading one field by field with every problem
 * reported as "field 'PATH' WHAT".
 *
 * Internal to the JSON codec: json.c and json-write.c (traces), stats.c
 * (statistics), decode.c (the DETAIL of the worker's `error` record,
 * event.h) and jsonutil.c are the only files that include this header,
 * and with it cJSON.h.  Everything else reaches JSON through json.h,
 * stats.h and decode.h.
 */
#ifndef PLOOM_JSONUTIL_H
#define PLOOM_JSONUTIL_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "err.h"

struct ploom_config;     /* config.h */

/* The "format" of a trace file (json.h), which the writer writes and the
 * reader requires. */
#define PLOOM_TRACE_FORMAT "ploom-trace"

/* ---- writing ----
 * Builders record out-of-memory in a flag instead of failing at each
 * call, so the tree is built in straight lines and checked once.  An item
 * that could not be added is still ours to delete: these functions delete
 * it. */

struct ploom_json_builder {
	int oom;
};

/* Adds item to obj as name / to the array arr, and returns it; NULL
 * (the builder's oom set, item deleted) when item is NULL, obj or arr is
 * NULL, or cJSON cannot add it.  The item then belongs to the tree. */
cJSON *ploom_json_put(struct ploom_json_builder *b, cJSON *obj, const char *name, cJSON *item);
cJSON *ploom_json_append(struct ploom_json_builder *b, cJSON *arr, cJSON *item);

/* A string (NULL: null), a number, a boolean as member name of obj. */
void ploom_json_put_str(struct ploom_json_builder *b, cJSON *obj, const char *name,
			const char *s);
void ploom_json_put_num(struct ploom_json_builder *b, cJSON *obj, const char *name, double v);
void ploom_json_put_bool(struct ploom_json_builder *b, cJSON *obj, const char *name, int v);

/* A new array of the n strings / ints at v, or NULL when out of memory;
 * the caller owns it (ploom_json_put() takes it). */
cJSON *ploom_json_str_array(const char *const *v, size_t n);
cJSON *ploom_json_int_array(const int *v, size_t n);

/* "seed" when search samples, and "pct_depth" when it takes a depth (the
 * flags of plan.h): a trace's config and the statistics say them alike. */
void ploom_json_put_sample(struct ploom_json_builder *b, cJSON *o, const char *search,
			   unsigned long seed, int pct_depth);

/* The tree as indented JSON with a final newline, malloc'd (the caller
 * frees it); the tree is left as it is.  NULL with err filled when out of
 * memory. */
char *ploom_json_print(const cJSON *root, struct ploom_err *err);

/* Writes text to out and flushes it.  Returns 0, or -1 with err filled
 * (the stream is not closed). */
int ploom_json_write_text(FILE *out, const char *text, struct ploom_err *err);

/* ---- reading ----
 * Every field is checked; the first problem found is reported with the
 * field's path ("steps[3].enabled[1]"): PATH is prefix then name.  Once
 * the reader has failed, every further call does nothing, so a document
 * is read in straight lines and checked once. */

struct ploom_json_reader {
	struct ploom_err *err;
	int failed;
	long version;           /* the trace's format version, once read */
};

/* A string of the document as an error message quotes it, in out:
 * control characters become '?', as ploom-show shows a trace's strings (a
 * newline would break the one-line message, an escape could drive the
 * terminal), and more than PLOOM_JSON_QUOTE_MAX bytes are cut to that
 * many and "...".  Returns out. */
#define PLOOM_JSON_QUOTE_MAX 60
const char *ploom_json_quote(char out[PLOOM_JSON_QUOTE_MAX + 4], const char *s);

/* Fails the reader: "missing field 'PATH'" when what is NULL, else
 * "field 'PATH' WHAT" (kind PLOOM_ERR_INPUT).  Returns -1; only the first
 * failure is reported. */
int ploom_json_fail(struct ploom_json_reader *r, const char *what, const char *prefix,
		    const char *name);

/* The member, or NULL: missing (a failure if required) or JSON null. */
const cJSON *ploom_json_get(struct ploom_json_reader *r, const cJSON *obj, const char *prefix,
			    const char *name, int required);

/* *out = a malloc'd copy of the string member, NULL if absent or null and
 * allowed; the caller frees it (after a failure too). */
void ploom_json_get_str(struct ploom_json_reader *r, char **out, const cJSON *obj,
			const char *prefix, const char *name, int required, int nullable);

/* The number x as an integer from min to max into *out.  Returns 0, or
 * -1 after failing the reader ("is not an integer", "is out of range"). */
int ploom_json_to_long(struct ploom_json_reader *r, long *out, const cJSON *x, long min,
		       long max, const char *prefix, const char *name);

/* A required integer member from min to max. */
void ploom_json_get_long(struct ploom_json_reader *r, long *out, const cJSON *obj,
			 const char *prefix, const char *name, long min, long max);
void ploom_json_get_int(struct ploom_json_reader *r, int *out, const cJSON *obj,
			const char *prefix, const char *name, int min, int max);

/* A required array of at most max ints, each from 0 to max_value, into
 * *out (malloc'd, NULL when empty; the caller frees it, after a failure
 * too) and *out_len. */
void ploom_json_get_int_array(struct ploom_json_reader *r, int **out, size_t *out_len,
			      const cJSON *obj, const char *prefix, const char *name, size_t max,
			      long max_value);

/* A required object / array member, or NULL after failing the reader. */
const cJSON *ploom_json_get_object(struct ploom_json_reader *r, const cJSON *obj,
				   const char *prefix, const char *name);
const cJSON *ploom_json_get_array(struct ploom_json_reader *r, const cJSON *obj,
				  const char *prefix, const char *name);

/* A required boolean member, into *out as 1 or 0. */
void ploom_json_get_bool(struct ploom_json_reader *r, int *out, const cJSON *obj,
			 const char *prefix, const char *name);

/* An optional array member of module names, each added to config by add
 * (ploom_config_add_patch() or ploom_config_add_instrument(), config.h),
 * which holds the names to its rules: a name it refuses fails the reader
 * with its reason ("field 'config.patch[1]' is not a module name ..."),
 * as does an array of more than PLOOM_MODULES_MAX. */
void ploom_json_get_modules(struct ploom_json_reader *r, struct ploom_config *config,
			    const cJSON *obj, const char *prefix, const char *name,
			    int (*add)(struct ploom_config *, const char *, struct ploom_err *));

/* The JSON document that is the len bytes at text, whole: UTF-8, without
 * a control character or an escaped NUL in a string, without a key twice
 * in an object, nothing but white space after it (json.h says why and
 * how the errors read).  On success the caller owns the tree
 * (cJSON_Delete()); NULL with err filled (PLOOM_ERR_INPUT, or
 * PLOOM_ERR_NOMEM) when it is not one. */
cJSON *ploom_json_parse(const char *text, size_t len, struct ploom_err *err);

#endif
