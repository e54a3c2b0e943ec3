/* Tests of lib/err: an error carries a kind and a one-line message. */
#include <string.h>

#include "../../lib/err.h"
#include "check.h"

static void err_set_fills_the_kind_and_the_message(void)
{
	struct ploom_err err = {PLOOM_ERR_NONE, ""};

	CHECK_INT(ploom_err_set(&err, PLOOM_ERR_INPUT, "missing field '%s'", "format"), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "missing field 'format'");
	CHECK_INT(ploom_err_set(NULL, PLOOM_ERR_WORKER, "ignored"), -1);
	/* a message that names two long paths is whole */
	ploom_err_set(&err, PLOOM_ERR_INPUT, "'%300s' and '%300s'", "a", "b");
	CHECK_INT(strlen(err.msg), 609);
	/* a longer message is cut to the buffer */
	ploom_err_set(&err, PLOOM_ERR_SYSTEM, "%2000s", "x");
	CHECK(strlen(err.msg) == sizeof(err.msg) - 1);
}

static void err_oom_fills_the_kind_and_a_fixed_message(void)
{
	struct ploom_err err;

	/* whatever was there before is replaced, the terminator included */
	memset(&err, 'x', sizeof(err));
	err.kind = PLOOM_ERR_WORKER;
	CHECK_INT(ploom_err_oom(&err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_NOMEM);
	CHECK_STR(err.msg, "out of memory");
	CHECK_INT(ploom_err_oom(NULL), -1);
}

int main(void)
{
	err_set_fills_the_kind_and_the_message();
	err_oom_fills_the_kind_and_a_fixed_message();
	return check_report();
}
