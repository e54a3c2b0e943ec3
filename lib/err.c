#include "err.h"

#include <stdio.h>
#include <string.h>

int ploom_err_set(struct ploom_err *err, enum ploom_err_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int ploom_err_oom(struct ploom_err *err)
{
	static const char msg[] = "out of memory";

	if (!err)
		return -1;
	err->kind = PLOOM_ERR_NOMEM;
	memcpy(err->msg, msg, sizeof(msg));
	return -1;
}
