/* ploom-show - render a trace for a person.
 *
 * Reads one trace (a file, or standard input) and writes it on standard
 * output in one of the formats of lib/format.h: lib/format/render's
 * table (the default), lib/format/html's page, or the trace itself as
 * lib/json writes it.  A filter: when the reader of the pipe goes away
 * (EPIPE) it stops quietly.  man/ploom-show.1 is the reference. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "format.h"
#include "format/render.h"
#include "trace.h"

#define PROG "ploom-show"

const char cli_prog[] = PROG;
/* The usage around the formats, which their registry words
 * (ploom_format_help()); build_usage() puts them together. */
#define USAGE_HEAD \
	"usage: ploom-show [--format=FORMAT] [--color=WHEN] [-w N] [TRACE]\n" \
	"       ploom-show -h | --help | -V | --version\n" \
	"\n" \
	"        --format=FORMAT          "
#define USAGE_TAIL \
	"        --color=WHEN             text: never (default), always, or auto (when stdout is a\n" \
	"                                 terminal)\n" \
	"    -w, --width=N                text: cut values so that a cell fits N characters (default\n" \
	"                                 28, min 8)\n" \
	"\n" \
	"TRACE is a trace file; without it, or with -, the trace is read from standard input.\n"

static char usage_text[sizeof(USAGE_HEAD) + 1024 + sizeof(USAGE_TAIL)];
const char *const cli_usage = usage_text;

/* Puts the usage together, before anything can print it. */
static void build_usage(void)
{
	char help[1024];

	ploom_format_help(help, sizeof(help));
	cli_usage_build(usage_text, sizeof(usage_text), USAGE_HEAD, help, USAGE_TAIL, 90);
}

enum { OPT_COLOR = CLI_OPT_OWN, OPT_FORMAT };

static const struct option options[] = {
	{"color", required_argument, NULL, OPT_COLOR},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"width", required_argument, NULL, 'w'},
	CLI_OPTIONS_END,
};

/* --color=auto: a terminal that can show colours, unless NO_COLOR is set
 * (https://no-color.org). */
static int color_auto(void)
{
	const char *term = getenv("TERM");
	const char *no_color = getenv("NO_COLOR");

	if (no_color && *no_color)
		return 0;
	return isatty(STDOUT_FILENO) && term && *term && strcmp(term, "dumb");
}

/* --color=WHEN into *color: 0 never, 1 always, auto as color_auto()
 * says; -1 for another WHEN. */
static int parse_color(int *color, const char *when)
{
	if (!strcmp(when, "never"))
		*color = 0;
	else if (!strcmp(when, "always"))
		*color = 1;
	else if (!strcmp(when, "auto"))
		*color = color_auto();
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct ploom_trace *trace = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_render_opts ropts = {0, PLOOM_RENDER_WIDTH, NULL};
	const char *path = "-";
	const struct ploom_format *format = ploom_format_default;
	long v;
	int c, ret = PLOOM_EXIT_USAGE;

	build_usage();
	/* a closed pipe must be an error we can see (EPIPE), not a signal */
	signal(SIGPIPE, SIG_IGN);
	while ((c = cli_getopt(argc, argv, ":w:hV", options)) != -1) {
		switch (c) {
		case OPT_COLOR:
			if (parse_color(&ropts.color, optarg) < 0) {
				ret = cli_usage_error("invalid --color", optarg);
				goto done;
			}
			break;
		case OPT_FORMAT:
			format = ploom_format_find(optarg);
			if (!format) {
				ret = cli_usage_error("invalid --format", optarg);
				goto done;
			}
			break;
		case 'w':
			if (ploom_args_long(&v, optarg, PLOOM_RENDER_MIN_WIDTH, 100000) < 0) {
				ret = cli_usage_error("invalid --width", optarg);
				goto done;
			}
			ropts.width = (int)v;
			break;
		default:
			if (!cli_common_option(&ret, NULL, c, argv))
				goto done;
			break;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		ret = cli_usage_error("unexpected argument", argv[optind]);
		goto done;
	}

	if (cli_read_trace(&trace, path) < 0) {
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (format->write(stdout, trace, &ropts, &err) < 0) {
		int e = errno;
		/* the reader stopped reading (| head): nothing is wrong */
		if (err.kind == PLOOM_ERR_SYSTEM && e == EPIPE) {
			ret = PLOOM_EXIT_OK;
			goto done;
		}
		if (err.kind == PLOOM_ERR_NOMEM)
			fprintf(stderr, PROG ": out of memory\n");
		else if (err.kind == PLOOM_ERR_SYSTEM)
			fprintf(stderr, PROG ": cannot write to standard output: %s\n", strerror(e));
		else
			fprintf(stderr, PROG ": cannot write the trace: %s\n", err.msg);
		ret = cli_exit_code(&err);
		goto done;
	}
	ret = PLOOM_EXIT_OK;
done:
	ploom_trace_free(trace);
	return cli_exit(ret, "to standard output", CLI_EPIPE_QUIET);
}
