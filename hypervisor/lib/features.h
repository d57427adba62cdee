/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What this build contains (docs/ARCHITECTURE.md "Build flow"): the
 * mechanisms' features (their descriptors in bulkhead/config/ name them)
 * and the SMMU drivers (SMMUV3, SMMU500). The generated features.h
 * (`bulkhead build`: build/<system>/features.h; a plain make: every
 * mechanism) defines BULKHEAD_FEATURE_<X> as 0 or 1 for each and the
 * Makefile includes it before every source file.
 *
 * IS_ENABLED(X) is the one way to ask: in `if (IS_ENABLED(X) && ...)` where
 * the code left out still compiles (the compiler drops it), in
 * `#if IS_ENABLED(X)` where its declarations are not built. A name that is
 * not a feature is an error either way (an undeclared identifier; -Wundef).
 */
#ifndef LIB_FEATURES_H
#define LIB_FEATURES_H

#ifndef BULKHEAD_FEATURES_H
#error "built without the generated features.h (hypervisor/Makefile FEATURES_MK, lib/features.h)"
#endif

#define IS_ENABLED(x) (BULKHEAD_FEATURE_##x)

/* A platform quirk, not a mechanism: the make defines it from the platform
 * file (hypervisor/Makefile GIC_VIRQ; core/vgic/vgic_v3_virq.h), 0 elsewhere
 * (a host test). */
#ifndef BULKHEAD_FEATURE_SOFT_VIRQ
#define BULKHEAD_FEATURE_SOFT_VIRQ 0
#endif

#endif
