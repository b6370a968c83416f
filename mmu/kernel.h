#ifndef MMUSIM_KERNEL_H
#define MMUSIM_KERNEL_H
#endif
