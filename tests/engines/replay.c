// SPDX-License-Identifier: GPL-2.0
/*
 * replay - run fuzz_engines' LLVMFuzzerTestOneInput() over the files (or
 * the files in the directories) named on the command line, without
 * libFuzzer: for gcc builds and corpus replay.  A violation abort()s;
 * otherwise prints "N passed" and exits 0.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static unsigned long passed;

static int run_file(const char *path)
{
	unsigned char *buf;
	FILE *f = fopen(path, "rb");
	long len;

	if (!f) {
		perror(path);
		return 1;
	}
	len = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (len < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		fclose(f);
		return 1;
	}
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != (size_t)len) {
		fprintf(stderr, "%s: read failed\n", path);
		free(buf);
		fclose(f);
		return 1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%ld bytes)\n", path, len);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	passed++;
	return 0;
}

static int run_path(const char *path)
{
	struct stat st;
	struct dirent **names;
	int n, i, err = 0;

	if (stat(path, &st)) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return 1;
	}
	for (i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			err |= run_path(sub);
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	int i, err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		err |= run_path(argv[i]);
	printf("%lu passed\n", passed);
	return err;
}
