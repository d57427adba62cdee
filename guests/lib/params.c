// SPDX-License-Identifier: Apache-2.0
/* Parameter-block parser. */
#include "lib.h"
#include "params.h"

static char params_buf[PARAMS_MAX_SIZE];
static const char *keys[PARAMS_MAX_ENTRIES];
static const char *values[PARAMS_MAX_ENTRIES];
static u32 nparams;

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static char *trim(char *s, char *end)
{
	while (s < end && is_space(*s))
		s++;
	while (end > s && is_space(end[-1]))
		end--;
	*end = '\0';
	return s;
}

void params_init(const char *block)
{
	char *line, *eol, *eq, *end;
	size_t len;

	nparams = 0;
	params_buf[0] = '\0';
	if (!block)
		return;
	len = strnlen(block, PARAMS_MAX_SIZE - 1);
	memcpy(params_buf, block, len);
	params_buf[len] = '\0';
	end = params_buf + len;

	for (line = params_buf; line < end; line = eol + 1) {
		for (eol = line; eol < end && *eol != '\n'; eol++)
			;
		*eol = '\0';
		for (eq = line; eq < eol && *eq != '='; eq++)
			;
		if (eq == eol || nparams == PARAMS_MAX_ENTRIES)
			continue;
		keys[nparams] = trim(line, eq);
		values[nparams] = trim(eq + 1, eol);
		if (*keys[nparams])
			nparams++;
	}
}

const char *param_str(const char *key)
{
	u32 i;

	/* Last one wins, like a later config line overriding an earlier one. */
	for (i = nparams; i-- > 0;) {
		if (!strcmp(keys[i], key))
			return values[i];
	}
	return NULL;
}

const char *param_str_default(const char *key, const char *def)
{
	const char *v = param_str(key);

	return v ? v : def;
}

bool parse_u64(const char *s, u64 *out)
{
	u64 v = 0, base = 10, shift = 0;
	const char *p = s;
	unsigned d;

	if (!s || !*s)
		return false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!*p)
			return false;
	}
	for (; *p; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else if (*p == '_')
			continue;
		else
			break;
		if (v > (~0ul - d) / base)
			return false;
		v = v * base + d;
	}
	if (p == s)
		return false;
	if (*p) {
		if (*p == 'K' || *p == 'k')
			shift = 10;
		else if (*p == 'M')
			shift = 20;
		else if (*p == 'G')
			shift = 30;
		else
			return false;
		p++;
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
		if (*p)
			return false;
		if (v > (~0ul >> shift))
			return false;
		v <<= shift;
	}
	*out = v;
	return true;
}

u64 param_u64(const char *key, u64 def)
{
	u64 v;

	if (!parse_u64(param_str(key), &v))
		return def;
	return v;
}

u32 param_count(void)
{
	return nparams;
}

bool param_entry(u32 i, const char **key, const char **value)
{
	if (i >= nparams)
		return false;
	*key = keys[i];
	*value = values[i];
	return true;
}
