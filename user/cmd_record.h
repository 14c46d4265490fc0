/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_RECORD_H
#define MEMPROBE_CMD_RECORD_H

/*
 * `memprobe record (--cgroup PATH | --pid PID | [--limit SIZE] -- CMD ...)`:
 * attribute a workload's memory over time. Returns the exit status: the
 * command's own (128+signal when killed) in command mode, 127 when it cannot
 * be found, 0 when watching a cgroup, 2 on bad input, 1 on failure.
 */
int mp_cmd_record(int argc, char **argv);

#endif
