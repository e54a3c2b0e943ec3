/* The json format: the trace itself, as ploom writes it (json.h), with
 * no path rewritten for this checkout. */
#include "formats.h"
#include "json.h"

int ploom_format_json(FILE *out, struct ploom_trace *trace,
		      const struct ploom_render_opts *opts, struct ploom_err *err)
{
	(void)opts;
	return ploom_trace_write(out, trace, err);
}
