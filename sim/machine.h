#ifndef MMUSIM_MACHINE_H
#define MMUSIM_MACHINE_H
#endif
