#ifndef MMUSIM_PERM_H
#define MMUSIM_PERM_H
#endif
