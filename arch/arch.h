#ifndef MMUSIM_ARCH_H
#define MMUSIM_ARCH_H
#endif
