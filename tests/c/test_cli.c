/* Tests of what the utilities share (cmd/cli.c), linked into this program
 * as into each utility: how an error's kind becomes an exit status. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../cmd/cli.h"
#include "check.h"

const char cli_prog[] = "test_cli";
const char *const cli_usage = "usage: test_cli\n";

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

/* The text cli_put_usage_as() writes, in buf. */
static const char *usage_as(char *buf, size_t size, const char *usage, const char *name)
{
	FILE *f = tmpfile();
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return buf;
	cli_put_usage_as(f, usage, "prog", name);
	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void the_usage_names_the_command_it_is_shown_as(void)
{
	static const char usage[] =
		"usage: prog [-a] [-b N]\n"
		"            [-c] TARGET\n"
		"       prog --check TARGET\n"
		"       prog -h | --help\n"
		"\n"
		"    -a           prog does a\n"
		"                 then more\n"
		"usage: prog is only a word here\n";
	char buf[512];

	CHECK_STR(usage_as(buf, sizeof(buf), usage, NULL), usage);
	CHECK_STR(usage_as(buf, sizeof(buf), usage, ""), usage);
	CHECK_STR(usage_as(buf, sizeof(buf), usage, "python -m ploom check"),
		  "usage: python -m ploom check [-a] [-b N]\n"
		  "                             [-c] TARGET\n"
		  "       python -m ploom check --check TARGET\n"
		  "       python -m ploom check -h | --help\n"
		  "\n"
		  "    -a           prog does a\n"
		  "                 then more\n"
		  "usage: prog is only a word here\n");
	/* a shorter name, and a text without a final newline */
	CHECK_STR(usage_as(buf, sizeof(buf), "usage: prog [-a]\n            [-b]", "p"),
		  "usage: p [-a]\n"
		  "         [-b]");
}

/* A registry's words wrap at the width under the option column, never
 * inside a word; a buffer too small cuts the usage, never overruns. */
static void a_usage_is_put_together_around_a_registrys_words(void)
{
	static const char head[] =
		"usage: prog [--kind=K]\n"
		"\n"
		"        --kind=K                 ";
	char buf[512], small[40];

	cli_usage_build(buf, sizeof(buf), head,
			"alpha: one thing; beta: another thing, longer; gamma: the last", "tail\n", 60);
	CHECK_STR(buf, "usage: prog [--kind=K]\n"
		       "\n"
		       "        --kind=K                 alpha: one thing; beta:\n"
		       "                                 another thing, longer;\n"
		       "                                 gamma: the last\n"
		       "tail\n");
	/* a word longer than the room left stands alone on its line */
	cli_usage_build(buf, sizeof(buf), head, "a an-unbreakable-word-longer-than-the-room b", "", 50);
	CHECK_STR(buf, "usage: prog [--kind=K]\n"
		       "\n"
		       "        --kind=K                 a\n"
		       "                                 an-unbreakable-word-longer-than-the-room\n"
		       "                                 b\n");
	memset(small, 'x', sizeof(small));
	cli_usage_build(small, sizeof(small) - 8, head, "alpha beta", "tail\n", 60);
	CHECK_INT(strlen(small), sizeof(small) - 9);
	CHECK_INT(small[sizeof(small) - 7], 'x');
}

int main(void)
{
	each_error_kind_has_its_exit_code();
	cli_fail_prints_the_message_and_returns_the_exit_code_of_its_kind();
	the_usage_names_the_command_it_is_shown_as();
	a_usage_is_put_together_around_a_registrys_words();
	return check_report();
}
