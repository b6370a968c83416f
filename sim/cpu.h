#ifndef MMUSIM_CPU_H
#define MMUSIM_CPU_H
#endif
