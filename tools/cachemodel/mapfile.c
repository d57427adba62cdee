// SPDX-License-Identifier: GPL-2.0-or-later
/* Parser of the plugin's input file (mapfile.h). */
#include "mapfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SHIFT 12

static int fail(char *err, int errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, (size_t)errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_line(struct cm_config *cfg, char *line, char *err, int errlen)
{
	char kw[16], a[64], b[64];
	unsigned long long x, y, z;
	int n, id;

	if (sscanf(line, "%15s", kw) != 1 || kw[0] == '#')
		return 0;
	if (!strcmp(kw, "llc")) {
		if (sscanf(line, "llc %lli %lli %lli %63s %lli", &x, &y, &z, a,
		           (long long *)&cfg->llc_seed) != 5)
			return fail(err, errlen,
			            "llc: want <size> <ways> <line> lru|random <seed>");
		cfg->llc_size = x;
		cfg->llc_ways = (uint32_t)y;
		cfg->llc_line = (uint32_t)z;
		if (!strcmp(a, "lru"))
			cfg->llc_repl = CM_LRU;
		else if (!strcmp(a, "random"))
			cfg->llc_repl = CM_RANDOM;
		else
			return fail(err, errlen, "llc: unknown replacement '%s'", a);
	} else if (!strcmp(kw, "l1d")) {
		if (sscanf(line, "l1d %lli %lli %lli", &x, &y, &z) != 3)
			return fail(err, errlen, "l1d: want <size> <ways> <line>");
		cfg->l1_size = x;
		cfg->l1_ways = (uint32_t)y;
		cfg->l1_line = (uint32_t)z;
	} else if (!strcmp(kw, "dram")) {
		char *p = line + 4;
		char *end;

		cfg->row_shift = (uint32_t)strtoull(p, &end, 0);
		if (end == p || !cfg->row_shift)
			return fail(err, errlen, "dram: want <row_shift> <bank bit>...");
		for (p = end;; p = end) {
			x = strtoull(p, &end, 0);
			if (end == p)
				break;
			if (cfg->dram_nbits == CM_MAX_BANK_BITS)
				return fail(err, errlen, "dram: more than %d bank bits",
				            CM_MAX_BANK_BITS);
			cfg->dram_bits[cfg->dram_nbits++] = (uint32_t)x;
		}
	} else if (!strcmp(kw, "ram")) {
		if (sscanf(line, "ram %lli %lli", &x, &y) != 2 || !y || (x | y) & 0xfff)
			return fail(err, errlen, "ram: want <base> <size>, page aligned");
		cfg->ram_base = x;
		cfg->ram_size = y;
		free(cfg->page_owner);
		cfg->page_owner = calloc(y >> PAGE_SHIFT, 1);
		if (!cfg->page_owner)
			return fail(err, errlen, "ram: out of memory");
	} else if (!strcmp(kw, "owner")) {
		if (sscanf(line, "owner %i %7s %63s", &id, a, b) != 3 || id <= 0 ||
		    id >= CM_MAX_OWNERS)
			return fail(err, errlen, "owner: want <id 1..%d> <kind> <name>",
			            CM_MAX_OWNERS - 1);
		snprintf(cfg->owner_kind[id], sizeof(cfg->owner_kind[id]), "%s", a);
		snprintf(cfg->owner_name[id], sizeof(cfg->owner_name[id]), "%s", b);
		if ((uint32_t)id + 1 > cfg->nowners)
			cfg->nowners = (uint32_t)id + 1;
	} else if (!strcmp(kw, "cpu")) {
		if (sscanf(line, "cpu %lli %i", &x, &id) != 2 || x >= CM_MAX_CPUS || id < 0 ||
		    id >= CM_MAX_OWNERS)
			return fail(err, errlen, "cpu: want <index> <owner id>");
		cfg->cpu_owner[x] = id;
	} else if (!strcmp(kw, "percpu")) {
		if (sscanf(line, "percpu %lli %lli", &x, &y) != 2 || !y)
			return fail(err, errlen, "percpu: want <address> <stride>");
		cfg->percpu = x;
		cfg->percpu_stride = y;
	} else if (!strcmp(kw, "timing")) {
		struct cm_timing_params *t = &cfg->tp;
		unsigned long long v[7];

		if (sscanf(line, "timing %lli %lli %lli %lli %lli %lli %lli", &v[0], &v[1], &v[2],
		           &v[3], &v[4], &v[5], &v[6]) != 7 ||
		    !v[5] || v[6] < v[5])
			return fail(err, errlen,
			            "timing: want <cpi> <llc hit> <row empty> <row hit> <row "
			            "conflict> <line> <window> (ps, window >= line > 0)");
		t->cpi_ps = v[0];
		t->llc_hit_ps = v[1];
		t->row_ps[CM_ROW_EMPTY] = v[2];
		t->row_ps[CM_ROW_HIT] = v[3];
		t->row_ps[CM_ROW_CONFLICT] = v[4];
		t->line_ps = v[5];
		t->window_ps = v[6];
		cfg->timing = true;
	} else if (!strcmp(kw, "timing_l1d")) {
		if (sscanf(line, "timing_l1d %lli %lli %lli", &x, &y, &z) != 3)
			return fail(err, errlen, "timing_l1d: want <size> <ways> <line>");
		cfg->tl1_size = x;
		cfg->tl1_ways = (uint32_t)y;
		cfg->tl1_line = (uint32_t)z;
	} else if (!strcmp(kw, "lockstep")) {
		if (sscanf(line, "lockstep %lli", &x) != 1 || !x)
			return fail(err, errlen, "lockstep: want <quantum ps> (> 0)");
		cfg->lockstep_ps = x;
	} else if (!strcmp(kw, "regulator")) {
		if (sscanf(line, "regulator %lli %lli %lli", &x, &y, &z) != 3 || x >= CM_MAX_CPUS ||
		    !y || !z)
			return fail(err, errlen, "regulator: want <cpu> <address> <period ns>");
		cfg->reg_addr[x] = y;
		cfg->reg_period_ns[x] = z;
	} else if (!strcmp(kw, "range")) {
		if (sscanf(line, "range %lli %lli %i%n", &x, &y, &id, &n) != 3 || id <= 0 ||
		    id >= CM_MAX_OWNERS)
			return fail(err, errlen, "range: want <base> <size> <owner id>");
		if (!cfg->page_owner || x < cfg->ram_base || y > cfg->ram_size ||
		    x - cfg->ram_base > cfg->ram_size - y || (x | y) & 0xfff)
			return fail(err, errlen, "range 0x%llx+0x%llx: not page aligned inside ram",
			            x, y);
		memset(cfg->page_owner + ((x - cfg->ram_base) >> PAGE_SHIFT), id, y >> PAGE_SHIFT);
	} else {
		return fail(err, errlen, "unknown keyword '%s'", kw);
	}
	return 0;
}

int cm_config_load(const char *path, struct cm_config *cfg, char *err, int errlen)
{
	char line[512], msg[200];
	int lineno = 0;
	FILE *f = fopen(path, "r");

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->owner_name[0], sizeof(cfg->owner_name[0]), "other");
	snprintf(cfg->owner_kind[0], sizeof(cfg->owner_kind[0]), "none");
	cfg->nowners = 1;
	if (!f)
		return fail(err, errlen, "%s: cannot open", path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (parse_line(cfg, line, msg, sizeof(msg))) {
			fclose(f);
			return fail(err, errlen, "%s:%d: %s", path, lineno, msg);
		}
	}
	fclose(f);
	if (!cfg->llc_size)
		return fail(err, errlen, "%s: no llc line", path);
	if (!cfg->page_owner)
		return fail(err, errlen, "%s: no ram line", path);
	return 0;
}
