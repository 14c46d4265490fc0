// SPDX-License-Identifier: GPL-2.0
/* A process's role from its command line's title (proc_role.h). */
#include "proc_role.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "[local]" or HOST(PORT): a client's address, as PostgreSQL titles its
 * backends ("USER DB HOST(PORT) STATE") and walsenders. */
static bool is_address(const char *w, size_t n)
{
	size_t i;

	if (n == 7 && !memcmp(w, "[local]", 7))
		return true;
	if (n < 4 || w[n - 1] != ')')
		return false;
	for (i = n - 1; i > 0 && isdigit((unsigned char)w[i - 1]); i--)
		;
	return i > 1 && i < n - 1 && w[i - 1] == '(';
}

/* A word that ends a role: it holds a digit, a path, an address or an
 * option (what varies from one process of a kind to the next). */
static bool ends_role(const char *w, size_t n)
{
	static const char *const stop[] = { "for", "of", "on", "to", "with", "from" };

	if (w[0] == '-')
		return true;
	for (size_t i = 0; i < n; i++)
		if (isdigit((unsigned char)w[i]) || strchr("/@:=()[]", w[i]))
			return true;
	for (size_t i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
		if (strlen(stop[i]) == n && !memcmp(w, stop[i], n))
			return true;
	return false;
}

/* The title after "NAME: " in s (arguments joined by spaces), or NULL. */
static const char *title_of(const char *s)
{
	const char *p = s;

	while (*p && *p != ' ' && *p != '/' && *p != ':')
		p++;
	if (p == s || p[0] != ':' || p[1] != ' ')
		return NULL;
	for (p += 2; *p == ' '; p++)
		;
	return *p ? p : NULL;
}

char *mp_proc_role(const char *cmdline, size_t len, char *out, size_t outlen)
{
	char s[512];
	const char *t, *w;
	size_t n = len < sizeof(s) - 1 ? len : sizeof(s) - 1, words = 0, addr_at = 0;
	bool addr = false;

	out[0] = '\0';
	if (!outlen)
		return out;
	for (size_t i = 0; i < n; i++)
		s[i] = cmdline[i] && cmdline[i] != '\t' && cmdline[i] != '\n' ? cmdline[i] : ' ';
	s[n] = '\0';
	if (!(t = title_of(s)))
		return out;
	/* a client's address among the words: a backend serving it */
	for (w = t; *w;) {
		size_t wl = strcspn(w, " ");

		if (wl && is_address(w, wl)) {
			addr = true;
			addr_at = words;
			break;
		}
		words += wl > 0;
		w += wl;
		w += strspn(w, " ");
	}
	if (addr && addr_at >= 2) {
		snprintf(out, outlen, "backend");
		return out;
	}
	/* else the leading words, up to the first that varies */
	words = 0;
	for (w = t; *w && words < 2;) {
		size_t wl = strcspn(w, " "), have = strlen(out);

		if (!wl || ends_role(w, wl))
			break;
		if (have + (have ? 1 : 0) + wl >= outlen)
			break;
		snprintf(out + have, outlen - have, "%s%.*s", have ? " " : "", (int)wl, w);
		words++;
		w += wl;
		w += strspn(w, " ");
	}
	return out;
}

char *mp_proc_role_read(uint32_t pid, char *out, size_t outlen)
{
	char path[64], buf[512];
	ssize_t n;
	int fd;

	if (outlen)
		out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return out;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? mp_proc_role(buf, (size_t)n, out, outlen) : out;
}

char *mp_proc_role_plural(const char *role, unsigned n, char *out, size_t outlen)
{
	size_t len = strlen(role);

	snprintf(out, outlen, "%s%s", role, n > 1 && len && role[len - 1] != 's' ? "s" : "");
	return out;
}

char *mp_proc_group_name(const char *comm, const char *role, unsigned n, uint32_t pid, char *out,
			 size_t outlen)
{
	return mp_proc_group_name_host(comm, role, n, pid, 0, out, outlen);
}

char *mp_proc_group_name_host(const char *comm, const char *role, unsigned n, uint32_t pid,
			      uint32_t host, char *out, size_t outlen)
{
	char pl[MP_ROLE_LEN + 2], who[64];

	if (pid && host && host != pid)
		snprintf(who, sizeof(who), "%s[%u, host %u]", comm, pid, host);
	else if (pid)
		snprintf(who, sizeof(who), "%s[%u]", comm, pid);
	else if (n > 1)
		snprintf(who, sizeof(who), "%s ×%u", comm, n);
	else
		snprintf(who, sizeof(who), "%s", comm);
	if (role[0])
		snprintf(out, outlen, "%s (%s)", who, mp_proc_role_plural(role, n, pl, sizeof(pl)));
	else
		snprintf(out, outlen, "%s", who);
	return out;
}
