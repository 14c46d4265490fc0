/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference on the BPF side lives here, each shim with
 * the change that made it necessary. Nothing is keyed on a version number:
 * CO-RE existence checks pick the variant at load time.
 */
#ifndef MEMPROBE_COMPAT_BPF_H
#define MEMPROBE_COMPAT_BPF_H

#define CGROUP_SUBSYS_COUNT_MAX 16

/* FAULT_FLAG_USER became a member of enum fault_flag in v5.17 ("mm/doc:
 * turn fault flags into an enum"); before, it was the define (1 << 6), which
 * no BTF carries, and it has kept that value. */
static __always_inline unsigned int fault_flag_user(void)
{
	if (bpf_core_enum_value_exists(enum fault_flag, FAULT_FLAG_USER))
		return bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER);
	return 1U << 6;
}

#endif
