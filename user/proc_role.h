/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's role, from the title its command line carries. Servers that
 * fork many processes of one name set titles that say what each one does:
 * PostgreSQL's "postgres: checkpointer", "postgres: app db 10.0.0.7(51234)
 * idle"; nginx's "nginx: worker process". A report that groups processes by
 * name says the role beside the count ("postgres x32 (backends)").
 */
#ifndef MEMPROBE_PROC_ROLE_H
#define MEMPROBE_PROC_ROLE_H

#include <stddef.h>
#include <stdint.h>

#define MP_ROLE_LEN 32

/* A process of the target and its role ("" when its command line has no
 * title), read at one moment. */
struct mp_proc_role {
	uint32_t pid;
	char comm[16];
	char role[MP_ROLE_LEN];
};

/*
 * The role in a command line (len bytes of /proc/PID/cmdline, its
 * arguments separated by NULs) written to out: for a title "NAME: TEXT"
 * (setproctitle's convention), "backend" when TEXT names a client's
 * address ("[local]", or HOST(PORT) as PostgreSQL writes it), else TEXT's
 * first words (at most two, up to one holding a digit, a path or an
 * address); "" without a title. Returns out.
 */
char *mp_proc_role(const char *cmdline, size_t len, char *out, size_t outlen);

/* The same from /proc/PID/cmdline; "" when it cannot be read. */
char *mp_proc_role_read(uint32_t pid, char *out, size_t outlen);

/* A role for a count of processes: "backends" for 2 or more "backend"
 * (an s added unless it ends in one), as is for one. Returns out. */
char *mp_proc_role_plural(const char *role, unsigned n, char *out, size_t outlen);

/* A group of processes for people: "postgres[812] (checkpointer)" (one,
 * pid known), "postgres ×32 (backends)", "(other context)" (pid 0, none
 * counted). Returns out. */
char *mp_proc_group_name(const char *comm, const char *role, unsigned n, uint32_t pid, char *out,
			 size_t outlen);

/* The same with the host's pid beside the process's where they differ (a
 * pid namespace): "postgres[812, host 40312] (checkpointer)". */
char *mp_proc_group_name_host(const char *comm, const char *role, unsigned n, uint32_t pid,
			      uint32_t host, char *out, size_t outlen);

#endif
