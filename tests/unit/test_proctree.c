// SPDX-License-Identifier: GPL-2.0
/*
 * The command's process tree (proctree.c) on the live /proc: a child that
 * forks a grandchild from its main thread and another from a second
 * thread (the kernel lists a thread's children in that thread's own
 * children file), found by the children files and by every process's
 * parent alike; memprobe's own parent never.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "proctree.h"

static int g_pipe[2];

/* A grandchild: waits for its parent's pipe to close, reports its pid. */
static void spawn(void)
{
	pid_t g = fork();


	if (g == 0) {
		close(g_pipe[0]);
		pid_t me = getpid();
		if (write(g_pipe[1], &me, sizeof(me)) != sizeof(me))
			_exit(1);
		pause();
		_exit(0);
	}
}

static void *thread_spawn(void *arg)
{
	(void)arg;
	spawn();
	pause(); /* the thread stays: its children file lists the grandchild */
	return NULL;
}

int main(void)
{
	struct mp_pidset by_children = { 0 }, by_parent = { 0 };
	pid_t child, got[2];
	pthread_t t;

	if (pipe(g_pipe))
		return 1;
	child = fork();
	if (child == 0) {
		spawn();
		if (pthread_create(&t, NULL, thread_spawn, NULL) == 0)
			pause();
		_exit(0);
	}
	for (int i = 0; i < 2; i++)
		CHECK(read(g_pipe[0], &got[i], sizeof(got[i])) == sizeof(got[i]), "grandchild %d", i);
	CHECK(mp_proc_tree("", child, &by_children) == 3, "three new: the child, two grandchildren");
	CHECK(mp_proc_tree_by_parent("", child, &by_parent) == 3, "three by parent");
	for (int i = 0; i < 2; i++) {
		CHECK(mp_pidset_has(&by_children, got[i]), "grandchild %d by children", (int)got[i]);
		CHECK(mp_pidset_has(&by_parent, got[i]), "grandchild %d by parent", (int)got[i]);
	}
	CHECK(mp_pidset_has(&by_children, child), "the child itself");
	CHECK(!mp_pidset_has(&by_children, getpid()), "not the caller");
	CHECK(mp_proc_tree("", child, &by_children) == 0, "seen again: nothing new");
	CHECK(mp_proc_tree("", 0x3fffffff, &by_children) == -ESRCH, "no such process");
	kill(got[0], SIGKILL);
	kill(got[1], SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	mp_pidset_free(&by_children);
	mp_pidset_free(&by_parent);
	return unit_done("proctree");
}
