/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record-mappings.c - the program tests/record-mappings.sh records: it maps
 * a file, maps anonymous memory, changes protection and advice, moves the
 * break and unmaps, and prints what it did for the test to find in the
 * recording's records.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define FILE_BYTES (64 * 1024)
#define ANON_BYTES (4 * 1024 * 1024)
#define BRK_GROWTH (256 * 1024)

int main(int argc, char **argv)
{
  if (argc != 2)
    return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0)
    return 1;
  volatile const char *f = mmap(NULL, FILE_BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
  char *a = mmap(NULL, ANON_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (f == MAP_FAILED || a == MAP_FAILED)
    return 1;
  unsigned sum = 0;
  for (unsigned i = 0; i < FILE_BYTES; i += 4096)
    sum += (unsigned char)f[i];
  for (unsigned i = 0; i < ANON_BYTES; i += 4096)
    a[i] = (char)i;
  mprotect(a, 4096, PROT_READ);
  madvise(a, 2 * 1024 * 1024, MADV_HUGEPAGE);
  char *old = sbrk(0);
  sbrk(BRK_GROWTH);
  old[0] = 1;
  char *now = sbrk(0);
  munmap(a, ANON_BYTES);
  munmap((void *)f, FILE_BYTES);
  close(fd);
  printf("file %p\nanon %p\nbrk %p %p\nsum %u\n", (void *)f, (void *)a, (void *)old, (void *)now, sum);
  return 0;
}
