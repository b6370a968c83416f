/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The program tests/record-names.sh records: it maps the file it is given
 * and reads it in a named function, hot_loop, called in a loop, so that
 * the recording names the file mapping and run --annotate names hot_loop
 * and this program's object.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define BYTES 16384 /* mapped and read */
#define ROUNDS 20
#define LINE 64

static volatile long sink;

__attribute__((noinline)) long hot_loop(const char *p, long n)
{
  long s = 0;
  for (long i = 0; i < n; i += LINE)
    s += p[i];
  return s;
}

int main(int argc, char **argv)
{
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0)
    return 1;
  char *p = mmap(NULL, BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    return 1;
  for (int k = 0; k < ROUNDS; k++)
    sink += hot_loop(p, BYTES);
  munmap(p, BYTES);
  close(fd);
  return 0;
}
