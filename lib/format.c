/* The registry of formats; format.h documents it. */
#include "format.h"

#include <string.h>

#define ROW(name, help) {#name, help, ploom_format_##name},
static const struct ploom_format formats[] = {PLOOM_FORMATS(ROW)};
#undef ROW

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const struct ploom_format *const ploom_format_default = &formats[0];

const struct ploom_format *ploom_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

void ploom_format_help(char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < NFORMATS && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s (%s%s)",
					i == 0 ? "" : i + 1 < NFORMATS ? ", " : ", or ",
					formats[i].name, i == 0 ? "default: " : "", formats[i].help);
}
