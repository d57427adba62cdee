/* SPDX-License-Identifier: Apache-2.0 */
/* System-register access and the EL2 register bits Bulkhead uses. */
#ifndef ARCH_SYSREGS_H
#define ARCH_SYSREGS_H

#include "lib/types.h"

/* A system register's encoding, as the handlers of trapped accesses compare
 * it (core/trap/sysreg.c and the front ends it calls). */
#define SYSREG(op0, op1, crn, crm, op2) \
	(((u64)(op0) << 16) | ((u64)(op1) << 12) | ((u64)(crn) << 8) | ((u64)(crm) << 4) | (op2))

/* ISS encoding of a trapped MSR/MRS */
#define ISS_OP0(iss)    (((iss) >> 20) & 3)
#define ISS_OP2(iss)    (((iss) >> 17) & 7)
#define ISS_OP1(iss)    (((iss) >> 14) & 7)
#define ISS_CRN(iss)    (((iss) >> 10) & 0xf)
#define ISS_RT(iss)     ((u32)(((iss) >> 5) & 0x1f))
#define ISS_CRM(iss)    (((iss) >> 1) & 0xf)
#define ISS_READ(iss)   ((iss)&1)
#define ISS_SYSREG(iss) SYSREG(ISS_OP0(iss), ISS_OP1(iss), ISS_CRN(iss), ISS_CRM(iss), ISS_OP2(iss))

#ifdef BULKHEAD_HOST_TEST
/* Host unit tests (tests/host) compile core code natively: system registers
 * and barriers are the test program's fakes. */
u64 host_sysreg_read(const char *reg);
void host_sysreg_write(const char *reg, u64 val);
#define sysreg_read(reg)       host_sysreg_read(#reg)
#define sysreg_write(reg, val) host_sysreg_write(#reg, (u64)(val))
#define isb()                  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define dsb(opt)               __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define dmb(opt)               __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define wfi()                  ((void)0)
#else
#define sysreg_read(reg)                                       \
	({                                                     \
		u64 __v;                                       \
		__asm__ volatile("mrs %0, " #reg : "=r"(__v)); \
		__v;                                           \
	})

#define sysreg_write(reg, val)                                                \
	do {                                                                  \
		u64 __w = (u64)(val);                                         \
		__asm__ volatile("msr " #reg ", %0" : : "r"(__w) : "memory"); \
	} while (0)

#define isb()    __asm__ volatile("isb" ::: "memory")
#define dsb(opt) __asm__ volatile("dsb " #opt ::: "memory")
#define dmb(opt) __asm__ volatile("dmb " #opt ::: "memory")
#define wfi()    __asm__ volatile("wfi" ::: "memory")
#endif

/* HCR_EL2 */
#define HCR_VM     BIT(0)
#define HCR_SWIO   BIT(1)
#define HCR_FMO    BIT(3)
#define HCR_IMO    BIT(4)
#define HCR_AMO    BIT(5)
#define HCR_VI     BIT(7)
#define HCR_VSE    BIT(8)
#define HCR_FB     BIT(9)
#define HCR_BSU_IS (1ull << 10)
#define HCR_TWI    BIT(13)
#define HCR_TWE    BIT(14)
#define HCR_TSC    BIT(19)
#define HCR_TIDCP  BIT(20)
#define HCR_TACR   BIT(21)
#define HCR_TSW    BIT(22)
#define HCR_RW     BIT(31)

/* SCTLR_EL2 */
#define SCTLR_EL2_RES1 0x30c50830ull
#define SCTLR_M        BIT(0)
#define SCTLR_A        BIT(1)
#define SCTLR_C        BIT(2)
#define SCTLR_SA       BIT(3)
#define SCTLR_I        BIT(12)

/* SCTLR_EL1 reset value for a vCPU: RES1 bits, MMU and caches off */
#define SCTLR_EL1_RESET 0x30d00800ull

/* SPSR / PSTATE */
#define PSR_MODE_MASK 0xfull
#define PSR_MODE_EL0t 0x0ull
#define PSR_MODE_EL1t 0x4ull
#define PSR_MODE_EL1h 0x5ull
#define PSR_DAIF      (0xfull << 6)
#define PSR_EL1h_DAIF (PSR_MODE_EL1h | PSR_DAIF)

/* ESR_ELx */
#define ESR_EC_SHIFT 26
#define ESR_EC(esr)  (((esr) >> ESR_EC_SHIFT) & 0x3f)
#define ESR_IL       BIT(25)
#define ESR_ISS(esr) ((esr)&0x1ffffff)
#define EC_UNKNOWN   0x00
#define EC_WFX       0x01
#define EC_HVC64     0x16
#define EC_SMC64     0x17
#define EC_SYSREG    0x18
#define EC_IABT_LOW  0x20
#define EC_IABT_CUR  0x21
#define EC_DABT_LOW  0x24
#define EC_DABT_CUR  0x25
#define EC_SERROR    0x2f

/* Data abort ISS */
#define DABT_ISV      BIT(24)
#define DABT_SAS(iss) (((iss) >> 22) & 3)
#define DABT_SSE      BIT(21)
#define DABT_SRT(iss) (((iss) >> 16) & 0x1f)
#define DABT_SF       BIT(15)
#define DABT_S1PTW    BIT(7)
#define DABT_WNR      BIT(6)

/* MDCR_EL2 */
#define MDCR_HPMN_MASK 0x1full
#define MDCR_TPMCR     BIT(5)
#define MDCR_TPM       BIT(6)
#define MDCR_HPME      BIT(7)

/* CNTHCTL_EL2 (E2H = 0) */
#define CNTHCTL_EL1PCTEN BIT(0)
#define CNTHCTL_EL1PCEN  BIT(1)

static inline u64 arch_counter(void)
{
	isb();
	return sysreg_read(cntpct_el0);
}

static inline u64 arch_counter_freq(void)
{
	return sysreg_read(cntfrq_el0);
}

#endif
