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
	[PLOOM_OP_SLEEP] = "sleep",
};

const char *ploom_op_name(enum ploom_op op)
{
	if ((unsigned)op >= PLOOM_NOPS)
		return "?";
	return op_names[op];
}

static const char *const wait_for_names[PLOOM_NWAIT_FOR] = {
	[PLOOM_WAIT_LOCK] = "lock",
	[PLOOM_WAIT_JOIN] = "join",
	[PLOOM_WAIT_NOTIFY] = "notify",
	[PLOOM_WAIT_STATE] = "state",
};

const char *ploom_wait_for_name(enum ploom_wait_for w)
{
	return (unsigned)w < PLOOM_NWAIT_FOR ? wait_for_names[w] : "?";
}

int ploom_wait_for_parse(const char *s, size_t len)
{
	int i;

	for (i = 0; i < PLOOM_NWAIT_FOR; i++)
		if (strlen(wait_for_names[i]) == len && !memcmp(wait_for_names[i], s, len))
			return i;
	return -1;
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
	[PLOOM_OBJ_PLAIN] = "plain",
	[PLOOM_OBJ_CLOCK] = "clock",
};

size_t ploom_obj_format(char *out, size_t cap, struct ploom_obj obj)
{
	int n;

	if (obj.kind == PLOOM_OBJ_NONE || (unsigned)obj.kind > PLOOM_OBJ_CLOCK)
		n = snprintf(out, cap, "-");
	else if (obj.kind == PLOOM_OBJ_CLOCK)
		/* there is one: a number would only make traces harder to read */
		n = snprintf(out, cap, "clock");
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
	if (len == 5 && !memcmp(s, "clock", 5)) {
		out->kind = PLOOM_OBJ_CLOCK;
		return 0;
	}
	for (k = PLOOM_OBJ_CELL; k <= PLOOM_OBJ_PLAIN; k++) {
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

int ploom_op_accesses(struct ploom_access out[PLOOM_ACCESS_MAX], int task, enum ploom_op op,
		      struct ploom_obj obj, enum ploom_acquire_mode mode, int exits)
{
	static const struct ploom_obj clock = {PLOOM_OBJ_CLOCK, 0};
	struct ploom_obj self = {PLOOM_OBJ_THREAD, task};
	int n = 0;

	switch (op) {
	case PLOOM_OP_BEGIN:
		out[n++] = (struct ploom_access){self, PLOOM_ACCESS_READ};
		break;
	case PLOOM_OP_READ:
	case PLOOM_OP_LOCKED:
	case PLOOM_OP_JOIN:
	case PLOOM_OP_IS_ALIVE:
		out[n++] = (struct ploom_access){obj, PLOOM_ACCESS_READ};
		break;
	case PLOOM_OP_START:
		out[n++] = (struct ploom_access){obj, PLOOM_ACCESS_WRITE};
		out[n++] = (struct ploom_access){PLOOM_SPAWN, PLOOM_ACCESS_WRITE};
		break;
	case PLOOM_OP_WRITE:
	case PLOOM_OP_ACQUIRE:
	case PLOOM_OP_RELEASE:
		out[n++] = (struct ploom_access){obj, PLOOM_ACCESS_WRITE};
		break;
	case PLOOM_OP_SLEEP:
		out[n++] = (struct ploom_access){clock, PLOOM_ACCESS_ADD};
		break;
	default:
		break;
	}
	/* after the access of obj, which hb.h's waits takes as out[0] */
	if (mode == PLOOM_ACQUIRE_TIMED && (op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_JOIN))
		out[n++] = (struct ploom_access){clock, PLOOM_ACCESS_ADD};
	if (exits) {
		/* begin then exit: one write of the thread covers both */
		if (n && out[0].obj.kind == PLOOM_OBJ_THREAD && out[0].obj.id == task)
			out[0].how = PLOOM_ACCESS_WRITE;
		else
			out[n++] = (struct ploom_access){self, PLOOM_ACCESS_WRITE};
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

enum ploom_acquire_mode ploom_pending_mode(enum ploom_op op)
{
	return op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_JOIN ? PLOOM_ACQUIRE_TIMED
							     : PLOOM_ACQUIRE_BLOCKING;
}

int ploom_pending_accesses(struct ploom_access out[PLOOM_ACCESS_MAX], int task,
			   enum ploom_op op, struct ploom_obj obj)
{
	return ploom_op_accesses(out, task, op, obj, ploom_pending_mode(op), 1);
}

int ploom_access_conflict(const struct ploom_access *a, const struct ploom_access *b)
{
	if (a->obj.kind != b->obj.kind || a->obj.id != b->obj.id || a->obj.kind == PLOOM_OBJ_NONE)
		return 0;
	if (a->how == PLOOM_ACCESS_WRITE || b->how == PLOOM_ACCESS_WRITE)
		return 1;
	/* a read and an add: the read sees the sum with or without it */
	return a->how != b->how;
}

int ploom_conflicts(const struct ploom_access *a, int na, const struct ploom_access *b,
		    int nb)
{
	int i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (ploom_access_conflict(&a[i], &b[j]))
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

size_t ploom_utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t k, need;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (need >= n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (k = 2; k <= need; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return need + 1;
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
	size_t i, n;

	if (!len)
		return "is empty";
	if (len > max)
		return max == PLOOM_PATH_MAX ? "is longer than 4096 bytes" : "is longer than 128 bytes";
	for (i = 0; i < len; i++)
		if (is_control((unsigned char)s[i]))
			return "holds a control character";
	for (i = 0; i < len; i += n)
		if (!(n = ploom_utf8_sequence((const unsigned char *)s + i, len - i)))
			return "is not valid UTF-8";
	return NULL;
}

/* the messages spell the bounds out */
_Static_assert(PLOOM_PATH_MAX == 4096 && PLOOM_NAME_MAX == 128 && PLOOM_NAMES_MAX == 1024,
	       "update ploom_label_problem() and the parser's messages");

/* Appends " " and s[0..len) as a label of at most max bytes: control
 * characters, and each byte of what is not UTF-8 (a dump's bytes are the
 * scenario's to write), as '?', cut at a character boundary, "?" when
 * empty. */
static void add_label(struct ploom_buf *b, const char *s, size_t len, size_t max)
{
	char *copy;
	size_t i, n;

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
	for (i = 0; i < len; i += n) {
		n = ploom_utf8_sequence((const unsigned char *)s + i, len - i);
		if (!n) {
			copy[i] = '?';
			n = 1;
		} else {
			memcpy(copy + i, s + i, n);
			if (n == 1 && is_control((unsigned char)s[i]))
				copy[i] = '?';
		}
	}
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

/* Where PLOOM_MESSAGE_MAX cuts s[0..len): the bytes kept, and in marker
 * what follows them ("" when nothing is cut). */
static size_t message_cut(const char *s, size_t len, char marker[64])
{
	size_t keep = PLOOM_MESSAGE_MAX;
	int n;

	marker[0] = '\0';
	if (len <= PLOOM_MESSAGE_MAX)
		return len;
	/* back off to the first byte of the character the cut splits */
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--;
	n = snprintf(marker, 64, "... [cut: %zu bytes]", len - keep);
	assert(n > 0 && n < 64);
	return keep;
}

/* Appends " " and s[0..len) as a str field, cut as PLOOM_MESSAGE_MAX
 * says: the kept head and the marker make one field. */
static void add_message(struct ploom_buf *b, const char *s, size_t len)
{
	char marker[64];
	char *copy;
	size_t keep = message_cut(s, len, marker), n = strlen(marker);

	if (!n) {
		ploom_buf_add_str(b, s, len);
		return;
	}
	copy = malloc(keep + n);
	if (!copy)
		abort();
	memcpy(copy, s, keep);
	memcpy(copy + keep, marker, n);
	ploom_buf_add_str(b, copy, keep + n);
	free(copy);
}

/* Appends the text of s[0..len) to a JSON string being written (no
 * quotes): '"' and '\\' escaped, a control character as \u00XX but NUL,
 * which JSON readers here refuse (json.h), and each byte of what is not
 * UTF-8 as '?', so that the document is always one they read. */
static void add_json_text(struct ploom_buf *b, const char *s, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n) {
		unsigned char c = (unsigned char)s[i];
		n = ploom_utf8_sequence((const unsigned char *)s + i, len - i);
		if (!n || !c) {
			ploom_buf_add(b, "?", 1);
			n = 1;
		} else if (c == '"' || c == '\\') {
			ploom_buf_addf(b, "\\%c", c);
		} else if (n == 1 && is_control(c)) {
			ploom_buf_addf(b, "\\u%04x", c);
		} else {
			ploom_buf_add(b, s + i, n);
		}
	}
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
		     const char *file, size_t file_len, int scenario_instrumented,
		     const char *instrumented, size_t instrumented_len, const char *sources,
		     size_t sources_len, const char *root, size_t root_len)
{
	ploom_buf_addf(b, "hello %d", PLOOM_PROTOCOL_VERSION);
	ploom_buf_add_str(b, impl, impl_len);
	ploom_buf_add_str(b, pyversion, pyversion_len);
	ploom_buf_addf(b, " %d", gil ? 1 : 0);
	ploom_buf_add_str(b, hash_seed, hash_seed_len);
	ploom_buf_add_str(b, module, module_len);
	ploom_buf_add_str(b, qualname, qualname_len);
	ploom_buf_add_str(b, file, file_len);
	ploom_buf_addf(b, " %d", scenario_instrumented ? 1 : 0);
	ploom_buf_add_str(b, instrumented, instrumented_len);
	ploom_buf_add_str(b, sources, sources_len);
	ploom_buf_add_str(b, root, root_len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_error(struct ploom_buf *b, const char *kind, const char *msg, size_t len)
{
	ploom_buf_addf(b, "error %s", kind);
	add_message(b, msg, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_error_detail(struct ploom_buf *b, const char *kind, const char *msg,
			    size_t len, const char *type, size_t type_len)
{
	struct ploom_buf j = {0};
	char marker[64];
	size_t keep = message_cut(msg, len, marker);

	ploom_buf_addf(&j, "{\"message\": \"");
	add_json_text(&j, msg, keep);
	add_json_text(&j, marker, strlen(marker));
	ploom_buf_add(&j, "\"", 1);
	if (type) {
		ploom_buf_addf(&j, ", \"type\": \"");
		add_json_text(&j, type, type_len < PLOOM_NAME_MAX ? type_len : PLOOM_NAME_MAX);
		ploom_buf_add(&j, "\"", 1);
	}
	ploom_buf_add(&j, "}", 1);
	ploom_buf_addf(b, "error %s", kind);
	ploom_buf_add_str(b, j.data, j.len);
	ploom_buf_add(b, "\n", 1);
	ploom_buf_release(&j);
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

void ploom_enc_idle(struct ploom_buf *b, long index, long long ns)
{
	ploom_buf_addf(b, "idle %ld %lld\n", index, ns);
}

void ploom_enc_stall(struct ploom_buf *b, long index, int task, long long ns)
{
	ploom_buf_addf(b, "stall %ld %d %lld\n", index, task, ns);
}

const char *ploom_timeouts_name(enum ploom_timeouts t)
{
	switch (t) {
	case PLOOM_TIMEOUTS_IDLE:
		return "idle";
	case PLOOM_TIMEOUTS_ANY:
		return "any";
	}
	return "?";
}

int ploom_timeouts_parse(const char *s)
{
	if (!strcmp(s, "idle"))
		return PLOOM_TIMEOUTS_IDLE;
	if (!strcmp(s, "any"))
		return PLOOM_TIMEOUTS_ANY;
	return -1;
}

void ploom_enc_label(struct ploom_buf *b, long index, const char *text, size_t len)
{
	if (!len)
		return;
	ploom_buf_addf(b, "label %ld", index);
	add_label(b, text, len, PLOOM_NAME_MAX);
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
		    int holder, struct ploom_wire_where where, enum ploom_wait_for waits_for,
		    const char *on, size_t on_len)
{
	char name[32];

	ploom_obj_format(name, sizeof(name), obj);
	ploom_buf_addf(b, "wait %d %s %s %d", task, ploom_op_name(op), name, holder);
	add_where(b, where);
	ploom_buf_addf(b, " %s", ploom_wait_for_name(waits_for));
	if (on && on_len)
		add_label(b, on, on_len, PLOOM_NAME_MAX);
	else
		ploom_buf_add(b, " =", 2);
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

void ploom_enc_outcome_refine(struct ploom_buf *b, const char *sites, size_t len)
{
	ploom_buf_addf(b, "outcome refine");
	ploom_buf_add_str(b, sites, len);
	ploom_buf_add(b, "\n", 1);
}

void ploom_enc_exit(struct ploom_buf *b, const char *how, int code)
{
	ploom_buf_addf(b, "exit %s %d\n", how, code);
}

/* ---- stacks of a schedule cut by its timeout ---- */

static const char *const stack_states[] = {"running", "finished", "unstarted", "unknown"};

const char *ploom_stack_state_name(enum ploom_stack_state state)
{
	if ((unsigned)state >= sizeof(stack_states) / sizeof(*stack_states))
		return "?";
	return stack_states[state];
}

int ploom_stack_state_parse(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(stack_states) / sizeof(*stack_states); i++)
		if (strlen(stack_states[i]) == len && !memcmp(stack_states[i], s, len))
			return (int)i;
	return -1;
}

void ploom_enc_stack(struct ploom_buf *b, int task, enum ploom_stack_state state, long depth)
{
	ploom_buf_addf(b, "stack %d %s %ld\n", task, ploom_stack_state_name(state),
		       depth < 0 ? 0 : depth);
}

void ploom_enc_frame(struct ploom_buf *b, const char *file, size_t file_len, long line,
		     const char *function, size_t function_len)
{
	ploom_buf_add(b, "frame", 5);
	add_label(b, file, file_len, PLOOM_PATH_MAX);
	ploom_buf_addf(b, " %ld", line < 1 ? 0 : line);
	add_label(b, function, function_len, PLOOM_NAME_MAX);
	ploom_buf_add(b, "\n", 1);
}

/* One line of a dump: [s, s + n), without its newline. */
struct dump_line {
	const char *s;
	size_t n;
};

static int starts_with(struct dump_line l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l.n >= n && !memcmp(l.s, prefix, n);
}

/* The ident of a thread's header line ("Thread 0x7f..." or "Current
 * thread 0x7f..."), or 0 when l is none. */
static unsigned long dump_thread(struct dump_line l)
{
	static const char *const heads[] = {"Thread 0x", "Current thread 0x"};
	unsigned long v = 0;
	size_t i, k, digits = 0;

	for (k = 0; k < 2; k++)
		if (starts_with(l, heads[k]))
			break;
	if (k == 2)
		return 0;
	for (i = strlen(heads[k]); i < l.n && digits <= 2 * sizeof(v); i++, digits++) {
		int d = hexval(l.s[i]);
		if (d < 0)
			break;
		v = v << 4 | (unsigned long)d;
	}
	return digits && digits <= 2 * sizeof(v) ? v : 0;
}

/* A frame line, '  File "FILE", line N in FUNCTION' (N may be "???"):
 * 1 with its parts, or 0 when l is none. */
struct dump_frame {
	const char *file, *function;
	size_t file_len, function_len;
	long line;
};

static int dump_frame(struct dump_frame *f, struct dump_line l)
{
	static const char head[] = "  File \"", mid[] = "\", line ";
	const char *p, *end = l.s + l.n, *q = NULL;

	if (!starts_with(l, head))
		return 0;
	/* the last '", line ': a file name may hold the words, a function
	 * name cannot */
	for (p = l.s + sizeof(head) - 1; p + sizeof(mid) - 1 <= end; p++)
		if (!memcmp(p, mid, sizeof(mid) - 1))
			q = p;
	if (!q)
		return 0;
	f->file = l.s + sizeof(head) - 1;
	f->file_len = (size_t)(q - f->file);
	p = q + sizeof(mid) - 1;
	f->line = 0;
	if (end - p >= 3 && !memcmp(p, "???", 3)) {
		p += 3;
	} else {
		const char *d = p;
		while (p < end && *p >= '0' && *p <= '9' && p - d < 9)
			f->line = f->line * 10 + (*p++ - '0');
		if (p == d)
			return 0;
	}
	if (end - p < 5 || memcmp(p, " in ", 4))
		return 0;
	f->function = p + 4;
	f->function_len = (size_t)(end - f->function);
	return f->file_len > 0;
}

/* The next whole line; an empty one at the end, since a line the dump
 * cut short could read as another (line 2 of line 20). */
static struct dump_line next_line(const char *dump, size_t len, size_t *pos)
{
	struct dump_line l = {dump + *pos, 0};
	const char *nl = memchr(l.s, '\n', len - *pos);

	if (!nl) {
		*pos = len;
		return l;
	}
	l.n = (size_t)(nl - l.s);
	*pos += l.n + 1;
	return l;
}

/* The frames of the thread whose header ends at pos: counts them into
 * *depth, past the leading ones of skip_dir and up to the next one of
 * skip_dir, and encodes the first PLOOM_STACK_FRAMES_MAX of those if b is
 * not NULL. */
static void dump_frames(struct ploom_buf *b, const char *dump, size_t len, size_t pos,
			const char *skip_dir, const char *cwd, long *depth)
{
	int skipping = skip_dir && *skip_dir;
	struct dump_frame f;

	*depth = 0;
	while (pos < len) {
		struct dump_line l = next_line(dump, len, &pos);
		char *abs = NULL;

		if (dump_thread(l) || !l.n)
			break;
		if (!dump_frame(&f, l))
			continue;
		if (skip_dir && *skip_dir && f.file_len >= strlen(skip_dir) &&
		    !memcmp(f.file, skip_dir, strlen(skip_dir))) {
			if (skipping)
				continue;
			/* the code that called the scenario: the worker's own */
			break;
		}
		skipping = 0;
		if (b && *depth < PLOOM_STACK_FRAMES_MAX) {
			/* Python's relative names are the worker's folder's;
			 * "<string>" and the like name no file */
			if (cwd && f.file[0] != '/' && f.file[0] != '<' &&
			    asprintf(&abs, "%s/%.*s", cwd, (int)f.file_len, f.file) >= 0) {
				f.file = abs;
				f.file_len = strlen(abs);
			}
			ploom_enc_frame(b, f.file, f.file_len, f.line, f.function, f.function_len);
			free(abs);
		}
		++*depth;
	}
}

void ploom_enc_stacks(struct ploom_buf *b, const char *dump, size_t len,
		      const struct ploom_dump_task *tasks, size_t ntasks, int complete,
		      const char *skip_dir, const char *cwd)
{
	size_t i;

	if (ntasks > PLOOM_STACK_TASKS_MAX)
		ntasks = PLOOM_STACK_TASKS_MAX;
	for (i = 0; i < ntasks; i++) {
		size_t pos = 0, found = 0;
		long depth;
		int seen = 0;

		if (tasks[i].finished) {
			ploom_enc_stack(b, (int)i, PLOOM_STACK_FINISHED, 0);
			continue;
		}
		while (tasks[i].ident && pos < len) {
			struct dump_line l = next_line(dump, len, &pos);
			if (dump_thread(l) == tasks[i].ident) {
				seen = 1;
				found = pos;
				break;
			}
		}
		if (!seen) {
			ploom_enc_stack(b, (int)i, complete ? PLOOM_STACK_UNSTARTED
							     : PLOOM_STACK_UNKNOWN, 0);
			continue;
		}
		dump_frames(NULL, dump, len, found, skip_dir, cwd, &depth);
		ploom_enc_stack(b, (int)i, PLOOM_STACK_RUNNING, depth);
		dump_frames(b, dump, len, found, skip_dir, cwd, &depth);
	}
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
	if (p->kind == PLOOM_POLICY_FOLLOW) {
		ploom_buf_addf(b, " %zu", p->nfollow);
		for (i = 0; i < p->nfollow; i++)
			ploom_buf_addf(b, " %d", p->follow[i]);
	}
	ploom_buf_add(b, "\n", 1);
}

void ploom_run_cmd_release(struct ploom_run_cmd *cmd)
{
	free(cmd->choices);
	free(cmd->sleep);
	free(cmd->policy.follow);
	memset(cmd, 0, sizeof(*cmd));
}

/* The next space-separated decimal of line[*pos..len) within [min, max]. */
static int next_long(long *out, const char *line, size_t len, size_t *pos, long min, long max)
{
	size_t i = *pos;
	long v = 0;
	int digits = 0, neg = 0;

	if (i >= len || line[i] != ' ')
		return -1;
	/* a sign only where negative numbers are allowed */
	if (min < 0 && i + 1 < len && line[i + 1] == '-') {
		neg = 1;
		i++;
	}
	for (i++; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
		if (++digits > 18)
			return -1;
		v = v * 10 + (line[i] - '0');
	}
	if (neg)
		v = -v;
	if (!digits || v < min || v > max || (i < len && line[i] != ' '))
		return -1;
	*out = v;
	*pos = i;
	return 0;
}

/* A count, then that many task ids; forced (choices): -1-T for task T
 * too. */
static int read_ids(int **out, size_t *out_n, const char *line, size_t len, size_t *pos,
		    long max_count, int forced)
{
	long n, v;
	size_t i;

	if (next_long(&n, line, len, pos, 0, max_count) < 0)
		return -1;
	*out = malloc((size_t)(n ? n : 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (i = 0; i < (size_t)n; i++) {
		if (next_long(&v, line, len, pos, forced ? -1 - (long)PLOOM_MAX_TASK_ID : 0,
			      PLOOM_MAX_TASK_ID) < 0)
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
	if (kind == PLOOM_POLICY_FOLLOW)
		return read_ids(&out->follow, &out->nfollow, line, len, pos,
				PLOOM_POLICY_MAX_FOLLOW, 0);
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
	    read_ids(&out->choices, &out->nchoices, line, len, &pos, PLOOM_MAX_CHOICES, 1) < 0 ||
	    read_ids(&out->sleep, &out->nsleep, line, len, &pos, PLOOM_MAX_TASK_ID, 0) < 0 ||
	    read_policy(&out->policy, line, len, &pos) < 0 || pos != len)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "bad run command");
	return 0;
}

void ploom_enc_points(struct ploom_buf *b, const char *const *keys, size_t n)
{
	size_t i;

	ploom_buf_addf(b, "points %zu", n);
	for (i = 0; i < n; i++) {
		ploom_buf_add(b, " ", 1);
		ploom_buf_add(b, keys[i], strlen(keys[i]));
	}
	ploom_buf_add(b, "\n", 1);
}

static int key_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':';
}

void ploom_points_release(struct ploom_points *points)
{
	free(points->text);
	free(points->keys);
	memset(points, 0, sizeof(*points));
}

int ploom_points_parse(struct ploom_points *out, const char *data, size_t len,
		       struct ploom_err *err)
{
	const char *why = NULL;
	size_t pos = 6, i, start;
	long n;

	memset(out, 0, sizeof(*out));
	if (len < 8 || memcmp(data, "points", 6) || data[len - 1] != '\n' ||
	    next_long(&n, data, len - 1, &pos, 1, PLOOM_PLAIN_POINTS_MAX) < 0)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "bad points list: not 'points N' and a newline");
	out->text = malloc(len);
	out->keys = malloc((size_t)n * sizeof(*out->keys));
	if (!out->text || !out->keys)
		return ploom_err_oom(err);
	memcpy(out->text, data, len);
	/* each key: one space, then key bytes up to a space or the newline */
	for (i = pos; i < len - 1 && !why;) {
		if (data[i] != ' ') {
			why = "a key holds a byte that no site key does";
			break;
		}
		out->text[i++] = 0;
		for (start = i; i < len - 1 && data[i] != ' '; i++)
			if (!key_byte(data[i]))
				why = "a key holds a byte that no site key does";
		if (i == start)
			why = "an empty key";
		else if (i - start > PLOOM_POINT_KEY_MAX)
			why = "a key longer than any site key";
		else if (out->n == (size_t)n)
			why = "more keys than it counts";
		else
			out->keys[out->n++] = out->text + start;
	}
	if (!why && out->n != (size_t)n)
		why = "fewer keys than it counts";
	out->text[len - 1] = 0;
	if (why)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "bad points list: %s", why);
	return 0;
}
