/*
 * PSS within a set of processes (a container's): each resident page is
 * split among the processes of the set that map it, and only those. The
 * kernel's Pss splits a page among every process on the machine that maps
 * it, so a container's figure would shrink whenever another container runs
 * from the same image layer (same files, same page cache) and grow back
 * when it stops. bench/boot.sh uses this so what it compares is what each
 * container costs on its own, whatever else runs on the host.
 *
 * Usage: cpss PID...   (as root: pagemap's frame numbers need
 *                       CAP_SYS_ADMIN)
 * Prints one line per PID: "PID KIB" (rounded), in the order given. A
 * process that is gone by the time it is read counts 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PRESENT (1ULL << 63)
#define PFN_MASK ((1ULL << 55) - 1)

struct proc { int pid; uint64_t *pfn; size_t n, cap; };

/* Open addressing, frame number + 1 as the key (0 = empty). */
static uint64_t *keys;
static uint32_t *counts;
static size_t slots;
static uint64_t psz;

static void die(const char *what)
{
	perror(what);
	exit(111);
}

static uint32_t *count_of(uint64_t pfn)
{
	size_t i = (size_t)((pfn * 0x9E3779B97F4A7C15ULL) % slots);
	while (keys[i] && keys[i] != pfn + 1)
		i = (i + 1) % slots;
	keys[i] = pfn + 1;
	return &counts[i];
}

static void push(struct proc *p, uint64_t pfn)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4096;
		p->pfn = realloc(p->pfn, p->cap * sizeof *p->pfn);
		if (!p->pfn)
			die("realloc");
	}
	p->pfn[p->n++] = pfn;
}

/* The frames of every resident page P maps, each once per process. */
static void read_proc(struct proc *p)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", p->pid);
	FILE *maps = fopen(path, "re");
	if (!maps)
		return;
	snprintf(path, sizeof path, "/proc/%d/pagemap", p->pid);
	int pm = open(path, O_RDONLY | O_CLOEXEC);
	if (pm < 0) {
		fclose(maps);
		return;
	}
	static uint64_t buf[4096];
	while (fgets(line, sizeof line, maps)) {
		uint64_t start, end;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
			continue;
		if (strstr(line, "[vsyscall]"))
			continue;
		for (uint64_t page = start / psz; page < end / psz;) {
			size_t want = end / psz - page;
			if (want > 4096)
				want = 4096;
			ssize_t got = pread(pm, buf, want * 8, (off_t)(page * 8));
			if (got <= 0)
				break;
			for (size_t i = 0; i < (size_t)got / 8; i++) {
				if (!(buf[i] & PRESENT))
					continue;
				uint64_t pfn = buf[i] & PFN_MASK;
				if (pfn == 0) {
					fprintf(stderr, "cpss: pid %d: frame numbers hidden (not root?)\n", p->pid);
					exit(111);
				}
				push(p, pfn);
			}
			page += (uint64_t)got / 8;
		}
	}
	close(pm);
	fclose(maps);
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long ps = sysconf(_SC_PAGESIZE);
	if (ps <= 0)
		die("sysconf");
	psz = (uint64_t)ps;
	int n = argc - 1;
	struct proc *procs = calloc((size_t)(n > 0 ? n : 1), sizeof *procs);
	if (!procs)
		die("calloc");
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		procs[i].pid = atoi(argv[i + 1]);
		read_proc(&procs[i]);
		/* A frame mapped twice by one process (two mappings of one
		 * file page) is that process's page once. */
		qsort(procs[i].pfn, procs[i].n, sizeof *procs[i].pfn, cmp);
		size_t k = 0;
		for (size_t j = 0; j < procs[i].n; j++)
			if (k == 0 || procs[i].pfn[k - 1] != procs[i].pfn[j])
				procs[i].pfn[k++] = procs[i].pfn[j];
		procs[i].n = k;
		total += k;
	}
	slots = 2 * total + 1;
	keys = calloc(slots, sizeof *keys);
	counts = calloc(slots, sizeof *counts);
	if (!keys || !counts)
		die("calloc");
	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < procs[i].n; j++)
			(*count_of(procs[i].pfn[j]))++;
	for (int i = 0; i < n; i++) {
		double kib = 0;
		for (size_t j = 0; j < procs[i].n; j++)
			kib += (double)psz / 1024 / *count_of(procs[i].pfn[j]);
		printf("%d %.0f\n", procs[i].pid, kib);
	}
	return 0;
}
