/* The protocol's byte-level encoding; event.h documents the records. */
#include "event.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
