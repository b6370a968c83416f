#ifndef MMUSIM_FAULT_H
#define MMUSIM_FAULT_H
#endif
