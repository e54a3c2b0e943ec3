/* ploom-show - render a trace for a person.
 *
 * Reads one trace (a file, or standard input) and prints lib/render's
 * table of it on standard output.  A filter: when the reader of the
 * pipe goes away (EPIPE) it stops quietly.  man/ploom-show.1 is the
 * reference. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "err.h"
#include "json.h"
#include "render.h"
#include "trace.h"
#include "version.h"

#define PROG "ploom-show"

static const char usage_text[] =
	"usage: ploom-show [--color=WHEN] [-w N] [TRACE]\n"
	"       ploom-show -h | --help | -V | --version\n"
	"\n"
	"        --color=WHEN             never (default), always, or auto (when stdout is a terminal)\n"
	"    -w, --width=N                cut values so that a cell fits N characters (default 28, min 8)\n"
	"\n"
	"TRACE is a trace file; without it, or with -, the trace is read from standard input.\n";

enum { OPT_COLOR = 256 };

static const struct option options[] = {
	{"color", required_argument, NULL, OPT_COLOR},
	{"width", required_argument, NULL, 'w'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* "ploom-show: WHAT 'ARG'" (or just WHAT), then the usage. */
static int usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, PROG ": %s '%s'\n", what, arg);
	else
		fprintf(stderr, PROG ": %s\n", what);
	fputs(usage_text, stderr);
	return PLOOM_EXIT_USAGE;
}

/* The option getopt stopped at: "-x" for a short one (optopt), else the
 * long one as written. */
static const char *option_name(char **argv, int opt)
{
	static char shortopt[3] = "-?";

	if (!opt)
		return argv[optind - 1];
	shortopt[1] = (char)opt;
	return shortopt;
}

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

int main(int argc, char **argv)
{
	struct ploom_trace *trace = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_render_opts ropts = {0, PLOOM_RENDER_WIDTH};
	const char *path = "-";
	long v;
	int c, ret = PLOOM_EXIT_USAGE;

	/* a closed pipe must be an error we can see (EPIPE), not a signal */
	signal(SIGPIPE, SIG_IGN);
	/* getopt's own messages would name the path we were run by */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:hV", options, NULL)) != -1) {
		switch (c) {
		case OPT_COLOR:
			if (!strcmp(optarg, "never")) {
				ropts.color = 0;
			} else if (!strcmp(optarg, "always")) {
				ropts.color = 1;
			} else if (!strcmp(optarg, "auto")) {
				ropts.color = color_auto();
			} else {
				ret = usage_error("invalid --color", optarg);
				goto done;
			}
			break;
		case 'w':
			if (ploom_args_long(&v, optarg, PLOOM_RENDER_MIN_WIDTH, 100000) < 0) {
				ret = usage_error("invalid --width", optarg);
				goto done;
			}
			ropts.width = (int)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = PLOOM_EXIT_OK;
			goto done;
		case 'V':
			printf(PROG " (ploom) " PLOOM_VERSION "\n");
			ret = PLOOM_EXIT_OK;
			goto done;
		case ':':
			ret = usage_error("missing value for option", option_name(argv, optopt));
			goto done;
		default:
			ret = usage_error("unknown option", option_name(argv, optopt));
			goto done;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		ret = usage_error("unexpected argument", argv[optind]);
		goto done;
	}

	if (ploom_trace_read_file(&trace, path, &err) < 0) {
		/* named as ploom-replay and ploom-minimize name it */
		fprintf(stderr, PROG ": cannot read trace '%s': %s\n",
			strcmp(path, "-") ? path : "<stdin>", err.msg);
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (ploom_render_trace(stdout, trace, &ropts, &err) < 0) {
		int e = errno;
		/* the reader stopped reading (| head): nothing is wrong */
		if (e == EPIPE) {
			ret = PLOOM_EXIT_OK;
			goto done;
		}
		if (!strcmp(err.msg, "out of memory"))
			fprintf(stderr, PROG ": out of memory\n");
		else
			fprintf(stderr, PROG ": cannot write to standard output: %s\n", strerror(e));
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	ret = PLOOM_EXIT_OK;
done:
	ploom_trace_free(trace);
	/* the last buffered bytes are written here: a full disk shows now */
	errno = 0;
	if (fclose(stdout) == EOF && errno != EPIPE && ret == PLOOM_EXIT_OK) {
		fprintf(stderr, PROG ": cannot write to standard output: %s\n", strerror(errno));
		ret = PLOOM_EXIT_USAGE;
	}
	return ret;
}
