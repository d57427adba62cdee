/* SPDX-License-Identifier: Apache-2.0 */
#include "core/bootimg.h"

#include "arch/aarch64/crc32.h"
#include "arch/aarch64/timer.h"
#include "core/bootmem.h"
#include "core/config.h"
#include "core/payload.h"
#include "lib/format.h"
#include "lib/log.h"
#include "lib/string.h"

/* The payload as loaded with the image (core/payload.S, linker script);
 * empty when the hypervisor was built without PAYLOAD= (by hand), the images
 * then being placed in the staging window by other means. */
extern const char __payload_start[], __payload_end[];

static char bootimg_errors[CFG_MAX_CPUS][96];

const char *bootimg_vm_error(u32 vm)
{
	return vm < CFG_MAX_CPUS && bootimg_errors[vm][0] ? bootimg_errors[vm] : NULL;
}

/* Every configured image has its entry, at the place config.c expects. */
static void bootimg_match(const struct payload_header *h)
{
	u32 total = 0;

	for (u32 v = 0; v < cfg_system.nvms; v++) {
		const struct cfg_vm *c = &cfg_system.vms[v];

		for (u32 i = 0; i < c->nimage; i++) {
			const struct cfg_image *img = &c->images[i];
			const struct payload_entry *e = payload_find(h, v, img->name);

			if (!e || e->size != img->size || e->dst_ipa != img->dst_ipa ||
			    h->load_pa + e->offset != img->src_pa)
				panic(
				    "boot-image payload does not match the configuration: image %s "
				    "of vm %s (rebuild the image)",
				    img->name, c->name);
			total++;
		}
	}
	if (total != h->count)
		panic("boot-image payload holds %u images, the configuration %u", h->count, total);
}

static void bootimg_verify(const struct payload_header *h, const struct payload_entry *entries)
{
	for (u32 i = 0; i < h->count; i++) {
		const struct payload_entry *e = &entries[i];
		u32 crc = arch_crc32_update(0, (const void *)(uintptr_t)(h->load_pa + e->offset),
		                            e->size);

		if (crc == e->crc || bootimg_errors[e->vm][0])
			continue;
		fmt_snprintf(bootimg_errors[e->vm], sizeof(bootimg_errors[e->vm]),
		             "image %s is corrupted: crc32 %08x, expected %08x; not started",
		             e->name, crc, e->crc);
		log_info("vm %s: image %s is corrupted (crc32 %08x, expected %08x)",
		         cfg_system.vms[e->vm].name, e->name, crc, e->crc);
	}
}

void bootimg_install(void)
{
	const struct payload_header *h = (const void *)__payload_start;
	u64 len = (u64)(__payload_end - __payload_start);
	const char *err;
	static struct payload_entry entries[64];

	if (len == 0) {
		log_info(
		    "no image payload linked: guest images are expected in the staging window");
		return;
	}
	err = payload_parse(h, len);
	if (err)
		panic("boot-image payload at %lx: %s", (u64)(uintptr_t)h, err);
	bootimg_match(h);
	if (h->count > ARRAY_SIZE(entries))
		panic("boot-image payload holds %u images, at most %lu supported", h->count,
		      (u64)ARRAY_SIZE(entries));
	bootmem_require("the staged boot images", h->load_pa, h->data_size);
	/* The table lies in memory the data move may overwrite: keep a copy. */
	memcpy(entries, payload_entries(h), h->count * sizeof(entries[0]));
	{
		struct payload_header hdr = *h;
		u64 t0 = timer_now();

		memmove((void *)(uintptr_t)hdr.load_pa, __payload_start + hdr.data_offset,
		        hdr.data_size);
		bootimg_verify(&hdr, entries);
		t0 = timer_now() - t0;
		log_info("boot images: %u checked, %lu KiB moved to %lx in %lu us", hdr.count,
		         hdr.data_size >> 10, hdr.load_pa, timer_ticks_to_ns(t0) / 1000);
	}
}
