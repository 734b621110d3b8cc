/*
 * The floor of a no-op apply's check on disk: one lstat per managed entry
 * and nothing else. Reads paths relative to DIR from stdin (one a line),
 * then lstats each from an open DIR, the paths shared across the CPUs. No
 * sources read, no digest, no output but a count. bench/apply.sh times it
 * beside the warm apply (process start included, like the apply's), so
 * what is left above the bare system calls is measured, not guessed.
 *
 * Usage: statwalk DIR <PATHS   (prints the number of entries found)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char **paths;
static long npaths;
static int dir, nthreads;

/* Threads claim 64 entries at a time (a few slots: entries of one slot
 * stay on one thread) until none are left, so a thread that started late
 * or shares a CPU still finishes with the others. */
static long next;

static void *walk(void *arg)
{
	long found = 0;
	struct stat st;
	(void)arg;
	for (;;) {
		long from = __atomic_fetch_add(&next, 64, __ATOMIC_RELAXED);
		if (from >= npaths)
			break;
		long to = from + 64 < npaths ? from + 64 : npaths;
		for (long i = from; i < to; i++)
			if (fstatat(dir, paths[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
				found++;
	}
	return (void *)found;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: statwalk DIR <PATHS\n", stderr);
		return 100;
	}
	dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		perror("statwalk: open");
		return 111;
	}
	long cap = 1024;
	paths = malloc(cap * sizeof *paths);
	char *line = NULL;
	size_t len = 0;
	ssize_t n;
	while (paths && (n = getline(&line, &len, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = 0;
		if (npaths == cap)
			paths = realloc(paths, (cap *= 2) * sizeof *paths);
		if (paths)
			paths[npaths++] = strdup(line);
	}
	if (!paths) {
		fputs("statwalk: out of memory\n", stderr);
		return 111;
	}
	/* A thread per CPU besides this one, as svkit-reconcile does. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	nthreads = 1 + (cpus < 1 ? 1 : cpus > 7 ? 7 : (int)cpus);
	pthread_t th[8];
	for (long i = 1; i < nthreads; i++)
		if (pthread_create(&th[i], 0, walk, (void *)i)) {
			perror("statwalk: pthread_create");
			return 111;
		}
	long found = (long)walk((void *)0);
	for (long i = 1; i < nthreads; i++) {
		void *r;
		pthread_join(th[i], &r);
		found += (long)r;
	}
	printf("%ld\n", found);
	return 0;
}
