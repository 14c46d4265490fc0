// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs on the tracepoints memprobe uses: their run time per event
 * (with BPF run-time stats on) is the floor any program on that tracepoint
 * pays, which bench/bpfstats subtracts from memprobe's programs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/page_fault_user")
int BPF_PROG(empty_page_fault_user) { return 0; }

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(empty_mm_page_alloc) { return 0; }

SEC("tp_btf/mm_page_free")
int BPF_PROG(empty_mm_page_free) { return 0; }

SEC("tp_btf/mod_memcg_state")
int BPF_PROG(empty_mod_memcg_state) { return 0; }

SEC("tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(empty_mod_memcg_lruvec_state) { return 0; }
