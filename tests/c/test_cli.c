/* Tests of what the utilities share (cmd/cli.c), linked into this program
 * as into each utility: how an error's kind becomes an exit status. */
#include <stdio.h>
#include <unistd.h>

#include "../../cmd/cli.h"
#include "check.h"

const char cli_prog[] = "test_cli";
const char cli_usage[] = "usage: test_cli\n";

static void each_error_kind_has_its_exit_code(void)
{
	static const struct {
		enum ploom_err_kind kind;
		int exit;
	} cases[] = {
		{PLOOM_ERR_NOMEM, 2},
		{PLOOM_ERR_INPUT, 2},
		{PLOOM_ERR_WORKER, 2},
		{PLOOM_ERR_SYSTEM, 2},
		{PLOOM_ERR_INTERRUPTED, 2},
		{PLOOM_ERR_DIVERGENCE, 4},
		{PLOOM_ERR_INCOMPLETE, 3},
		/* a failure that filled no error is still a failure */
		{PLOOM_ERR_NONE, 2},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_err err = {cases[i].kind, "x"};

		if (!CHECK_INT(cli_exit_code(&err), cases[i].exit))
			printf("  case %zu: kind %d\n", i, (int)cases[i].kind);
	}
	CHECK_INT(PLOOM_EXIT_USAGE, 2);
	CHECK_INT(PLOOM_EXIT_INCOMPLETE, 3);
	CHECK_INT(PLOOM_EXIT_DIVERGENCE, 4);
}

static void cli_fail_prints_the_message_and_returns_the_exit_code_of_its_kind(void)
{
	struct ploom_err err = {PLOOM_ERR_DIVERGENCE, "step 3 differs"};
	char line[128];
	FILE *f = tmpfile();
	int saved = dup(2);

	if (!CHECK(f != NULL && saved >= 0))
		return;
	/* stderr is unbuffered: each line is in f once cli_fail returns */
	dup2(fileno(f), 2);
	CHECK_INT(cli_fail(&err, "prefix: "), PLOOM_EXIT_DIVERGENCE);
	ploom_err_oom(&err);
	CHECK_INT(cli_fail(&err, ""), PLOOM_EXIT_USAGE);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	CHECK_STR(line, "test_cli: prefix: step 3 differs\n");
	CHECK(fgets(line, sizeof(line), f) != NULL);
	CHECK_STR(line, "test_cli: out of memory\n");
	fclose(f);
}

int main(void)
{
	each_error_kind_has_its_exit_code();
	cli_fail_prints_the_message_and_returns_the_exit_code_of_its_kind();
	return check_report();
}
