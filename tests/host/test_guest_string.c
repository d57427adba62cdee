/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the guests' memset and memcpy (guests/lib/string.c,
 * built renamed beside the host's own, tests/test_host_c.py DEFINES): the
 * hypervisor's test (test_string.c), every alignment of destination and
 * source apart and length, against a byte-by-byte reference. */
#define TEST_NAME "test_guest_string"
#include "test_string.c"
