/* The worker protocol; event.h documents the records and the API. */
#include "event.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define MAX_FIELDS 12

struct field {
	const char *s;
	size_t n;
};

/* ---- operations and objects ---- */

static const char *const op_names[PLOOM_NOPS] = {
	[PLOOM_OP_BEGIN] = "begin",
	[PLOOM_OP_START] = "start",
	[PLOOM_OP_JOIN] = "join",
	[PLOOM_OP_IS_ALIVE] = "is_alive",
	[PLOOM_OP_ACQUIRE] = "acquire",
	[PLOOM_OP_RELEASE] = "release",
	[PLOOM_OP_LOCKED] = "locked",
	[PLOOM_OP_READ] = "read",
	[PLOOM_OP_WRITE] = "write",
	[PLOOM_OP_YIELD_NOW] = "yield_now",
};

const char *ploom_op_name(enum ploom_op op)
{
	if ((unsigned)op >= PLOOM_NOPS)
		return "?";
	return op_names[op];
}

int ploom_op_parse(const char *s, size_t len)
{
	int i;

	for (i = 0; i < PLOOM_NOPS; i++)
		if (strlen(op_names[i]) == len && !memcmp(op_names[i], s, len))
			return i;
	return -1;
}

static const char *const obj_kinds[] = {
	[PLOOM_OBJ_NONE] = "-",
	[PLOOM_OBJ_CELL] = "cell",
	[PLOOM_OBJ_LOCK] = "lock",
	[PLOOM_OBJ_THREAD] = "thread",
};

