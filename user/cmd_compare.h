/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_COMPARE_H
#define MEMPROBE_CMD_COMPARE_H

/* `memprobe compare A.json [B.json ...] [--format F] [--threshold PCT]
 * [-o OUT]`: reports of one kind side by side. 0, 2 for a report it cannot
 * set beside the others (one line says which and why), 1 when OUT fails. */
int mp_cmd_compare(int argc, char **argv);

#endif
