/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/bootimg.h"

#include "arch/aarch64/crc32.h"
#include "core/boot/bootmem.h"
#include "core/boot/payload.h"
#include "core/config/config.h"
#include "lib/format.h"
#include "lib/log.h"
#include "lib/string.h"

/* The payload as loaded with the image (core/boot/payload.S, linker script);
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

static struct payload_entry bootimg_entries[64];
static struct payload_header bootimg_hdr;
static bool bootimg_is_placed;
static u32 bootimg_checked; /* bit v: VM v's images checked */

bool bootimg_placed(void)
{
	return bootimg_is_placed;
}

bool bootimg_check_vm(u32 vm)
{
	const struct payload_header *h = &bootimg_hdr;

	for (u32 i = 0; i < h->count && !(bootimg_checked & BIT(vm)); i++) {
		const struct payload_entry *e = &bootimg_entries[i];
		u32 crc;

		if (e->vm != vm)
			continue;
		crc = arch_crc32_update(0, (const void *)(uintptr_t)(h->load_pa + e->offset),
		                        e->size);
		if (crc == e->crc)
			continue;
		fmt_snprintf(bootimg_errors[vm], sizeof(bootimg_errors[vm]),
		             "image %s is corrupted: crc32 %08x, expected %08x; not started",
		             e->name, crc, e->crc);
		log_info("vm %s: %s", cfg_system.vms[vm].name, bootimg_errors[vm]);
		break; /* the first corrupted image stops the VM */
	}
	bootimg_checked |= (u32)BIT(vm);
	return !bootimg_errors[vm][0];
}

void bootimg_install(void)
{
	const struct payload_header *h = (const void *)__payload_start;
	u64 len = (u64)(__payload_end - __payload_start);
	const char *err;

	if (len == 0) {
		log_info(
		    "no image payload linked: guest images are expected in the staging window");
		return;
	}
	err = payload_parse(h, len);
	if (err)
		panic("boot-image payload at %lx: %s", (u64)(uintptr_t)h, err);
	bootimg_match(h);
	if (h->count > ARRAY_SIZE(bootimg_entries))
		panic("boot-image payload holds %u images, at most %lu supported", h->count,
		      (u64)ARRAY_SIZE(bootimg_entries));
	bootmem_require("the staged boot images", h->load_pa, h->data_size);
	/* The table lies in memory the data move may overwrite: keep a copy. */
	memcpy(bootimg_entries, payload_entries(h), h->count * sizeof(bootimg_entries[0]));
	bootimg_hdr = *h;
	h = &bootimg_hdr;
	if (h->flags & PAYLOAD_PLACED) {
		/* The boot loader put the data in the staging window and the placed
		 * images in VM memory (the boot ELF): nothing to move. Their
		 * integrity is the loader's; the staged copy is checked before a
		 * reset first reloads from it (bootimg_check_vm). */
		bootimg_is_placed = true;
		log_info("boot images: %u placed by the boot loader (staging %lx, %lu KiB), "
		         "none moved, checked at a VM's first reset",
		         h->count, h->load_pa, h->data_size >> 10);
		return;
	}
	memmove((void *)(uintptr_t)h->load_pa, __payload_start + h->data_offset, h->data_size);
	for (u32 v = 0; v < cfg_system.nvms; v++)
		bootimg_check_vm(v);
	log_info("boot images: %u checked, %lu KiB moved to %lx", h->count, h->data_size >> 10,
	         h->load_pa);
}
