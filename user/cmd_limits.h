/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_LIMITS_H
#define MEMPROBE_CMD_LIMITS_H

/* `memprobe limits ...`: returns the process exit status. */
int mp_cmd_limits(int argc, char **argv);

#endif
