/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_BUDGET_H
#define MEMPROBE_CMD_BUDGET_H

/*
 * `memprobe budget ...`: the probe (probe's options, cmd_probe.h) or a saved
 * probe report (--from FILE), into a budget. Returns the exit status: 0, 2
 * on bad input, 1 on failure or a budget of 0.
 */
int mp_cmd_budget(int argc, char **argv);

#endif