size_t ploom_obj_format(char *out, size_t cap, struct ploom_obj obj)
{
	int n;

	if (obj.kind == PLOOM_OBJ_NONE || (unsigned)obj.kind > PLOOM_OBJ_THREAD)
		n = snprintf(out, cap, "-");
	else
		n = snprintf(out, cap, "%s#%ld", obj_kinds[obj.kind], obj.id);
	if (n < 0)
		n = 0;
	return (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

int ploom_obj_parse(struct ploom_obj *out, const char *s, size_t len)
{
	int k;

	out->kind = PLOOM_OBJ_NONE;
	out->id = 0;
	if (len == 1 && s[0] == '-')
		return 0;
	for (k = PLOOM_OBJ_CELL; k <= PLOOM_OBJ_THREAD; k++) {
		size_t kl = strlen(obj_kinds[k]), i;
		long id = 0;

		if (len <= kl + 1 || memcmp(s, obj_kinds[k], kl) || s[kl] != '#')
			continue;
		/* at most 18 digits: no overflow, and no leading zeros, so that
		 * one object has one name */
		if (len - kl - 1 > 18 || (s[kl + 1] == '0' && len - kl - 1 > 1))
			return -1;
		for (i = kl + 1; i < len; i++) {
			if (s[i] < '0' || s[i] > '9')
				return -1;
			id = id * 10 + (s[i] - '0');
		}
		out->kind = (enum ploom_obj_kind)k;
		out->id = id;
		return 0;
	}
	return -1;
}

/* ---- which operations conflict ---- */

int ploom_op_accesses(struct ploom_access out[2], int task, enum ploom_op op,
		      struct ploom_obj obj, int exits)
{
	struct ploom_obj self = {PLOOM_OBJ_THREAD, task};
	int n = 0;

	switch (op) {
	case PLOOM_OP_BEGIN:
		out[n++] = (struct ploom_access){self, 0};
		break;
	case PLOOM_OP_READ:
	case PLOOM_OP_LOCKED:
	case PLOOM_OP_JOIN:
	case PLOOM_OP_IS_ALIVE:
		out[n++] = (struct ploom_access){obj, 0};
		break;
	case PLOOM_OP_WRITE:
	case PLOOM_OP_ACQUIRE:
	case PLOOM_OP_RELEASE:
	case PLOOM_OP_START:
		out[n++] = (struct ploom_access){obj, 1};
		break;
	default:
		break;
	}
	if (exits) {
		/* begin then exit: one write of the thread covers both */
		if (n && out[0].obj.kind == PLOOM_OBJ_THREAD && out[0].obj.id == task)
			out[0].write = 1;
		else
			out[n++] = (struct ploom_access){self, 1};
	}
	return n;
}

int ploom_mode_allowed(enum ploom_op op, enum ploom_acquire_mode mode)
{
	switch (mode) {
	case PLOOM_ACQUIRE_BLOCKING:
		return 1;
	case PLOOM_ACQUIRE_NONBLOCKING:
		return op == PLOOM_OP_ACQUIRE;
	case PLOOM_ACQUIRE_TIMED:
		return op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_JOIN;
	}
	return 0;
}

int ploom_pending_accesses(struct ploom_access out[2], int task, enum ploom_op op,
			   struct ploom_obj obj)
{
	return ploom_op_accesses(out, task, op, obj, 1);
}

int ploom_conflicts(const struct ploom_access *a, int na, const struct ploom_access *b,
		    int nb)
{
	int i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if ((a[i].write || b[j].write) && a[i].obj.kind == b[j].obj.kind &&
			    a[i].obj.id == b[j].obj.id && a[i].obj.kind != PLOOM_OBJ_NONE)
				return 1;
	return 0;
}

/* ---- encoding ---- */
void ploom_buf_release(struct ploom_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static void buf_reserve(struct ploom_buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;
	char *p;

	if (want <= b->cap)
		return;
	if (want < 2 * b->cap)
		want = 2 * b->cap;
	if (want < 256)
		want = 256;
	p = realloc(b->data, want);
	if (!p)
		abort();
	b->data = p;
	b->cap = want;
}

void ploom_buf_add(struct ploom_buf *b, const void *data, size_t len)
{
	buf_reserve(b, len);
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void ploom_buf_addf(struct ploom_buf *b, const char *fmt, ...)
{
	va_list ap;
	char probe;
	int n;

	/* a one-byte probe rather than NULL: gcc's UBSan build flags NULL here */
	va_start(ap, fmt);
	n = vsnprintf(&probe, 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static int needs_escape(unsigned char c)
{
	return c < 0x21 || c == 0x7f || c == '%';
}

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

const char *ploom_label_problem(const char *s, size_t len, size_t max)
{
	size_t i;

	if (!len)
		return "is empty";
	if (len > max)
		return max == PLOOM_PATH_MAX ? "is longer than 4096 bytes" : "is longer than 128 bytes";
	for (i = 0; i < len; i++)
		if (is_control((unsigned char)s[i]))
			return "holds a control character";
	return NULL;
}

/* the messages spell the bounds out */
_Static_assert(PLOOM_PATH_MAX == 4096 && PLOOM_NAME_MAX == 128 && PLOOM_NAMES_MAX == 1024,
	       "update ploom_label_problem() and the parser's messages");

/* Appends " " and s[0..len) as a label of at most max bytes: control
 * characters as '?', cut at a character boundary, "?" when empty. */
static void add_label(struct ploom_buf *b, const char *s, size_t len, size_t max)
{
	char *copy;
	size_t i;

	if (len > max) {
		len = max;
		/* back off to the first byte of the character the cut splits */
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	if (!len) {
		ploom_buf_add_str(b, "?", 1);
		return;
	}
	copy = malloc(len);
	if (!copy)
		abort();
	for (i = 0; i < len; i++)
		copy[i] = is_control((unsigned char)s[i]) ? '?' : s[i];
	ploom_buf_add_str(b, copy, len);
	free(copy);
}

void ploom_buf_add_str(struct ploom_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	/* worst case three bytes out per byte in */
	buf_reserve(b, 2 + 3 * len);
	b->data[b->len++] = ' ';
	b->data[b->len++] = '=';
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (needs_escape(c)) {
			b->data[b->len++] = '%';
			b->data[b->len++] = hex[c >> 4];
			b->data[b->len++] = hex[c & 15];
		} else {
			b->data[b->len++] = (char)c;
		}
	}
	b->data[b->len] = '\0';
}

/* Appends " " and s[0..len) as a str field, cut as PLOOM_MESSAGE_MAX
 * says: the kept head and the marker make one field. */
static void add_message(struct ploom_buf *b, const char *s, size_t len)
{
	char marker[64];
	char *copy;
	size_t keep = PLOOM_MESSAGE_MAX;
	int n;

	if (len <= PLOOM_MESSAGE_MAX) {
		ploom_buf_add_str(b, s, len);
		return;
	}
	/* back off to the first byte of the character the cut splits */
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--;
	n = snprintf(marker, sizeof(marker), "... [cut: %zu bytes]", len - keep);
	assert(n > 0 && (size_t)n < sizeof(marker));
	copy = malloc(keep + (size_t)n);
	if (!copy)
		abort();
	memcpy(copy, s, keep);
	memcpy(copy + keep, marker, (size_t)n);
	ploom_buf_add_str(b, copy, keep + (size_t)n);
	free(copy);
}

int ploom_buf_flush_fd(struct ploom_buf *b, int fd)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t n = write(fd, b->data + off, b->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	b->len = 0;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

char *ploom_str_decode(const char *field, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1);
	size_t i, o = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (field[i] == '%') {
			int hi, lo;
			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			hi = hexval(field[i + 1]);
			lo = hexval(field[i + 2]);
			if (hi < 0 || lo < 0) {
				free(out);
				return NULL;
			}
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = field[i];
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

/* ---- the records ---- */

void ploom_enc_hello(struct ploom_buf *b, const char *impl, size_t impl_len,
		     const char *pyversion, size_t pyversion_len, int gil,
		     const char *hash_seed, size_t hash_seed_len, const char *module,
		     size_t module_len, const char *qualname, size_t qualname_len,
		     const char *file, size_t file_len)
{
	ploom_buf_addf(b, "hello %d", PLOOM_PROTOCOL_VERSION);
	ploom_buf_add_str(b, impl, impl_len);
	ploom_buf_add_str(b, pyversion, pyversion_len);
	ploom_buf_addf(b, " %d", gil ? 1 : 0);
	ploom_buf_add_str(b, hash_seed, hash_seed_len);
	ploom_buf_add_str(b, module, module_len);
	ploom_buf_add_str(b, qualname, qualname_len);
	ploom_buf_add_str(b, file, file_len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_error(struct ploom_buf *b, const char *kind, const char *msg, size_t len)
{
	ploom_buf_addf(b, "error %s", kind);
	add_message(b, msg, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_code(struct ploom_buf *b, long index, const char *file, size_t file_len,
		    const char *function, size_t function_len)
{
	ploom_buf_addf(b, "code %ld", index);
	add_label(b, file, file_len, PLOOM_PATH_MAX);
	add_label(b, function, function_len, PLOOM_NAME_MAX);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_name(struct ploom_buf *b, struct ploom_obj obj, const char *name, size_t len)
{
	char o[32];

	if (!len || obj.kind == PLOOM_OBJ_NONE)
		return;
	ploom_obj_format(o, sizeof(o), obj);
	ploom_buf_addf(b, "name %s", o);
	add_label(b, name, len, PLOOM_NAME_MAX);
	ploom_buf_add(b, "\n", 1);
}

static void add_where(struct ploom_buf *b, struct ploom_wire_where where)
{
	if (where.code < 0 || where.line < 1)
		ploom_buf_add(b, " -", 2);
	else
		ploom_buf_addf(b, " %ld:%ld", where.code, where.line);
}

void ploom_enc_step(struct ploom_buf *b, long index, int task, enum ploom_op op,
		    struct ploom_obj obj, const int *enabled, size_t nenabled,
		    enum ploom_acquire_mode mode, const struct ploom_pending *pending,
		    size_t npending, struct ploom_wire_where where)
{
	static const char *const flags[] = {
		[PLOOM_ACQUIRE_BLOCKING] = "-",
		[PLOOM_ACQUIRE_NONBLOCKING] = "nonblocking",
		[PLOOM_ACQUIRE_TIMED] = "timed",
	};
	char name[32];
	size_t i;

	ploom_obj_format(name, sizeof(name), obj);
	ploom_buf_addf(b, "step %ld %d %s %s ", index, task, ploom_op_name(op), name);
	for (i = 0; i < nenabled; i++)
		ploom_buf_addf(b, i ? ",%d" : "%d", enabled[i]);
	if (!nenabled)
		ploom_buf_add(b, "-", 1);
	assert((unsigned)mode < sizeof(flags) / sizeof(flags[0]));
	ploom_buf_addf(b, " %s ", flags[mode]);
	for (i = 0; i < npending; i++) {
		ploom_obj_format(name, sizeof(name), pending[i].obj);
		ploom_buf_addf(b, "%s%d:%s:%s", i ? "," : "", pending[i].task,
			       ploom_op_name(pending[i].op), name);
	}
	if (!npending)
		ploom_buf_add(b, "-", 1);
	add_where(b, where);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_value(struct ploom_buf *b, long index, const char *text, size_t len)
{
	ploom_buf_addf(b, "value %ld", index);
	ploom_buf_add_str(b, text, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_outcome_pass(struct ploom_buf *b)
{
	ploom_buf_addf(b, "outcome pass\n");
}

void ploom_enc_outcome_failure(struct ploom_buf *b, int task, const char *type,
			       size_t type_len, const char *msg, size_t msg_len,
			       const char *tb, size_t tb_len)
{
	ploom_buf_addf(b, "outcome failure %d", task);
	add_message(b, type, type_len);
	add_message(b, msg, msg_len);
	add_message(b, tb, tb_len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_outcome_deadlock(struct ploom_buf *b)
{
	ploom_buf_addf(b, "outcome deadlock\n");
}

void ploom_enc_wait(struct ploom_buf *b, int task, enum ploom_op op, struct ploom_obj obj,
		    int holder, struct ploom_wire_where where)
{
	char name[32];

	ploom_obj_format(name, sizeof(name), obj);
	ploom_buf_addf(b, "wait %d %s %s %d", task, ploom_op_name(op), name, holder);
	add_where(b, where);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_outcome_step_limit(struct ploom_buf *b, long limit)
{
	ploom_buf_addf(b, "outcome step-limit %ld\n", limit);
}

void ploom_enc_outcome_divergence(struct ploom_buf *b, long index, const char *msg,
				  size_t len)
{
	ploom_buf_addf(b, "outcome divergence %ld", index);
	ploom_buf_add_str(b, msg, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_outcome_sleep_blocked(struct ploom_buf *b, long index)
{
	ploom_buf_addf(b, "outcome sleep-blocked %ld\n", index);
}

void ploom_enc_exit(struct ploom_buf *b, const char *how, int code)
{
	ploom_buf_addf(b, "exit %s %d\n", how, code);
}

void ploom_enc_output(struct ploom_buf *b, const char *text, size_t len)
{
	ploom_buf_addf(b, "output");
	ploom_buf_add_str(b, text, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_done(struct ploom_buf *b, long nsteps)
{
	ploom_buf_addf(b, "done %ld\n", nsteps);
}

/* ---- commands ---- */

void ploom_enc_run(struct ploom_buf *b, const struct ploom_run_cmd *cmd)
{
	const struct ploom_policy_spec *p = &cmd->policy;
	size_t i;

	ploom_buf_addf(b, "run %ld %ld %zu", cmd->max_steps, cmd->timeout_ms, cmd->nchoices);
	for (i = 0; i < cmd->nchoices; i++)
		ploom_buf_addf(b, " %d", cmd->choices[i]);
	ploom_buf_addf(b, " %zu", cmd->nsleep);
	for (i = 0; i < cmd->nsleep; i++)
		ploom_buf_addf(b, " %d", cmd->sleep[i]);
	ploom_buf_addf(b, " %s", ploom_policy_name(p->kind));
	if (p->kind == PLOOM_POLICY_RANDOM || p->kind == PLOOM_POLICY_PCT)
		ploom_buf_addf(b, " %" PRIu64, p->seed);
	if (p->kind == PLOOM_POLICY_PCT)
		ploom_buf_addf(b, " %d %ld", p->depth, p->k);
	ploom_buf_add(b, "\n", 1);
}

void ploom_run_cmd_release(struct ploom_run_cmd *cmd)
{
	free(cmd->choices);
	free(cmd->sleep);
	memset(cmd, 0, sizeof(*cmd));
}

/* The next space-separated decimal of line[*pos..len) within [min, max]. */
static int next_long(long *out, const char *line, size_t len, size_t *pos, long min, long max)
{
	size_t i = *pos;
	long v = 0;
	int digits = 0;

	if (i >= len || line[i] != ' ')
		return -1;
	for (i++; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
		if (++digits > 18)
			return -1;
		v = v * 10 + (line[i] - '0');
	}
	if (!digits || v < min || v > max || (i < len && line[i] != ' '))
		return -1;
	*out = v;
	*pos = i;
	return 0;
}

static int read_ids(int **out, size_t *out_n, const char *line, size_t len, size_t *pos,
		    long max_count)
{
	long n, v;
	size_t i;

	if (next_long(&n, line, len, pos, 0, max_count) < 0)
		return -1;
	*out = malloc((size_t)(n ? n : 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (i = 0; i < (size_t)n; i++) {
		if (next_long(&v, line, len, pos, 0, PLOOM_MAX_TASK_ID) < 0)
			return -1;
		(*out)[i] = (int)v;
	}
	*out_n = (size_t)n;
	return 0;
}

/* The POLICY of a `run` command at line[*pos..len). */
static int read_policy(struct ploom_policy_spec *out, const char *line, size_t len, size_t *pos)
{
	size_t i = *pos, end;
	long v;
	int kind;

	if (i >= len || line[i] != ' ')
		return -1;
	for (end = ++i; end < len && line[end] != ' '; end++)
		;
	kind = ploom_policy_parse_name(line + i, end - i);
	if (kind < 0)
		return -1;
	*pos = end;
	out->kind = (enum ploom_policy_kind)kind;
	if (kind == PLOOM_POLICY_DEFAULT)
		return 0;
	if (next_long(&v, line, len, pos, 0, (long)PLOOM_POLICY_MAX_SEED) < 0)
		return -1;
	out->seed = (uint64_t)v;
	if (kind == PLOOM_POLICY_RANDOM)
		return 0;
	if (next_long(&v, line, len, pos, 1, PLOOM_PCT_MAX_DEPTH) < 0 ||
	    next_long(&out->k, line, len, pos, 0, PLOOM_PCT_MAX_K) < 0)
		return -1;
	out->depth = (int)v;
	return 0;
}

int ploom_run_cmd_parse(struct ploom_run_cmd *out, const char *line, size_t len,
			struct ploom_err *err)
{
	size_t pos = 3;

	memset(out, 0, sizeof(*out));
	if (len < 3 || memcmp(line, "run", 3) ||
	    next_long(&out->max_steps, line, len, &pos, 0, LONG_MAX / 2) < 0 ||
	    next_long(&out->timeout_ms, line, len, &pos, 0, LONG_MAX / 2) < 0 ||
	    read_ids(&out->choices, &out->nchoices, line, len, &pos, PLOOM_MAX_CHOICES) < 0 ||
	    read_ids(&out->sleep, &out->nsleep, line, len, &pos, PLOOM_MAX_TASK_ID) < 0 ||
	    read_policy(&out->policy, line, len, &pos) < 0 || pos != len)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "bad run command");
	return 0;
}

/* ---- decoding ---- */
/* ---- field decoding ---- */

static int split(struct field *f, const char *line, size_t len)
{
	size_t i = 0, nf = 0;

	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != ' ')
			j++;
		if (nf == MAX_FIELDS || j == i)
			return -1;
		f[nf].s = line + i;
		f[nf].n = j - i;
		nf++;
		i = j + 1;
	}
	return (int)nf;
}

static int field_is(const struct field *f, const char *word)
{
	return f->n == strlen(word) && !memcmp(f->s, word, f->n);
}

static int parse_long(long *out, const struct field *f, long min, long max)
{
	long v = 0;
	size_t i = 0;
	int neg = 0;

	if (f->n && f->s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == f->n || f->n - i > 18)
		return -1;
	for (; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return -1;
		v = v * 10 + (f->s[i] - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(int *out, const struct field *f, int min, int max)
{
	long v;

	if (parse_long(&v, f, min, max) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static char *dup_str(const struct field *f)
{
	if (!f->n || f->s[0] != '=')
		return NULL;
	return ploom_str_decode(f->s + 1, f->n - 1, NULL);
}

static int parse_list(int **out, size_t *out_len, const struct field *f)
{
	size_t i, n = 1, k = 0;
	struct field x;
	int *v;

	*out = NULL;
	*out_len = 0;
	if (field_is(f, "-"))
		return 0;
	for (i = 0; i < f->n; i++)
		if (f->s[i] == ',')
			n++;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -1;
	x.s = f->s;
	for (i = 0; i <= f->n; i++) {
		if (i == f->n || f->s[i] == ',') {
			x.n = (size_t)(f->s + i - x.s);
			if (parse_int(&v[k], &x, 0, INT_MAX) < 0 ||
			    (k && v[k] <= v[k - 1])) {
				free(v);
				return -1;
			}
			k++;
			x.s = f->s + i + 1;
		}
	}
	*out = v;
	*out_len = k;
	return 0;
}

/* "malformed record from the worker: 'step 1 ...' (bad INDEX)" with the
 * record cut short and made printable, so the message stays one line. */
static int malformed(struct ploom_err *err, const char *line, size_t len, const char *why)
{
	char shown[72];
	size_t i, n = len < 60 ? len : 60;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];
		shown[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (n < len) {
		memcpy(shown + n, "...", 3);
		n += 3;
	}
	shown[n] = '\0';
	return ploom_err_set(err, PLOOM_ERR_WORKER, "malformed record from the worker: '%s' (%s)",
			     shown, why);
}

static int field_op(const struct field *f)
{
	return ploom_op_parse(f->s, f->n);
}

/* An object name that parses; NULL for "-" (the caller checks which). */
static int field_obj(struct ploom_obj *out, char **name, const struct field *f)
{
	*name = NULL;
	if (ploom_obj_parse(out, f->s, f->n) < 0)
		return -1;
	if (out->kind == PLOOM_OBJ_NONE)
		return 0;
	*name = strndup(f->s, f->n);
	return *name ? 0 : -1;
}

/* PENDING: "-" or TASK:OP:OBJECT,... in ascending task order, none of
 * them `task`. */
static int parse_pending(struct ploom_step *s, const struct field *f)
{
	size_t i, n = 1, k = 0, start = 0;

	if (field_is(f, "-"))
		return 0;
	for (i = 0; i < f->n; i++)
		if (f->s[i] == ',')
			n++;
	s->pending = calloc(n, sizeof(*s->pending));
	if (!s->pending)
		return -1;
	for (i = 0; i <= f->n; i++) {
		const char *c1, *c2, *e;
		struct field x;
		struct ploom_pending *pe;
		int op;

		if (i < f->n && f->s[i] != ',')
			continue;
		e = f->s + i;
		c1 = memchr(f->s + start, ':', (size_t)(e - f->s - start));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
		if (!c2)
			return -1;
		pe = &s->pending[k];
		x.s = f->s + start;
		x.n = (size_t)(c1 - x.s);
		if (parse_int(&pe->task, &x, 0, INT_MAX) < 0 || pe->task == s->task ||
		    (k && pe->task <= s->pending[k - 1].task))
			return -1;
		op = ploom_op_parse(c1 + 1, (size_t)(c2 - c1 - 1));
		if (op < 0 || ploom_obj_parse(&pe->obj, c2 + 1, (size_t)(e - c2 - 1)) < 0)
			return -1;
		pe->op = (enum ploom_op)op;
		k++;
		start = i + 1;
	}
	s->npending = k;
	return 0;
}

/* 1 if task is among the step's pending tasks. */
static int is_pending(const struct ploom_step *s, int task)
{
	size_t i;

	for (i = 0; i < s->npending; i++)
		if (s->pending[i].task == task)
			return 1;
	return 0;
}

/* WHERE: "-", or CODE:LINE naming a code record of the run.  Fills out
 * (zeroed by the caller) with a copy of the code's file and function. */
static int parse_where(struct ploom_where *out, const struct ploom_run *run,
		       const struct field *f, struct ploom_err *err)
{
	const char *colon;
	struct field x;
	long code, line;

	if (field_is(f, "-"))
		return 0;
	colon = memchr(f->s, ':', f->n);
	if (!colon)
		return -1;
	x.s = f->s;
	x.n = (size_t)(colon - f->s);
	if (x.n && x.s[0] == '-')
		return -1;
	if (parse_long(&code, &x, 0, LONG_MAX) < 0 || (size_t)code >= run->ncodes)
		return -1;
	x.s = colon + 1;
	x.n = f->n - x.n - 1;
	if (x.n && x.s[0] == '-')
		return -1;
	if (parse_long(&line, &x, 1, INT_MAX) < 0)
		return -1;
	return ploom_where_copy(out, &run->codes[code], (int)line, err) < 0 ? -2 : 0;
}

/* A str field that is a label of at most max bytes, decoded into *out
 * (malloc'd); NULL and *why set when it is none. */
static char *dup_label(const struct field *f, size_t max, const char **why)
{
	size_t n;
	char *s;

	*why = "bad str field";
	if (!f->n || f->s[0] != '=')
		return NULL;
	s = ploom_str_decode(f->s + 1, f->n - 1, &n);
	if (!s)
		return NULL;
	/* a NUL is a control character too */
	*why = ploom_label_problem(s, n, max);
	if (*why) {
		free(s);
		return NULL;
	}
	return s;
}

static int parse_code(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_run *run = p->run;
	struct ploom_where *codes, w = {NULL, NULL, 0};
	const char *why;
	char msg[64];
	long index;

	if (nf != 4)
		return malformed(err, line, len, "expected 4 fields");
	if (parse_long(&index, &f[1], 0, LONG_MAX) < 0 || (size_t)index != run->ncodes)
		return malformed(err, line, len, "bad INDEX");
	w.file = dup_label(&f[2], PLOOM_PATH_MAX, &why);
	if (!w.file) {
		snprintf(msg, sizeof(msg), "FILE %s", why);
		return malformed(err, line, len, msg);
	}
	w.function = dup_label(&f[3], PLOOM_NAME_MAX, &why);
	if (!w.function) {
		free(w.file);
		snprintf(msg, sizeof(msg), "FUNCTION %s", why);
		return malformed(err, line, len, msg);
	}
	codes = realloc(run->codes, (run->ncodes + 1) * sizeof(*codes));
	if (!codes) {
		ploom_where_release(&w);
		return ploom_err_oom(err);
	}
	run->codes = codes;
	codes[run->ncodes++] = w;
	return 0;
}

static int parse_name(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_obj obj;
	const char *why;
	char msg[64], *name;
	int r;

	if (nf != 3)
		return malformed(err, line, len, "expected 3 fields");
	if (ploom_obj_parse(&obj, f[1].s, f[1].n) < 0 || obj.kind == PLOOM_OBJ_NONE)
		return malformed(err, line, len, "bad OBJECT");
	if (!ploom_run_name(p->run, obj) && p->run->nnames >= PLOOM_NAMES_MAX)
		return malformed(err, line, len, "more than 1024 names");
	name = dup_label(&f[2], PLOOM_NAME_MAX, &why);
	if (!name) {
		snprintf(msg, sizeof(msg), "NAME %s", why);
		return malformed(err, line, len, msg);
	}
	r = ploom_run_set_name(p->run, obj, name, err);
	free(name);
	return r;
}

/* ---- the run parser ---- */

void ploom_run_parser_init(struct ploom_run_parser *p, struct ploom_run *run, long timeout_ms)
{
	memset(p, 0, sizeof(*p));
	p->run = run;
	p->timeout_ms = timeout_ms;
}

static int parse_step(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_step *s;
	long index;
	size_t i;
	int task, op, r;
	enum ploom_acquire_mode mode;

	if (nf != 9)
		return malformed(err, line, len, "expected 9 fields");
	if (parse_long(&index, &f[1], 0, LONG_MAX) < 0)
		return malformed(err, line, len, "bad INDEX");
	if ((size_t)index != p->run->nsteps)
		return malformed(err, line, len, "step out of order");
	if (parse_int(&task, &f[2], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad TASK");
	op = field_op(&f[3]);
	if (op < 0)
		return malformed(err, line, len, "unknown OP");
	if (field_is(&f[6], "-"))
		mode = PLOOM_ACQUIRE_BLOCKING;
	else if (field_is(&f[6], "nonblocking"))
		mode = PLOOM_ACQUIRE_NONBLOCKING;
	else if (field_is(&f[6], "timed"))
		mode = PLOOM_ACQUIRE_TIMED;
	else
		return malformed(err, line, len, "bad FLAGS");
	/* a mode belongs to an acquire or a join: elsewhere it would mean nothing */
	if (!ploom_mode_allowed((enum ploom_op)op, mode))
		return malformed(err, line, len, "FLAGS that OP does not take");
	s = ploom_run_add_step(p->run);
	if (!s)
		return ploom_err_oom(err);
	s->index = index;
	s->task = task;
	s->mode = mode;
	s->op = (enum ploom_op)op;
	if (field_obj(&s->obj, &s->object, &f[4]) < 0)
		return malformed(err, line, len, "bad OBJECT");
	if (parse_list(&s->enabled, &s->nenabled, &f[5]) < 0)
		return malformed(err, line, len, "bad ENABLED");
	if (!ploom_step_is_enabled(s, task))
		return malformed(err, line, len, "TASK is not enabled");
	if (parse_pending(s, &f[7]) < 0)
		return malformed(err, line, len, "bad PENDING");
	for (i = 0; i < s->nenabled; i++)
		if (s->enabled[i] != task && !is_pending(s, s->enabled[i]))
			return malformed(err, line, len, "an enabled task is not in PENDING");
	r = parse_where(&s->where, p->run, &f[8], err);
	if (r == -2)
		return -1;
	if (r < 0)
		return malformed(err, line, len, "bad WHERE");
	p->nstep_records++;
	return 0;
}

static int parse_outcome(struct ploom_run_parser *p, const struct field *f, int nf,
			 const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;

	if (p->have_outcome)
		return malformed(err, line, len, "second outcome");
	if (nf < 2)
		return malformed(err, line, len, "no KIND");
	if (field_is(&f[1], "pass")) {
		if (nf != 2)
			return malformed(err, line, len, "expected 2 fields");
		o->kind = PLOOM_OUTCOME_PASS;
	} else if (field_is(&f[1], "failure")) {
		if (nf != 6)
			return malformed(err, line, len, "expected 6 fields");
		if (parse_int(&o->task, &f[2], 0, INT_MAX) < 0)
			return malformed(err, line, len, "bad TASK");
		o->exc_type = dup_str(&f[3]);
		o->exc_message = dup_str(&f[4]);
		o->traceback = dup_str(&f[5]);
		if (!o->exc_type || !o->exc_message || !o->traceback)
			return malformed(err, line, len, "bad str field");
		o->kind = PLOOM_OUTCOME_FAILURE;
	} else if (field_is(&f[1], "deadlock")) {
		if (nf != 2)
			return malformed(err, line, len, "expected 2 fields");
		o->kind = PLOOM_OUTCOME_DEADLOCK;
		p->in_deadlock = 1;
	} else if (field_is(&f[1], "step-limit")) {
		if (nf != 3 || parse_long(&o->limit, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad LIMIT");
		o->kind = PLOOM_OUTCOME_STEP_LIMIT;
	} else if (field_is(&f[1], "divergence")) {
		if (nf != 4 || parse_long(&o->divergence_index, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad INDEX");
		o->divergence_message = dup_str(&f[3]);
		if (!o->divergence_message)
			return malformed(err, line, len, "bad MESSAGE");
		o->kind = PLOOM_OUTCOME_DIVERGENCE;
	} else if (field_is(&f[1], "sleep-blocked")) {
		if (nf != 3 || parse_long(&o->divergence_index, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad INDEX");
		o->kind = PLOOM_OUTCOME_SLEEP_BLOCKED;
		p->in_deadlock = 1;
	} else {
		return malformed(err, line, len, "unknown outcome");
	}
	p->have_outcome = 1;
	return 0;
}

static int parse_wait(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;
	struct ploom_wait *w;
	struct ploom_obj obj;
	int op, r;

	if (!p->in_deadlock)
		return malformed(err, line, len, "wait outside a deadlock");
	if (nf != 6)
		return malformed(err, line, len, "expected 6 fields");
	w = realloc(o->waits, (o->nwaits + 1) * sizeof(*w));
	if (!w)
		return ploom_err_oom(err);
	o->waits = w;
	w = &o->waits[o->nwaits++];
	memset(w, 0, sizeof(*w));
	if (parse_int(&w->task, &f[1], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad TASK");
	op = field_op(&f[2]);
	if (op < 0)
		return malformed(err, line, len, "unknown OP");
	w->op = (enum ploom_op)op;
	if (field_obj(&obj, &w->object, &f[3]) < 0)
		return malformed(err, line, len, "bad OBJECT");
	if (parse_int(&w->holder, &f[4], -1, INT_MAX) < 0)
		return malformed(err, line, len, "bad HOLDER");
	r = parse_where(&w->where, p->run, &f[5], err);
	if (r == -2)
		return -1;
	if (r < 0)
		return malformed(err, line, len, "bad WHERE");
	return 0;
}

/* After `done`: turn the child's exit into an outcome when it sent none. */
static int finish(struct ploom_run_parser *p, const char *line, size_t len,
		  struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;

	if (!p->have_outcome) {
		if (!p->have_exit)
			return malformed(err, line, len, "run without outcome or exit");
		if (!strcmp(p->exit_how, "code")) {
			o->kind = PLOOM_OUTCOME_EXIT;
			o->status = p->exit_code;
		} else if (!strcmp(p->exit_how, "signal")) {
			o->kind = PLOOM_OUTCOME_CRASH;
			o->signal = p->exit_code;
		} else {
			o->kind = PLOOM_OUTCOME_TIMEOUT;
			o->timeout_ms = p->timeout_ms;
		}
	}
	p->done = 1;
	return ploom_run_finish(p->run, err);
}

/* `error command MESSAGE`, in place of a run's records: the worker could
 * not take the command (it goes on reading commands). */
static int parse_refusal(struct ploom_run_parser *p, const struct field *f, int nf,
			 const char *line, size_t len, struct ploom_err *err)
{
	char *msg;
	size_t i;

	if (p->nrecords != 1 || nf != 3 || !field_is(&f[1], "command") || !(msg = dup_str(&f[2])))
		return malformed(err, line, len, "expected error command MESSAGE, first");
	/* the message stays one line and cannot drive the terminal */
	for (i = 0; msg[i]; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	ploom_err_set(err, PLOOM_ERR_WORKER, "the worker refused the command: %s", msg);
	free(msg);
	return -1;
}

int ploom_run_parser_line(struct ploom_run_parser *p, const char *line, size_t len,
			  struct ploom_err *err)
{
	struct field f[MAX_FIELDS];
	long n;
	int nf;

	if (p->done)
		return malformed(err, line, len, "record after done");
	p->nrecords++;
	if (memchr(line, '\0', len))
		return malformed(err, line, len, "NUL byte");
	nf = split(f, line, len);
	if (nf < 1)
		return malformed(err, line, len, "bad field separators");
	if (field_is(&f[0], "error"))
		return parse_refusal(p, f, nf, line, len, err);
	if (field_is(&f[0], "step"))
		return parse_step(p, f, nf, line, len, err);
	if (!field_is(&f[0], "wait"))
		p->in_deadlock = 0;
	if (field_is(&f[0], "wait"))
		return parse_wait(p, f, nf, line, len, err);
	if (field_is(&f[0], "value")) {
		struct ploom_step *s;
		if (nf != 3 || parse_long(&n, &f[1], 0, LONG_MAX) < 0 ||
		    (size_t)n >= p->run->nsteps)
			return malformed(err, line, len, "bad INDEX");
		s = &p->run->steps[n];
		if (s->value)
			return malformed(err, line, len, "second value for a step");
		s->value = dup_str(&f[2]);
		if (!s->value)
			return malformed(err, line, len, "bad TEXT");
		return 0;
	}
	if (field_is(&f[0], "outcome"))
		return parse_outcome(p, f, nf, line, len, err);
	if (field_is(&f[0], "code"))
		return parse_code(p, f, nf, line, len, err);
	if (field_is(&f[0], "name"))
		return parse_name(p, f, nf, line, len, err);
	if (field_is(&f[0], "exit")) {
		int code;
		if (p->have_exit || nf != 3)
			return malformed(err, line, len, "expected one exit with 3 fields");
		if (!field_is(&f[1], "code") && !field_is(&f[1], "signal") &&
		    !field_is(&f[1], "timeout"))
			return malformed(err, line, len, "bad HOW");
		if (parse_int(&code, &f[2], INT_MIN, INT_MAX) < 0)
			return malformed(err, line, len, "bad CODE");
		memcpy(p->exit_how, f[1].s, f[1].n);
		p->exit_how[f[1].n] = '\0';
		p->exit_code = code;
		p->have_exit = 1;
		return 0;
	}
	if (field_is(&f[0], "output")) {
		if (p->have_output || nf != 2)
			return malformed(err, line, len, "expected one output with 2 fields");
		p->run->outcome.output = dup_str(&f[1]);
		if (!p->run->outcome.output)
			return malformed(err, line, len, "bad TEXT");
		p->have_output = 1;
		return 0;
	}
	if (field_is(&f[0], "done")) {
		if (nf != 2 || parse_long(&n, &f[1], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad NSTEPS");
		if (n != p->nstep_records)
			return malformed(err, line, len, "step count differs from the step records");
		if (finish(p, line, len, err) < 0)
			return -1;
		return 1;
	}
	return malformed(err, line, len, "unknown record");
}

int ploom_run_parse_text(struct ploom_run *out, const char *text, size_t len,
			 long timeout_ms, struct ploom_err *err)
{
	struct ploom_run_parser p;
	size_t i = 0;
	int r = 0;

	ploom_run_parser_init(&p, out, timeout_ms);
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		if (!nl)
			break;
		r = ploom_run_parser_line(&p, text + i, (size_t)(nl - text - i), err);
		if (r < 0)
			return -1;
		i = (size_t)(nl - text) + 1;
		if (r == 1)
			break;
	}
	if (r != 1)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "the worker stopped before the end of the run");
	if (i < len)
		return ploom_err_set(err, PLOOM_ERR_WORKER, "data after the end of the run");
	return 0;
}

/* ---- hello ---- */

void ploom_hello_release(struct ploom_hello *h)
{
	free(h->implementation);
	free(h->python_version);
	free(h->hash_seed);
	free(h->module);
	free(h->qualname);
	free(h->file);
	memset(h, 0, sizeof(*h));
}

int ploom_hello_parse(struct ploom_hello *out, const char *line, size_t len,
		      const char *target, struct ploom_err *err)
{
	struct field f[MAX_FIELDS];
	char *msg;
	size_t i;
	int nf;

	if (memchr(line, '\0', len))
		return malformed(err, line, len, "NUL byte");
	nf = split(f, line, len);
	if (nf >= 1 && field_is(&f[0], "error")) {
		if (nf != 3 || !(msg = dup_str(&f[2])))
			return malformed(err, line, len, "expected error KIND MESSAGE");
		/* the exception's text, which may hold newlines or escapes:
		 * the message stays one line and cannot drive the terminal */
		for (i = 0; msg[i]; i++)
			if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
				msg[i] = '?';
		if (field_is(&f[1], "source"))
			ploom_err_set(err, PLOOM_ERR_DIVERGENCE, "%s", msg);
		else
			ploom_err_set(err, PLOOM_ERR_INPUT, "cannot load scenario '%s': %s",
				      target, msg);
		free(msg);
		return -1;
	}
	if (nf < 1 || !field_is(&f[0], "hello"))
		return malformed(err, line, len, "expected hello");
	if (nf < 2 || parse_int(&out->version, &f[1], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad VERSION");
	if (out->version != PLOOM_PROTOCOL_VERSION)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "the worker speaks protocol version %d (this ploom speaks %d)",
				     out->version, PLOOM_PROTOCOL_VERSION);
	if (nf != 9)
		return malformed(err, line, len, "expected 9 fields");
	if (parse_int(&out->gil, &f[4], 0, 1) < 0)
		return malformed(err, line, len, "bad GIL");
	out->implementation = dup_str(&f[2]);
	out->python_version = dup_str(&f[3]);
	out->hash_seed = dup_str(&f[5]);
	out->module = dup_str(&f[6]);
	out->qualname = dup_str(&f[7]);
	out->file = dup_str(&f[8]);
	if (!out->implementation || !out->python_version || !out->hash_seed ||
	    !out->module || !out->qualname || !out->file)
		return malformed(err, line, len, "bad str field");
	if (!*out->file) {
		free(out->file);
		out->file = NULL;
	}
	return 0;
}

