// SPDX-License-Identifier: GPL-2.0
/* A process's role from command lines captured from real servers. */
#include "proc_role.h"
#include "unit.h"

static const char *role(const char *cmdline, size_t len)
{
	static char out[MP_ROLE_LEN];

	return mp_proc_role(cmdline, len, out, sizeof(out));
}

#define ROLE(lit) role(lit, sizeof(lit) - 1)

int main(void)
{
	char b[96];

	/* PostgreSQL 15 on Debian 12, /proc/PID/cmdline as ps shows it
	 * (titles padded with spaces over the original argv) */
	CHECK_STR(ROLE("postgres: postgres postgres 127.0.0.1(41234) idle           "), "backend",
		  "a client backend (HOST(PORT))");
	CHECK_STR(ROLE("postgres: app db [local] SELECT"), "backend", "a backend on a socket");
	CHECK_STR(ROLE("postgres: postgres postgres 127.0.0.1(41234) idle in transaction"),
		  "backend", "a backend in a transaction");
	CHECK_STR(ROLE("postgres: checkpointer                     "), "checkpointer",
		  "the checkpointer");
	CHECK_STR(ROLE("postgres: background writer "), "background writer", "bgwriter");
	CHECK_STR(ROLE("postgres: autovacuum worker pgbench"), "autovacuum worker",
		  "two words at most: the database left out");
	CHECK_STR(ROLE("postgres: parallel worker for PID 4242"), "parallel worker",
		  "up to a word that varies");
	/* the postmaster runs its own command line: no title */
	CHECK_STR(ROLE("/usr/lib/postgresql/15/bin/postgres\0-D\0/tmp/pg/data\0"), "",
		  "no title, no role");
	/* nginx, sshd, redis */
	CHECK_STR(ROLE("nginx: worker process"), "worker process", "nginx's workers");
	CHECK_STR(ROLE("nginx: master process /usr/sbin/nginx -g daemon on;"), "master process",
		  "nginx's master, its path left out");
	CHECK_STR(ROLE("sshd: root@pts/0"), "", "a title of a user and a tty: no role");
	CHECK_STR(ROLE("redis-server 127.0.0.1:6379"), "", "redis: no NAME: title");
	CHECK_STR(ROLE("/bin/sh\0-c\0a: b\0"), "", "a path is no title's name");
	CHECK_STR(ROLE(""), "", "empty");

	CHECK_STR(mp_proc_role_plural("backend", 32, b, sizeof(b)), "backends", "plural");
	CHECK_STR(mp_proc_role_plural("worker process", 2, b, sizeof(b)), "worker process",
		  "no s after an s");
	CHECK_STR(mp_proc_group_name("postgres", "backend", 32, 0, b, sizeof(b)),
		  "postgres ×32 (backends)", "a group");
	CHECK_STR(mp_proc_group_name("postgres", "checkpointer", 1, 812, b, sizeof(b)),
		  "postgres[812] (checkpointer)", "one process");
	CHECK_STR(mp_proc_group_name("(other context)", "", 0, 0, b, sizeof(b)),
		  "(other context)", "a context");
	CHECK_STR(mp_proc_group_name_host("postgres", "checkpointer", 1, 812, 40312, b, sizeof(b)),
		  "postgres[812, host 40312] (checkpointer)", "in a pid namespace: the host's pid too");
	CHECK_STR(mp_proc_group_name_host("redis-server", "", 1, 77, 77, b, sizeof(b)),
		  "redis-server[77]", "the same pid: once");
	return unit_done("proc_role");
}
