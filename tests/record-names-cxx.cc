// SPDX-License-Identifier: GPL-2.0-or-later
// The C++ program tests/record-names.sh records: a function template in a
// namespace, whose symbol is mangled (_ZN5names8hot_loopIcEElPKT_l), so
// that run --annotate shows the name demangled, names::hot_loop<char>(char
// const*, long), and as the binary spells it with --no-demangle.  It uses
// no C++ library: the recording stays as short as the C program's.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace names {

constexpr long bytes = 16384; // mapped and read
constexpr int rounds = 20;
constexpr long line = 64;

volatile long sink;

template <typename T> __attribute__((noinline)) long hot_loop(const T *p, long n)
{
  long s = 0;
  for (long i = 0; i < n; i += line)
    s += p[i];
  return s;
}

} // namespace names

int main(int argc, char **argv)
{
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0)
    return 1;
  void *m = mmap(nullptr, names::bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED)
    return 1;
  const char *p = static_cast<const char *>(m);
  for (int k = 0; k < names::rounds; k++)
    names::sink += names::hot_loop(p, names::bytes);
  munmap(m, names::bytes);
  close(fd);
  return 0;
}
