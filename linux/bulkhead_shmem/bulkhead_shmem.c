// SPDX-License-Identifier: GPL-2.0-only
/*
 * bulkhead_shmem: Linux driver for Bulkhead shared-memory regions and their
 * doorbells. It binds to the generated "bulkhead,shmem" device-tree nodes
 * (memory-region, bulkhead,name, bulkhead,index, interrupts = the doorbell
 * as an edge SPI) and gives each region a misc character device
 * /dev/bhshm-<name>; see bulkhead_shmem.h for what userspace can do.
 * Ringing is the BH_HC_DOORBELL hypercall (HVC, SMCCC), which only the
 * kernel can make. GPL-2.0: it is a Linux module (docs/ipc.md).
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "bulkhead_hv.h"
#include "bulkhead_shmem.h"

struct bhshm {
	struct miscdevice misc;
	phys_addr_t base;
	resource_size_t size;
	u32 index;
	int irq;
	atomic64_t doorbells;
	wait_queue_head_t wait;
};

struct bhshm_file {
	struct bhshm *shm;
	u64 seen;
};

static irqreturn_t bhshm_irq(int irq, void *arg)
{
	struct bhshm *shm = arg;

	atomic64_inc(&shm->doorbells);
	wake_up_interruptible(&shm->wait);
	return IRQ_HANDLED;
}

static long bhshm_ring(struct bhshm *shm)
{
	return bulkhead_doorbell(shm->index); /* after the caller's writes to the region */
}

static int bhshm_open(struct inode *inode, struct file *file)
{
	struct bhshm *shm = container_of(file->private_data, struct bhshm, misc);
	struct bhshm_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->shm = shm;
	file->private_data = f;
	return 0;
}

static int bhshm_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t bhshm_read(struct file *file, char __user *buf, size_t len, loff_t *ppos)
{
	struct bhshm_file *f = file->private_data;
	struct bhshm *shm = f->shm;
	u64 now;
	int ret;

	if (len < sizeof(u64))
		return -EINVAL;
	if (file->f_flags & O_NONBLOCK) {
		if ((u64)atomic64_read(&shm->doorbells) == f->seen)
			return -EAGAIN;
	} else {
		ret = wait_event_interruptible(shm->wait,
		                               (u64)atomic64_read(&shm->doorbells) != f->seen);
		if (ret)
			return ret;
	}
	now = atomic64_read(&shm->doorbells);
	smp_rmb(); /* the region as the peer wrote it before ringing */
	if (copy_to_user(buf, &now, sizeof(now)))
		return -EFAULT;
	f->seen = now;
	return sizeof(now);
}

static ssize_t bhshm_write(struct file *file, const char __user *buf, size_t len, loff_t *ppos)
{
	struct bhshm_file *f = file->private_data;
	long peers;

	if (!len)
		return 0;
	peers = bhshm_ring(f->shm);
	return peers < 0 ? peers : (ssize_t)len;
}

static __poll_t bhshm_poll(struct file *file, poll_table *wait)
{
	struct bhshm_file *f = file->private_data;

	poll_wait(file, &f->shm->wait, wait);
	return (u64)atomic64_read(&f->shm->doorbells) != f->seen ? EPOLLIN | EPOLLRDNORM : 0;
}

static int bhshm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct bhshm_file *f = file->private_data;
	struct bhshm *shm = f->shm;
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long off;

	if (vma->vm_pgoff >= shm->size >> PAGE_SHIFT) /* before shifting: no overflow */
		return -EINVAL;
	off = vma->vm_pgoff << PAGE_SHIFT;
	if (len > shm->size - off)
		return -EINVAL;
	/* Normal cacheable, as the peers map it: the region is RAM. */
	return remap_pfn_range(vma, vma->vm_start, (shm->base + off) >> PAGE_SHIFT, len,
	                       vma->vm_page_prot);
}

static long bhshm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct bhshm_file *f = file->private_data;
	struct bhshm *shm = f->shm;
	struct bhshm_info info;

	switch (cmd) {
	case BHSHM_IOC_RING:
		return bhshm_ring(shm);
	case BHSHM_IOC_INFO:
		memset(&info, 0, sizeof(info));
		info.size = shm->size;
		info.doorbells = atomic64_read(&shm->doorbells);
		info.index = shm->index;
		info.irq = shm->irq > 0;
		return copy_to_user((void __user *)arg, &info, sizeof(info)) ? -EFAULT : 0;
	default:
		return -ENOTTY;
	}
}

static const struct file_operations bhshm_fops = {
	.owner = THIS_MODULE,
	.open = bhshm_open,
	.release = bhshm_release,
	.read = bhshm_read,
	.write = bhshm_write,
	.poll = bhshm_poll,
	.mmap = bhshm_mmap,
	.unlocked_ioctl = bhshm_ioctl,
	.llseek = noop_llseek,
};

static int bhshm_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct resource res;
	struct bhshm *shm;
	const char *name;
	int ret;

	shm = devm_kzalloc(dev, sizeof(*shm), GFP_KERNEL);
	if (!shm)
		return -ENOMEM;
	ret = bulkhead_region(dev, &res);
	if (ret)
		return ret;
	if (of_property_read_u32(dev->of_node, "bulkhead,index", &shm->index))
		return dev_err_probe(dev, -EINVAL, "no bulkhead,index\n");
	if (of_property_read_string(dev->of_node, "bulkhead,name", &name))
		return dev_err_probe(dev, -EINVAL, "no bulkhead,name\n");
	shm->base = res.start;
	shm->size = resource_size(&res);
	atomic64_set(&shm->doorbells, 0);
	init_waitqueue_head(&shm->wait);

	shm->irq = platform_get_irq_optional(pdev, 0);
	if (shm->irq > 0) {
		ret = devm_request_irq(dev, shm->irq, bhshm_irq, 0, dev_name(dev), shm);
		if (ret)
			return dev_err_probe(dev, ret, "doorbell interrupt %d\n", shm->irq);
	} else if (shm->irq != -ENXIO) {
		return shm->irq;
	}

	shm->misc.minor = MISC_DYNAMIC_MINOR;
	shm->misc.name = devm_kasprintf(dev, GFP_KERNEL, "bhshm-%s", name);
	shm->misc.fops = &bhshm_fops;
	shm->misc.parent = dev;
	if (!shm->misc.name)
		return -ENOMEM;
	ret = misc_register(&shm->misc);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, shm);
	dev_info(dev, "/dev/%s: %pa size %pa index %u doorbell %s\n", shm->misc.name, &shm->base,
	         &shm->size, shm->index, shm->irq > 0 ? "yes" : "no");
	return 0;
}

static int bhshm_remove(struct platform_device *pdev)
{
	struct bhshm *shm = platform_get_drvdata(pdev);

	misc_deregister(&shm->misc);
	return 0;
}

static const struct of_device_id bhshm_of_match[] = {
	{ .compatible = "bulkhead,shmem" },
	{},
};
MODULE_DEVICE_TABLE(of, bhshm_of_match);

static struct platform_driver bhshm_driver = {
	.probe = bhshm_probe,
	.remove = bhshm_remove,
	.driver = {
		.name = "bulkhead-shmem",
		.of_match_table = bhshm_of_match,
	},
};
module_platform_driver(bhshm_driver);

MODULE_DESCRIPTION("Bulkhead shared memory and doorbells");
MODULE_LICENSE("GPL");
