/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_CMD_REPORT_H
#define MEMPROBE_CMD_REPORT_H

/* `memprobe report FILE [--format text|json] [-o OUT]`: render a saved
 * document. Returns the exit status: 0, 2 for a file that is not a
 * document memprobe can read (one line says why), 1 when OUT fails. */
int mp_cmd_report(int argc, char **argv);

#endif
