#ifndef MMUSIM_PGTABLE_H
#define MMUSIM_PGTABLE_H
#endif
