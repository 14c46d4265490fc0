/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_REPORT_H
#define MEMPROBE_CMD_REPORT_H

/* `memprobe report FILE [--format F] [-o OUT]`: render a saved document.
 * Returns the process exit status. */
int mp_cmd_report(int argc, char **argv);

#endif
