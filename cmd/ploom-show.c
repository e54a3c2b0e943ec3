/* ploom-show - render a trace for a person.
 *
 * Reads one trace (a file, or standard input) and prints lib/render's
 * table of it on standard output, or lib/html's page, or the trace itself
 * as lib/json writes it.  A filter: when the reader of the pipe goes away
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
#include "html.h"
#include "json.h"
#include "render.h"
#include "replay.h"
#include "trace.h"

#define PROG "ploom-show"

const char cli_prog[] = PROG;
const char *const cli_usage =
	"usage: ploom-show [--format=FORMAT] [--color=WHEN] [-w N] [TRACE]\n"
	"       ploom-show -h | --help | -V | --version\n"
	"\n"
	"        --format=FORMAT          text (default), html (one self-contained page), or json\n"
	"                                 (the trace as ploom writes it)\n"
	"        --color=WHEN             text: never (default), always, or auto (when stdout is a\n"
	"                                 terminal)\n"
	"    -w, --width=N                text: cut values so that a cell fits N characters (default\n"
	"                                 28, min 8)\n"
	"\n"
	"TRACE is a trace file; without it, or with -, the trace is read from standard input.\n";

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

enum format { FORMAT_TEXT, FORMAT_HTML, FORMAT_JSON };

/* Writes the trace to stdout in format f; as the lib/ function it calls. */
static int show(enum format f, struct ploom_trace *trace, const struct ploom_render_opts *ropts,
		struct ploom_err *err)
{
	switch (f) {
	case FORMAT_HTML:
		return ploom_html_write(stdout, trace, err);
	case FORMAT_JSON:
		/* as read: no path rewritten for this checkout */
		return ploom_trace_write(stdout, trace, err);
	case FORMAT_TEXT:
		break;
	}
	/* "replay runs" names the file a replay from here would run, by
	 * ploom-replay's own rule, or why it would run nothing */
	struct ploom_render_opts here = *ropts;
	struct ploom_err why = {0, ""};

	if (ploom_replay_place(trace, &why) < 0) {
		if (why.kind == PLOOM_ERR_NOMEM)
			return ploom_err_oom(err);
		here.replay_refused = why.msg;
	}
	return ploom_render_trace(stdout, trace, &here, err);
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

/* --format=NAME into *format; -1 for an unknown NAME. */
static int parse_format(enum format *format, const char *name)
{
	if (!strcmp(name, "text"))
		*format = FORMAT_TEXT;
	else if (!strcmp(name, "html"))
		*format = FORMAT_HTML;
	else if (!strcmp(name, "json"))
		*format = FORMAT_JSON;
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
	enum format format = FORMAT_TEXT;
	long v;
	int c, ret = PLOOM_EXIT_USAGE;

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
			if (parse_format(&format, optarg) < 0) {
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
	if (show(format, trace, &ropts, &err) < 0) {
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
